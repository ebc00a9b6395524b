"""`python -m core worker`: claim jobs (preparation, its chunks, simulations) from the database and run them.

Run as many as the machines allow, beside the app, on the app's database:

    python -m core worker                          # every job, models on the CPU (or a GPU when one is free)
    python -m core worker --device cuda --only model   # a GPU worker: the model-heavy jobs, fp16, batched
    python -m core worker --only light             # a CPU worker for everything that runs no model

A worker that dies leaves its job to another once its heartbeat is older than --stale-after. The app's own
worker (core.jobs.background) runs with --warm-up --wake-on-stdin --parent-pid: it imports the job modules
(the model libraries where a project needs them) while it waits, wakes when the app writes to its standard
input, and stops when the app is gone.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time

from core import config
from core.cli.projects import add_database_argument
from core.jobs.context import HEARTBEAT_S, MAX_ATTEMPTS, STALE_AFTER_S, WorkerOptions
from core.jobs.kinds import warm_up
from core.jobs.preparation_job import runs_local_model
from core.jobs.worker import Bell, Worker
from core.store import UNREADABLE, Store
from core.store.store import WORKER_FILE_BYTES

logger = logging.getLogger(__name__)

ONLY = {"all": None, "model": True, "light": False}


def keep_hub_offline() -> None:
    """Set the Hugging Face libraries' offline switches in this process (core.config.hub_environment) before a
    job imports them: a worker runs the models an admin's settings name, which must not make the server
    download from the network unless the operator allows it ($ACTIVEGRADE_HUB_DOWNLOADS=1)."""
    os.environ.update(config.hub_environment(config.config()))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_database_argument(parser)
    parser.add_argument("--device", default="auto", help="where models run: auto, cpu, cuda (fp16), cuda:1, mps")
    parser.add_argument("--batch-size", type=int, help="texts or pairs per model call (default: the backend's)")
    parser.add_argument(
        "--only", choices=list(ONLY), default="all", help="take only jobs that run a model, or only those that do not"
    )
    parser.add_argument("--heartbeat", type=float, default=HEARTBEAT_S, help="seconds between heartbeats")
    parser.add_argument(
        "--stale-after", type=float, default=STALE_AFTER_S, help="take over a job whose heartbeat is this old (s)"
    )
    parser.add_argument("--max-attempts", type=int, default=MAX_ATTEMPTS, help="starts of a job before it fails")
    parser.add_argument("--idle-exit", type=float, help="stop after this many seconds without a job")
    parser.add_argument("--parent-pid", type=int, help="stop when this process is gone (the app's own worker)")
    parser.add_argument("--once", action="store_true", help="run the jobs waiting now, then stop")
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="import the job modules at once, not at the first job (the model libraries too where a project needs them)",
    )
    parser.add_argument(
        "--wake-on-stdin",
        action="store_true",
        help="look for jobs at once when a line comes on standard input; stop when it closes (the app's own worker)",
    )


def run(args: argparse.Namespace) -> int:
    keep_hub_offline()
    options = WorkerOptions(
        device=args.device,
        batch_size=args.batch_size,
        uses_model=ONLY[args.only],
        heartbeat_s=args.heartbeat,
        stale_after_s=args.stale_after,
        max_attempts=args.max_attempts,
        idle_exit_s=args.idle_exit,
        parent_pid=args.parent_pid,
    )
    worker = Worker(Store.open(args.db_url, WORKER_FILE_BYTES), options)
    logger.info("worker %s started", worker.name)  # in the log's format (it was a bare line: an operator's review)
    if args.warm_up:
        threading.Thread(target=_warm_up, args=(worker,), daemon=True, name="warm-up").start()
    if args.once:
        worker.run_until_idle()
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.run(stop, Bell(sys.stdin.fileno()) if args.wake_on_stdin else None)
    return 0


def _warm_up(worker: Worker) -> None:
    """The job modules imported beside the worker's first polls (a job claimed meanwhile waits only for what
    it needs); says when, so whoever watches the log knows the worker is warm. The model libraries (about
    0.4 GB resident, seconds of CPU) only for a worker kept for model jobs, or where a project of its database
    prepares with a model here (`models_in_use`): a database of exact or served backends never needs them,
    and a project created later that does imports them in its own job, as its model is loaded."""
    start = time.perf_counter()
    uses_model = worker.options.uses_model
    warm_up(models_in_use(worker.store) if uses_model is None else uses_model)
    logger.info("worker %s warm: job modules imported in %.1f s", worker.name, time.perf_counter() - start)


def models_in_use(store: Store) -> bool:
    """Whether a project of the database prepares with a model on this machine
    (core.jobs.preparation_job.runs_local_model)."""
    return any(runs_local_model(p.settings) for p in store.projects() if p.status != UNREADABLE)
