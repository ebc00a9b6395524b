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

    def handler() -> None:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with guard:
            running -= 1

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(3 * API_THREADS):
                group.start_soon(in_thread, handler)

    anyio.run(main)
    assert most == API_THREADS
