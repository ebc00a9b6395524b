"""The app's own worker (core.jobs.background), kept warm (issue 28): running before any job is queued, woken at
once by a ring, never stopping for idling while the app lives, gone as soon as the app is, none with
$ACTIVEGRADE_APP_WORKER=0; its warm-up imports what the jobs would import as they run; the served app starts it.

Speed is measured in benchmarks/job_start.py; these tests wait on conditions, with deadlines that only end a
stuck wait.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import config
from core.cli.worker import models_in_use
from core.jobs import background
from core.jobs.context import WorkerOptions
from core.jobs.kinds import JOB_MODULES, MODEL_MODULES
from core.jobs.worker import Bell, Worker
from core.services.project import create_project, run_project_jobs, start_preparation
from core.store import Store
from core.store import jobs as job_table
from core.store.jobs import NewJob
from core.testing.waiting import prepared, until
from tests.test_jobs import recording_kinds

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "app"
DEADLINE_S = 120
IDLE_EXIT_S = 0.5
"""The idle exit for these tests' workers: a worker that stops for idling does so within seconds."""


@pytest.fixture
def store(tmp_path, monkeypatch) -> Iterator[Store]:
    """A SQLite database, the app's worker switched on, a short idle exit; every worker started here killed
    after the test."""
    monkeypatch.setenv(config.APP_WORKER, "1")
    monkeypatch.setattr(background, "IDLE_EXIT_S", IDLE_EXIT_S)
    monkeypatch.setattr(background, "_children", {})
    monkeypatch.setattr(background, "_warm", set())
    monkeypatch.setattr(background, "_looked", {})
    yield Store.open(f"sqlite:///{tmp_path / 'app.db'}")
    for child in (child for children in background._children.values() for child in children):
        child.kill()
        child.wait()


def tiny_preparation(store: Store) -> int:
    """A 40-item project (tests/data/app) queued for preparation; its id."""
    files = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    project_id = create_project(store, "Tiny", *files, start=False)
    assert start_preparation(store, project_id)
    return project_id


def the_worker(store: Store) -> subprocess.Popen:
    (child,) = background._children[str(store.engine.url)]
    return child


def test_a_ring_wakes_a_waiting_worker_and_the_bells_end_stops_it(store):
    runs: list[int] = []
    worker = Worker(store, WorkerOptions(poll_s=3600), kinds=recording_kinds(runs))  # it would poll in an hour
    read, write = os.pipe()
    thread = threading.Thread(target=worker.run, kwargs={"bell": Bell(read)}, daemon=True)
    thread.start()
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    os.write(write, b"\n")
    until(lambda: runs == [job_id], timeout=DEADLINE_S, what="the rung worker to run the job")
    os.close(write)  # the app is gone
    thread.join(DEADLINE_S)
    os.close(read)
    assert not thread.is_alive()


def test_the_kept_warm_worker_runs_before_any_job_and_never_stops_for_idling(store):
    assert background.keep_warm(store)
    worker = the_worker(store)
    assert worker.poll() is None and job_table.jobs(store) == []
    project_id = tiny_preparation(store)
    assert background.ensure_worker(store)  # rings it: the same worker, no second one
    assert prepared(store, project_id, timeout=DEADLINE_S) == "ready"
    assert job_table.jobs(store, project_id)[0].worker.split(":")[1] == str(worker.pid)
    with pytest.raises(subprocess.TimeoutExpired):
        worker.wait(timeout=10 * IDLE_EXIT_S)  # a worker with the idle exit stops within it
    assert the_worker(store) is worker


def test_a_worker_started_for_waiting_jobs_stops_after_the_idle_exit(store):
    assert not background.ensure_worker(store)  # no job waits, the app keeps none warm: none starts
    project_id = tiny_preparation(store)
    assert background.ensure_worker(store)
    assert prepared(store, project_id, timeout=DEADLINE_S) == "ready"
    assert the_worker(store).wait(timeout=DEADLINE_S) == 0


