"""The database as the app holds it: the Store to open, the project rows its pages show, the app's own worker.

The pages never import core.store or core.jobs (tests/test_architecture.py); they open the Store here, pass it
to the services, and start the app's worker (core.jobs.background) when a job they queued waits.
"""

from __future__ import annotations

from core.jobs import background
from core.store import ProjectInfo, Store, database_url
from core.store.engine import describe_failure

__all__ = ["ProjectInfo", "Store", "database_url", "describe_failure", "ensure_worker", "open_store"]


def open_store(url: str) -> Store:
    """The Store at ``url``, its schema brought up to date (core.store.Store.open)."""
    return Store.open(url)


def ensure_worker(store: Store) -> None:
    """Start the app's own worker process when jobs wait (core.jobs.background; off with $ACTIVEGRADE_APP_WORKER=0)."""
    background.ensure_worker(store)
