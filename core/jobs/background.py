"""The app's own worker, kept warm, so a single machine (`make demo`) needs no extra command and a job
queued starts at once.

The web server runs no model itself. When it starts (serve.py's lifespan calls `keep_warm`), it starts
``python -m core worker`` as a child process on the server's database, which imports every job's modules
while it waits (core.jobs.kinds.warm_up) and stays as long as the server: it stops when the server is gone,
never for idling. The server rings it (a byte on the child's standard input, core.jobs.worker.Bell) on every
page run and API call that may have queued a job (`ensure_worker`), so the job is claimed at once rather
than at the next poll, and starts another if it died. A process that kept none warm (`streamlit run app.py`,
the app's tests) starts one only when jobs wait, which stops after IDLE_EXIT_S without a job. A job that waits
while the app's worker is busy (a short preparation queued behind a long one) gets a worker of its own, up to
APP_WORKERS at once, which stops after IDLE_EXIT_S without a job.
$ACTIVEGRADE_APP_WORKER=0 turns it off, for deployments whose workers run apart (GPU machines, several app
replicas): see docs/workers.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from core import config
from core.store import Store
from core.store import jobs as job_table

IDLE_EXIT_S = 30.0

APP_WORKERS = 2
"""Workers the app runs at once for a database: the one kept warm (or started for waiting jobs), and one
more while a job waits behind a busy one."""

BUSY_AFTER_S = 2.0
"""A job claimable this long with the app's worker alive says that worker is busy: a rung idle worker claims
a job within milliseconds (benchmarks/job_start.md)."""

_children: dict[str, list[subprocess.Popen]] = {}
"""The app's workers for each database, by URL: the first kept warm where the database is in `_warm`."""
_warm: set[str] = set()
"""The databases whose worker this process keeps running (`keep_warm`), by URL."""
_looked: dict[str, float] = {}
"""When this process last read how long a job has waited (`_look_due`), by database URL (time.monotonic)."""
_lock = threading.Lock()


def app_worker_enabled() -> bool:
    """True unless $ACTIVEGRADE_APP_WORKER is 0 (core.config)."""
    return config.config().app_worker


def keep_warm(store: Store) -> bool:
    """Start the app's worker for this database now, before any job, and from now on keep one running
    (`ensure_worker` starts another if it dies); True when one runs."""
    if not app_worker_enabled():
        return False
    with _lock:
        _warm.add(str(store.engine.url))
    return ensure_worker(store)


def ensure_worker(store: Store) -> bool:
    """Ring the app's workers for this database, or start one when none of ours runs and either it is kept
    warm or jobs wait, or one more (up to APP_WORKERS) when a job has waited BUSY_AFTER_S while ours run;
    True when one runs."""
    if not app_worker_enabled():
        return False
    key = str(store.engine.url)
    with _lock:
        alive = [child for child in _children.get(key, []) if child.poll() is None]
        for child in alive:
            _ring(child)
        if alive:
            wait = job_table.longest_wait(store) if len(alive) < APP_WORKERS and _look_due(key) else None
            if wait is not None and wait >= BUSY_AFTER_S:  # ours are busy: this job need not wait for them
                alive.append(_spawn(store, warm=False))
        elif key in _warm or job_table.pending(store):
            alive = [_spawn(store, warm=key in _warm)]
        _children[key] = alive
        return bool(alive)


def _look_due(key: str) -> bool:
    """Whether the jobs' wait is to be read now: at most once every BUSY_AFTER_S, for every page run and press
    calls `ensure_worker` (a query each, about 1 ms on SQLite, beside the grade's own 2 ms of server work:
    benchmarks/grading_latency.md), and a job waiting behind a busy worker gets its own within 2 BUSY_AFTER_S."""
    now = time.monotonic()
    if now - _looked.get(key, -BUSY_AFTER_S) < BUSY_AFTER_S:
        return False
    _looked[key] = now
    return True


def _ring(child: subprocess.Popen) -> None:
    """Wake the worker: a byte on its standard input. A full pipe already holds rings it has not read (it is
    busy with a job), and a broken one means it has just exited (the next call starts another)."""
    try:
        os.write(child.stdin.fileno(), b"\n")
    except (BlockingIOError, BrokenPipeError):
        pass


def _spawn(store: Store, warm: bool) -> subprocess.Popen:
    """The worker in its own Python process (the URL in its environment, never on the command line,
    where other users could read a password): warmed up and without an idle exit when kept warm. Its
    standard input is the bell, written without blocking the server."""
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        config.DB_URL: store.engine.url.render_as_string(hide_password=False),
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
    }
    lifetime = ["--warm-up"] if warm else ["--idle-exit", str(IDLE_EXIT_S)]
    command = [sys.executable, "-m", "core", "worker", "--wake-on-stdin", "--parent-pid", str(os.getpid()), *lifetime]
    child = subprocess.Popen(command, env=env, stdin=subprocess.PIPE)
    os.set_blocking(child.stdin.fileno(), False)
    return child
