"""Start the app with `streamlit run` on a free port, and the Chromium settings every browser check uses.

Shared by the end-to-end tests and benchmarks/grading_latency.py.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The app served by Streamlit in a subprocess."""

    def __init__(self, db_url: str, demo_dir: Path, log: Path) -> None:
        self.db_url = db_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "ACTIVEGRADE_DB_URL": db_url, "ACTIVEGRADE_DEMO_DIR": str(demo_dir),
               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self._log = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as response:
                    if response.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"streamlit did not start: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        """Terminate the server (idempotent)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._log.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()


# The grade page names each grade button's container `st-key-grade-<position>-<label>`
# (Streamlit adds `st-key-<key>` to keyed widgets), so a browser can tell when the
# next item's buttons are in place: a key pressed before that is dropped on purpose.
GRADE_BUTTONS = """() => {
  const box = document.querySelector('[class*="st-key-grade-"]');
  if (box === null || box.querySelector('button:disabled') !== null) return null;
  return [...box.classList].find(c => c.startsWith('st-key-grade-')).split('-')[3];
}"""
NEXT_ITEM_READY = """(previous) => { const now = (%s)(); return now !== null && now !== previous; }""" % GRADE_BUTTONS


def shown_position(page) -> str | None:
    """Position of the item whose grade buttons are on the grade page (None while none are ready)."""
    return page.evaluate(GRADE_BUTTONS)


def press_grade_key(page, key: str, timeout_ms: int = 30_000, retry_after_ms: int = 8_000) -> int:
    """Press a grade shortcut and wait until the next item's grade buttons are ready.

    Returns how many presses it took: a press that lands while the page is
    between items is dropped by design, so after ``retry_after_ms`` with the
    same item on screen the key is pressed again, as a person would.
    """
    previous = shown_position(page)
    page.keyboard.press(key)
    try:
        page.wait_for_function(NEXT_ITEM_READY, arg=previous, polling="raf", timeout=retry_after_ms)
        return 1
    except Exception:  # noqa: BLE001 - playwright's TimeoutError
        if shown_position(page) != previous:
            return 1
    page.keyboard.press(key)
    page.wait_for_function(NEXT_ITEM_READY, arg=previous, polling="raf", timeout=timeout_ms)
    return 2
