"""Waiting on a condition, never a fixed time: poll until it holds, fail at a deadline that only ends a stuck wait.

Tests and benchmarks use it for what has no event to wait on (a status in the database, a server's health check):
``until(lambda: ..., timeout=120, what="the project to be prepared")``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from core.store import Store

T = TypeVar("T")
POLL_S = 0.1  # how often the condition is checked; only the time of noticing it, never what is checked


def until(condition: Callable[[], T], *, timeout: float, what: str, every: float = POLL_S) -> T:
    """The first truthy value of ``condition()``, checked every ``every`` seconds; TimeoutError naming ``what``
    once ``timeout`` seconds have passed without one."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        time.sleep(every)


def prepared(store: Store, project_id: int, timeout: float = 120) -> str:
    """Wait until the project's preparation job has written its outcome (its status left "preparing"); that status."""
    return until(
        lambda: (status := store.project(project_id).status) != "preparing" and status,
        timeout=timeout,
        what=f"project {project_id} to leave 'preparing'",
    )
