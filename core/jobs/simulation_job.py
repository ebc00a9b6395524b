"""Simulations in the background: `core.stats.simulate.simulate` runs in a worker thread, so the page that asked
stays responsive and the result waits for whoever comes back to it (a rerun, another page, another tab on
the same server). The simulator's work is numpy's, which releases the interpreter lock.

One worker per server: runs queue up behind each other rather than compete for the CPUs.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from core.stats.simulate import simulate

_executor: ThreadPoolExecutor | None = None
_runs: dict[str, Future] = {}
_lock = threading.Lock()


def start(key: str, **arguments: Any) -> Future:
    """Start ``simulate(**arguments)`` as the run named ``key``; while one of that name still runs, that one."""
    global _executor
    with _lock:
        running = _runs.get(key)
        if running is not None and not running.done():
            return running
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="simulation")
        _runs[key] = _executor.submit(simulate, **arguments)
        return _runs[key]


def run_of(key: str) -> Future | None:
    """The latest run named ``key`` (running or finished), or None."""
    with _lock:
        return _runs.get(key)
