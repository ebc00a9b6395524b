"""The server's CPU while graders look at their cards and press nothing: 10 grading tabs open, idle.

The app is served as `make demo` serves it (serve.py, with the repository's .streamlit/config.toml: the file
watcher off, no full collection per rerun) on the 10,000-item benchmark project. Chromium opens TABS tabs on
the Grade page and TABS on the fast grading page (/grade-fast), each as its own grader, and waits until every
card is shown; then the CPU time (user + system, every thread, /proc) of the server process and of its children
(the app's own worker, kept warm) is read over IDLE_S seconds in which nobody presses anything. The goal (issue
28): under 1% of a core in total with 10 grading tabs.

Writes benchmarks/idle_cpu.md. Run: python -m benchmarks.idle_cpu (needs Chromium at /usr/bin/chromium).
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.api_latency import cpu_s
from benchmarks.grading_latency import N_ITEMS, benchmark_project
from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, ITEM_SHOWN, ROOT, TIMEOUT_MS, Server

TABS = 10
IDLE_S = 60.0
OUT = ROOT / "benchmarks" / "idle_cpu.md"
PAGES = {
    "Grade page": "/grade?project={pid}&grader={grader}",
    "fast grading page": "/grade-fast?project={pid}&grader={grader}",
}
FAST_SHOWN = "() => { const c = document.getElementById('card'); return c && c.dataset.state === 'ready'; }"
"""The fast page's card is shown and pressable (core.api.fast: ``#card``'s ``data-state``)."""


def app_cpu_s(server: Server) -> float:
    """CPU seconds of the server and its child processes (the app's worker) so far."""
    return sum(cpu_s(pid) for pid in [server.process.pid, *server.children()])


def idle_share(server: Server, browser, url: str, shown: str) -> float:
    """The CPU of the server and its worker, as a share of one core, over IDLE_S with TABS tabs of ``url``
    open, every card shown."""
    context = browser.new_context()
    pages = []
    for k in range(TABS):
        page = context.new_page()
        page.goto(url.format(grader=f"idle{k}"))
        pages.append(page)
    for page in pages:
        page.wait_for_function(shown, timeout=TIMEOUT_MS)
    time.sleep(5.0)  # the last tab's own requests settle before the idle time is read
    before, start = app_cpu_s(server), time.perf_counter()
    time.sleep(IDLE_S)
    share = (app_cpu_s(server) - before) / (time.perf_counter() - start)
    context.close()
    return share


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        _, url, pid = benchmark_project(folder, "Idle")
        load_before = os.getloadavg()[0]
        shares = {}
        with Server(url, folder, folder / "streamlit.log") as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for name, path in PAGES.items():
                shown = f"() => ({ITEM_SHOWN})() !== null" if name == "Grade page" else FAST_SHOWN
                shares[name] = idle_share(server, browser, server.url + path.replace("{pid}", str(pid)), shown)
            browser.close()
        load_after = os.getloadavg()[0]
    lines = [
        "# Server and worker CPU with grading tabs open and idle",
        "",
        f"`python -m benchmarks.idle_cpu`: serve.py on a {N_ITEMS:,}-item project (SQLite); headless Chromium opens "
        f"{TABS} tabs of a page, each its own grader, waits until every card is shown, and the CPU time (user + system, "
        f"every thread, /proc) of the server process and its children (the app's own worker, kept warm) is read over "
        f"{IDLE_S:.0f} s in which nobody presses a key.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (load average {load_before:.2f} before, "
        f"{load_after:.2f} after), Python {platform.python_version()}.",
        "",
        f"| {TABS} tabs open, idle | server and worker CPU, share of one core | goal (issue 28): under 1% |",
        "|---|---|---|",
        *(f"| {name} | {share:.2%} | {'met' if share < 0.01 else 'not met'} |" for name, share in shares.items()),
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
