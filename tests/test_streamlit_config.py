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
print(json.dumps({name: config.get_option(name) for name in ("server.fileWatcherType", "runner.postScriptGC", "server.maxMessageSize", "runner.magicEnabled")}))
"""


def test_the_file_watcher_and_the_collection_after_every_rerun_are_off():
    result = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    options = json.loads(result.stdout.strip().splitlines()[-1])
    assert options == {
        "server.fileWatcherType": "none",
        "runner.postScriptGC": False,
        "server.maxMessageSize": 50,
        "runner.magicEnabled": False,
    }
