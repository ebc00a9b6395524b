"""The API's handlers run on API_THREADS worker threads of their own (core.api.http.in_thread): never more at once,
the rest waiting their turn, however many requests come together."""

from __future__ import annotations

import threading
import time

import anyio

from core.api.http import API_THREADS, in_thread


def test_at_most_api_threads_handlers_run_at_once():
    running, most = 0, 0
    guard = threading.Lock()
    full = threading.Event()  # API_THREADS handlers running at once: waited on, not timed (a busy machine)

    def handler() -> None:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
            if running == API_THREADS:
                full.set()
        full.wait(30)  # the first API_THREADS wait for each other; were more let in, they would run too
        time.sleep(0.01)
        with guard:
            running -= 1

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(3 * API_THREADS):
                group.start_soon(in_thread, handler)

    anyio.run(main)
    assert most == API_THREADS
