"""Serve the app from a source checkout with `streamlit run` on a free port, and drive its grade page in a
headless browser: the Chromium settings, the grade page's on-screen contract (which element holds the item
shown), and a grade key pressed as a grader presses it.

A smoke test of a checkout or a deployment's database (``Server(url, demo_dir, log)``), used by the
end-to-end tests and benchmarks/grading_latency.py. Streamlit runs in the subprocess only: this module
imports neither Streamlit nor a browser library (``page`` is a Playwright page the caller made).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from core import config
from core.services import grading
from core.testing.waiting import until

ROOT = Path(__file__).resolve().parents[2]  # the checkout: app.py, app_pages/, ui/
STARTUP_S = 120.0  # deadline for the server's health check: a busy machine starts Streamlit slowly
TIMEOUT_MS = 90_000  # deadline for any wait on a page; every wait is on a condition, this only ends a stuck one
PAGE_LINK = ".st-key-page-links a"
"""The sidebar's links to the app's pages (app.py draws them, each naming the project shown)."""
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
    """The app (or another ``script``, e.g. a benchmark's bare app) served by Streamlit in a subprocess."""

    def __init__(self, db_url: str, demo_dir: Path, log: Path, script: str = "serve.py") -> None:
        self.db_url = db_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            config.OPEN_DEMO: "1",  # the open demo unless this process's environment says "0" (real sign-in)
            **os.environ,
            config.DB_URL: db_url,
            config.DEMO_DIR: str(demo_dir),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        self._log = log.open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                script,
                "--server.headless",
                "true",
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
            ],  # the rest (no file watcher, no collection after every rerun) from .streamlit/config.toml, as make demo
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        try:
            until(self._healthy, timeout=STARTUP_S, what="streamlit's health check", every=0.2)
        except (RuntimeError, TimeoutError) as exc:
            self.stop()
            raise RuntimeError(f"{exc}: {log.read_text()[-2000:]}") from exc

    def _healthy(self) -> bool:
        """Whether the server answers its health check; RuntimeError once the process has exited."""
        if self.process.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {self.process.returncode}")
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as response:
                return response.read() == b"ok"
        except OSError:
            return False

    def children(self) -> list[int]:
        """The server's child processes (the app's own worker among them), from /proc: every thread's."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        return [int(child) for task in tasks.iterdir() for child in (task / "children").read_text().split()]

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


# The grading card (ui/grading_card.js) carries the shown item's id in data-ag-item and its state
# (ready, sending, saved, error, note) in data-ag-state; an item is ready once no press is in flight.
ITEM_SHOWN = """() => {
  const card = document.querySelector('.ag-card');
  if (card === null || !card.dataset.agItem || card.dataset.agState === 'sending') return null;
  return 'Item ' + card.dataset.agItem;
}"""
NEXT_ITEM_READY = f"""(previous) => {{ const now = ({ITEM_SHOWN})(); return now !== null && now !== previous; }}"""
# The card's item has been painted (data-ag-shown-at, the browser's performance.now() of that frame) at least
# ``ms`` milliseconds ago, and no press is in flight.
SHOWN_FOR = """(ms) => { const c = document.querySelector('.ag-card');
  return c !== null && c.dataset.agShownAt !== undefined && c.dataset.agState !== 'sending'
    && performance.now() - Number(c.dataset.agShownAt) > ms; }"""
MIN_VIEW_S = grading.MIN_VIEW_S + 0.05  # the grade page ignores grades sooner than this after an item appears


def shown_item(page) -> str | None:
    """'Item <id>' of the item on the grade page (None while none is ready)."""
    return page.evaluate(ITEM_SHOWN)


def shown_for(page, seconds: float, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait (every animation frame) until the card's item has been on screen for ``seconds``, no press in flight."""
    page.wait_for_function(SHOWN_FOR, arg=seconds * 1000, polling="raf", timeout=timeout_ms)


SCRIPT_IDLE = "() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"


def script_idle(page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until the page's script run is over (Streamlit's own mark on its root), so a widget found now is
    the one the run left, not one a rerun is about to replace."""
    page.wait_for_function(SCRIPT_IDLE, timeout=timeout_ms)


def press_grade_key(page, key: str, timeout_ms: int = TIMEOUT_MS) -> float:
    """Press a grade shortcut once the item has been on screen for MIN_VIEW_S, wait until the next
    item is shown with its grade buttons ready (checked every animation frame); returns the
    milliseconds from the key press to that moment.

    The wait before the key is the product's rule, measured on the card: the server times an item
    from its own render, which the browser paints later, so MIN_VIEW_S after the card's own paint
    time is always past the rule, however busy the machine."""
    previous = shown_item(page)
    shown_for(page, MIN_VIEW_S, timeout_ms)
    start = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(NEXT_ITEM_READY, arg=previous, polling="raf", timeout=timeout_ms)
    return (time.perf_counter() - start) * 1000


def graded_project_page(browser, server: Server, project: str, grader: str, viewport=(1400, 1000)):
    """A new project named ``project`` made from tests/data/app's pool and samples and prepared, and its Grade
    page opened in ``browser`` (a Playwright browser) as ``grader`` (the open demo's name field), its first card
    on screen for MIN_VIEW_S: (store, project id, page)."""
    from core.services.project import create_project, start_preparation  # the app's own, as a test makes it
    from core.store import Store

    data = ROOT / "tests" / "data" / "app"
    store = Store.open(server.db_url)
    files = [(n, (data / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, project, *files, start=False)
    start_preparation(store, pid, wait=True)
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.goto(f"{server.url}/grade?project={pid}")
    name = page.get_by_label("Your name (grader)")
    name.fill(grader)
    name.press("Enter")
    shown_for(page, MIN_VIEW_S)
    return store, pid, page
