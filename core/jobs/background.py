"""The app's own worker, so a single machine (`make demo`) needs no extra command.

The web server runs no model itself: when jobs wait, `ensure_worker` starts
``python -m core worker`` as a child process of the server, on the server's database, which stops
when the server is gone or after IDLE_EXIT_S without a job (the next job starts another).
$ACTIVEGRADE_APP_WORKER=0 turns it off, for deployments whose workers run apart (GPU machines,
several app replicas): see docs/workers.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from core import config
from core.store import Store
from core.store import jobs as job_table

IDLE_EXIT_S = 30.0

_children: dict[str, subprocess.Popen] = {}
_lock = threading.Lock()


def app_worker_enabled() -> bool:
    """True unless $ACTIVEGRADE_APP_WORKER is 0 (core.config)."""
    return config.config().app_worker


def ensure_worker(store: Store) -> bool:
    """Start the app's worker for this database when jobs wait and none of ours runs; True when one runs."""
    if not app_worker_enabled():
        return False
    key = str(store.engine.url)
    with _lock:
        child = _children.get(key)
        if child is not None and child.poll() is None:
            return True
        if not job_table.pending(store):
            return False
        _children[key] = _spawn(store)
        return True


def _spawn(store: Store) -> subprocess.Popen:
    """The worker in its own Python process (the URL in its environment, never on the command line,
    where other users could read a password)."""
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        config.DB_URL: store.engine.url.render_as_string(hide_password=False),
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
    }
    command = [
        sys.executable,
        "-m",
        "core",
        "worker",
        "--idle-exit",
        str(IDLE_EXIT_S),
        "--parent-pid",
        str(os.getpid()),
    ]
    return subprocess.Popen(command, env=env)