def test_the_warm_worker_exits_when_the_app_dies(store):
    app = (
        "import sys; from core.jobs import background; from core.store import Store\n"
        "store = Store.open(sys.argv[1]); background.keep_warm(store)\n"
        "print(background._children[str(store.engine.url)][0].pid, flush=True); sys.stdin.read()"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(
        [sys.executable, "-c", app, str(store.engine.url)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    worker_pid = int(parent.stdout.readline())
    assert running(worker_pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    until(lambda: not running(worker_pid), timeout=DEADLINE_S, what="the worker to exit after its app")


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (an exited one not yet reaped is a zombie, state Z)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_a_job_waiting_behind_a_busy_worker_gets_a_worker_of_its_own_up_to_the_cap(store, monkeypatch):
    """A short preparation queued behind a long one waited for it: the app's one worker runs a job at a time."""

    class Child:  # a worker that runs for the length of the test
        def __init__(self, warm: bool) -> None:
            self.warm = warm

        def poll(self) -> None:
            return None

        def kill(self) -> None: ...

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(background, "_spawn", lambda store, warm: Child(warm))
    monkeypatch.setattr(background, "_ring", lambda child: None)
    waited: list[float | None] = [None]
    monkeypatch.setattr(job_table, "longest_wait", lambda store: waited[0])
    assert background.keep_warm(store)
    key = str(store.engine.url)
    waited[0] = background.BUSY_AFTER_S / 2  # a job the warm worker is about to claim
    assert background.ensure_worker(store) and [c.warm for c in background._children[key]] == [True]
    waited[0] = background.BUSY_AFTER_S  # it has waited: the warm worker is busy with another
    assert background.ensure_worker(store) and len(background._children[key]) == 1  # read at most every 2 s
    for _ in range(3):
        background._looked.clear()  # as BUSY_AFTER_S later
        assert background.ensure_worker(store)
    assert [c.warm for c in background._children[key]] == [True] + [False] * (background.APP_WORKERS - 1)


def test_the_longest_wait_is_of_a_queued_job_none_has_claimed(store):
    assert job_table.longest_wait(store) is None
    job_table.enqueue(store, NewJob("noop", None, {}))
    assert 0 <= job_table.longest_wait(store) < DEADLINE_S
    assert job_table.claim(store, "elsewhere", stale_before=datetime.now(UTC)) is not None
    assert job_table.longest_wait(store) is None  # running: it waits for no worker


def test_no_worker_with_the_app_worker_off(store, monkeypatch):
    monkeypatch.setenv(config.APP_WORKER, "0")
    tiny_preparation(store)
    assert not background.keep_warm(store)
    assert not background.ensure_worker(store)
    assert background._children == {}


def test_waiting_for_a_preparation_waits_for_the_job_another_worker_claimed_first(store, monkeypatch):
    """start_preparation(wait=True) beside a served app: the app's worker may claim the job first."""
    monkeypatch.setenv(config.APP_WORKER, "0")
    project_id = tiny_preparation(store)
    other = Worker(store, WorkerOptions(project_id=project_id))
    job = other.claim()
    looked = threading.Event()
    run_until_idle = Worker.run_until_idle

    def looking(worker: Worker) -> int:
        ran = run_until_idle(worker)
        looked.set()
        return ran

    monkeypatch.setattr(Worker, "run_until_idle", looking)
    thread = threading.Thread(target=lambda: looked.wait(DEADLINE_S) and other.run_job(job), daemon=True)
    thread.start()  # the other worker runs its job only once this process found nothing to claim
    run_project_jobs(store, project_id)
    assert store.project(project_id).status == "ready"
    thread.join(DEADLINE_S)


def lazy_imports(path: Path) -> set[str]:
    """The modules ``path`` imports inside its functions (``from a.b import c`` imports a.b)."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    found.add(node.module)
    return found


def test_the_warm_up_imports_what_the_jobs_import_as_they_run():
    """Every module the jobs and their backends import inside a function is imported by the warm-up (in a
    fresh interpreter, which has imported nothing yet)."""
    paths = [*(ROOT / "core" / "jobs").glob("*.py"), *(ROOT / "core" / "surrogate").rglob("*.py")]
    lazy = set().union(*(lazy_imports(p) for p in paths)) - {"importlib"}
    script = "import json, sys; from core.jobs.kinds import warm_up; warm_up(); print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    imported = json.loads(
        subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, check=True).stdout
    )
    assert sorted(lazy - set(imported)) == []
    assert set(JOB_MODULES + MODEL_MODULES) <= set(imported)


def test_the_model_libraries_are_warmed_only_where_a_project_prepares_with_a_model_here(store):
    """A database of exact-backend projects never needs torch: the kept-warm worker leaves it out (0.4 GB);
    one project that embeds here brings it in."""
    tiny_preparation(store)  # the exact backend (tests/data/app)
    assert not models_in_use(store)
    files = [(name, (DATA / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    create_project(store, "Embedded", *files, settings={"backend": "embedding"}, start=False)
    assert models_in_use(store)


def test_the_served_app_keeps_its_worker_warm(shared_server):
    """serve.py starts the kept-warm worker with the server (ui/web.py's lifespan), not at a job."""
    commands = [Path(f"/proc/{child}/cmdline").read_text().split("\0") for child in shared_server.children()]
    assert any(c[1:5] == ["-m", "core", "worker", "--wake-on-stdin"] and "--warm-up" in c for c in commands)
