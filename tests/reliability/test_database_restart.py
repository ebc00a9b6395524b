"""PostgreSQL stopped mid-grading and started again: the grade given while it is down is reported as not
saved (never silently lost, never a traceback), every grade saved before is still there, and grading goes
on once the server is back, through the same Store and its connection pool.

The test runs its own throw-away PostgreSQL cluster (scripts/postgres.sh with a port and folder of its
own), so stopping it disturbs no other test."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import NotSaved
from core.scales import BINARY
from core.services import reservations
from core.store import Store
from core.testing.waiting import until
from tests.pg_schema import PG_URL_ENV

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _postgres(action: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "postgres.sh"), action], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def own_server(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    """A private PostgreSQL cluster on a free port: (its URL, the environment that starts and stops it)."""
    if not os.environ.get(PG_URL_ENV):
        pytest.skip(f"{PG_URL_ENV} is not set (scripts/test.sh starts PostgreSQL)")
    folder = Path("/tmp") / f"activegrade-pg-restart-{os.getpid()}"  # owned by the postgres user when root
    env = {**os.environ, "ACTIVEGRADE_PG_PORT": str(_free_port()), "ACTIVEGRADE_PG_DIR": str(folder)}
    try:
        yield _postgres("start", env), env
    finally:
        _postgres("stop", env)
        shutil.rmtree(folder, ignore_errors=True)


def _grade_until_saved(store: Store, pid: int, position: int, deadline_s: float = 60) -> None:
    """Press again, as the grader is told to, until the restarted server takes the grade."""

    def saved() -> bool:
        try:
            reservations.submit(store, pid, position, BINARY, "Correct", "ann")
        except NotSaved:
            return False
        return True

    until(saved, timeout=deadline_s, what="the restarted server to take the grade", every=0.2)


def test_a_grade_while_postgresql_is_down_is_not_saved_and_grading_resumes_after_a_restart(own_server):
    url, env = own_server
    store = Store.open(url)
    pid = store.create_project("restart", {}, {"pool": ("pool.jsonl", b"{}\n")})
    for position in range(5):
        reservations.submit(store, pid, position, BINARY, "Correct", "ann")
    before = store.grades(pid)

    _postgres("stop", env)
    with pytest.raises(NotSaved, match="not saved.*press again") as refused:
        reservations.submit(store, pid, 5, BINARY, "Incorrect", "ann")
    assert "postgres@" not in str(refused.value) and "Traceback" not in str(refused.value)

    _postgres("start", env)
    _grade_until_saved(store, pid, 5)
    after = store.grades(pid)
    assert after.head(len(before))[["position", "value"]].equals(before[["position", "value"]])
    assert sorted(store.graded_positions(pid)) == [0, 1, 2, 3, 4, 5]
    assert store.graded_positions(pid)[5] == 1.0  # the refused "Incorrect" left nothing behind
    store.engine.dispose()
