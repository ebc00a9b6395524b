"""The server's configuration as Streamlit itself reads it from .streamlit/config.toml (the folder `make demo`
and the test servers start in): no file watcher and no full garbage collection after every rerun (issue 28), and
a websocket message limit below the default (issue 26), and no "magic" (the docstrings of constants in app.py and
the pages would show on the page).
Read through Streamlit, so a misspelt or retired option, which Streamlit would ignore, fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ = """import json
from streamlit import config
print(json.dumps({name: config.get_option(name) for name in ("server.fileWatcherType", "runner.postScriptGC", "server.maxMessageSize", "runner.magicEnabled", "theme.light.textColor")}))
"""


def test_the_file_watcher_and_the_collection_after_every_rerun_are_off():
    result = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    options = json.loads(result.stdout.strip().splitlines()[-1])
    text = options.pop("theme.light.textColor")
    assert options == {
        "server.fileWatcherType": "none",
        "runner.postScriptGC": False,
        "server.maxMessageSize": 50,
        "runner.magicEnabled": False,
    }
    # captions are the text colour at 60% (Streamlit's fadedText60): at its default #2f2d2b they were 3.9:1 on white
    caption = [0.6 * int(text[i : i + 2], 16) + 0.4 * 255 for i in (1, 3, 5)]
    assert _contrast(caption, [255, 255, 255]) >= 4.5 and _contrast(caption, [248, 248, 247]) >= 4.5  # the sidebar's


def _contrast(fore: list[float], back: list[float]) -> float:
    """WCAG 2's contrast ratio (L1 + 0.05) / (L2 + 0.05) of two sRGB colours (0-255 channels)."""

    def luminance(rgb: list[float]) -> float:
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    high, low = sorted((luminance(fore), luminance(back)), reverse=True)
    return (high + 0.05) / (low + 0.05)
