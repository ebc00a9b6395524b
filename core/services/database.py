"""The database as the app holds it: the Store to open, the project rows its pages show, the app's own worker.

The pages never import core.store or core.jobs (tests/test_architecture.py); they open the Store here, pass it
to the services, keep the app's worker (core.jobs.background) warm from the server's start, and ring it when a
job they queued waits.
"""

from __future__ import annotations

from core.jobs import background
from core.store import UNREADABLE, ProjectInfo, Store, database_url
from core.store.engine import describe_failure

__all__ = [
    "ProjectInfo",
    "Store",
    "UNREADABLE",
    "database_url",
    "describe_failure",
    "ensure_worker",
    "keep_worker_warm",
    "open_store",
]


def open_store(url: str) -> Store:
    """The Store at ``url``, its schema brought up to date (core.store.Store.open)."""
    return Store.open(url)


def ensure_worker(store: Store) -> None:
    """Wake the app's own worker, or start one when jobs wait (core.jobs.background; off with $ACTIVEGRADE_APP_WORKER=0)."""
    background.ensure_worker(store)


def keep_worker_warm(store: Store) -> None:
    """Start the app's own worker now, warm, and keep one running while the server lives (core.jobs.background)."""
    background.keep_warm(store)
