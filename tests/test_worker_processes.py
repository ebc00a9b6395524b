"""Two `python -m core worker` processes on one database, the first SIGKILLed while it holds a job: the
second takes the job over once its heartbeat expires, the preparation completes once, and its items
are exactly those of one worker preparing the pool alone. SQLite, and PostgreSQL when it runs.

The first worker is caught mid-job without any sleep: the test takes the database's write lock
(SQLite: BEGIN IMMEDIATE; PostgreSQL: LOCK TABLE jobs), under it finds a job the worker holds, which
it cannot finish while the lock is held, and kills it there. The first worker starts alone and
the second only after the kill, so the kill always lands in the middle of a chunk.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import text

from core import config
from core.jobs.preparation_job import CHECK, CHUNK, PREPARE
from core.services.project import start_preparation
from core.store import Store
from core.store import jobs as job_table
from core.testing.waiting import prepared
from tests.pg_schema import throwaway_schema_url
from tests.test_jobs import demo_project

ROOT = Path(__file__).resolve().parents[1]
DEADLINE_S = 180


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
        return
    with throwaway_schema_url() as url:
        yield url


def start_worker(url: str) -> subprocess.Popen:
    env = {**os.environ, config.DB_URL: url, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "core", "worker", "--heartbeat", "0.2", "--stale-after", "2", "--idle-exit", "6"]
    return subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.DEVNULL)


@contextmanager
def write_lock(store: Store) -> Iterator[callable]:
    """Hold the database's write lock (jobs then cannot change); yields a reader of the jobs under it."""
    if store.engine.dialect.name == "sqlite":
        connection = sqlite3.connect(store.engine.url.database, timeout=60, isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield lambda: connection.execute("SELECT id, kind, state, worker FROM jobs").fetchall()
        finally:
            connection.execute("ROLLBACK")
            connection.close()
        return
    with store.engine.connect() as connection, connection.begin() as transaction:
        connection.execute(text("LOCK TABLE jobs IN EXCLUSIVE MODE"))
        yield lambda: connection.execute(text("SELECT id, kind, state, worker FROM jobs")).all()
        transaction.rollback()


def kill_holding_a_chunk(store: Store, worker: subprocess.Popen) -> int:
    """SIGKILL ``worker`` while it holds a running chunk of a preparation; returns that job's id."""
    deadline = time.monotonic() + DEADLINE_S
    mark = f":{worker.pid}:"
    while time.monotonic() < deadline:
        assert worker.poll() is None, "the worker exited before it could be killed mid-job"
        with write_lock(store) as rows:
            held = [
                job_id
                for job_id, kind, state, name in rows()
                if kind == CHUNK and state == "running" and mark in (name or "")
            ]
            if held:
                worker.send_signal(signal.SIGKILL)
                worker.wait()
                return held[0]
        time.sleep(0.05)  # polls a condition; the lock is let go so the worker can claim
    raise AssertionError(f"the worker held no job within {DEADLINE_S} s")


def test_a_killed_worker_leaves_its_job_to_another_and_nothing_is_done_twice(url):
    store = Store.open(url)
    reference = demo_project(store, "one worker")
    assert start_preparation(store, reference, wait=True)
    pid = demo_project(store, "two workers")
    assert start_preparation(store, pid, chunk_items=100)
    first = start_worker(url)
    second = None
    try:
        killed = kill_holding_a_chunk(store, first)
        second = start_worker(url)
        prepared(store, pid, timeout=DEADLINE_S)
        assert second.wait(timeout=DEADLINE_S) == 0  # it stops by itself once idle
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    info = store.project(pid)
    assert info.status == "ready", info.error
    prepare = job_table.latest(store, pid, PREPARE)
    check, *chunks = job_table.children(store, prepare.id)
    every = [prepare, check, *chunks]
    assert check.kind == CHECK and len(chunks) == 4 and {j.state for j in every} == {"done"}
    assert [j.payload["start"] for j in chunks] == [0, 100, 200, 300]  # each chunk made once
    taken_over = next(j for j in chunks if j.id == killed)
    assert taken_over.attempts == 2 and f":{second.pid}:" in taken_over.worker
    assert all(j.attempts == 1 for j in [check, *chunks] if j.id != killed)
    pd.testing.assert_frame_equal(store.load_items(reference), store.load_items(pid), check_exact=True)
    store.engine.dispose()
