"""Jobs in the database (core.store.jobs) and the worker (core.jobs.worker), on SQLite and PostgreSQL:
one claim per job among concurrent workers, a stuck job's takeover, retries and failures, and a
preparation split into chunks that gives exactly the unchunked result."""

from __future__ import annotations

import io
import json
import logging
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import update

from core.errors import InputError
from core.jobs.context import Kind, WorkerOptions
from core.jobs.preparation_job import (
    CHECK,
    CHUNK,
    PREPARE,
    enqueue_preparation,
    runs_local_model,
    scores_from_json,
    scores_to_json,
    worker_backend,
)
from core.jobs.worker import Worker
from core.services.preparation import waiting_for_worker
from core.services.project import create_project, start_preparation
from core.settings import ProjectSettings
from core.store import Store
from core.store import jobs as job_table
from core.store.jobs import NewJob
from core.store.models import Job
from core.testing.waiting import until
from tests.pg_schema import throwaway_schema_url

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    if request.param == "sqlite":
        yield Store.open(f"sqlite:///{tmp_path / 'jobs.db'}")
        return
    with throwaway_schema_url() as url:
        store = Store.open(url)
        yield store
        store.engine.dispose()


def later(seconds: float = 1.0) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def earlier(seconds: float = 60.0) -> datetime:
    return datetime.now(UTC) - timedelta(seconds=seconds)


def recording_kinds(runs: list, *, error: Exception | None = None, failures: list | None = None) -> dict[str, Kind]:
    """A 'noop' kind that records each run's job id (and raises ``error`` when given)."""

    def run(context):
        runs.append(context.job.id)
        if error is not None:
            raise error
        return {"ran": context.job.id}

    failures = [] if failures is None else failures
    return {"noop": Kind(run=run, failed=lambda store, job, message: failures.append((job.id, message)))}


def test_concurrent_workers_claim_each_job_once(store):
    ids = [job_table.enqueue(store, NewJob("noop", None, {"n": i})) for i in range(24)]
    runs: list[int] = []
    workers = [Worker(store, name=f"w{i}", kinds=recording_kinds(runs)) for i in range(4)]
    threads = [threading.Thread(target=w.run_until_idle) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(runs) == ids  # every job ran, none twice
    rows = job_table.jobs(store)
    assert {r.state for r in rows} == {"done"} and {r.attempts for r in rows} == {1}
    assert [r.result for r in rows] == [{"ran": i} for i in ids]


def test_a_claim_is_refused_while_another_holds_the_job(store):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    assert job_table.claim(store, "a", stale_before=earlier()).id == job_id
    assert job_table.claim(store, "b", stale_before=earlier()) is None  # a's heartbeat is fresh


def test_a_stuck_job_is_taken_over_and_the_first_worker_can_no_longer_write(store, caplog):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    job_table.claim(store, "a", stale_before=earlier())
    with store.session() as s, s.begin():  # what a split leaves (job_table.split): the job resumes from it
        s.execute(update(Job).where(Job.id == job_id).values(checkpoint={"done": 3}))
    assert job_table.heartbeat(store, job_id, "a")
    caplog.clear()  # a's claim logged too where another test set the level to INFO in this process
    with caplog.at_level(logging.INFO, logger="core.store.jobs"):
        taken = job_table.claim(store, "b", stale_before=later())  # a's heartbeat counts as expired
    assert [r.levelname for r in caplog.records] == ["WARNING"]  # the operator sees the takeover
    assert f"job {job_id} (noop) taken over by b from a" in caplog.text and "attempt 2" in caplog.text
    assert taken.id == job_id and taken.worker == "b" and taken.attempts == 2
    assert taken.checkpoint == {"done": 3}  # b resumes from a's checkpoint
    assert not job_table.heartbeat(store, job_id, "a")
    assert not job_table.finish(store, job_id, "a", {"by": "a"})
    assert job_table.finish(store, job_id, "b", {"by": "b"})
    row = job_table.job(store, job_id)
    assert row.state == "done" and row.result == {"by": "b"}


def test_a_worker_takes_over_a_stuck_job_after_its_heartbeat_expires(store):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    job_table.claim(store, "dead", stale_before=earlier())
    runs: list[int] = []
    patient = Worker(store, WorkerOptions(stale_after_s=3600), name="patient", kinds=recording_kinds(runs))
    assert not patient.run_once()  # the heartbeat is younger than an hour
    eager = Worker(store, WorkerOptions(stale_after_s=-1), name="eager", kinds=recording_kinds(runs))
    assert eager.run_once() and runs == [job_id]
    assert job_table.job(store, job_id).attempts == 2


def test_a_failing_job_is_retried_then_fails_with_its_error(store):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    runs, failures = [], []
    kinds = recording_kinds(runs, error=RuntimeError("the GPU fell off"), failures=failures)
    Worker(store, WorkerOptions(max_attempts=3), kinds=kinds).run_until_idle()
    row = job_table.job(store, job_id)
    assert runs == [job_id] * 3 and row.state == "failed" and row.attempts == 3
    assert row.error == "RuntimeError: the GPU fell off" and failures == [(job_id, row.error)]


def test_bad_input_fails_at_once(store):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    runs: list[int] = []
    kinds = recording_kinds(runs, error=InputError("the pool has no prompt column", fix="add one"))
    Worker(store, kinds=kinds).run_until_idle()
    row = job_table.job(store, job_id)
    assert runs == [job_id] and row.state == "failed" and "add one" in row.error


def test_a_job_whose_workers_keep_dying_gives_up(store):
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    for name in ("a", "b"):
        job_table.claim(store, name, stale_before=later())  # each dies holding it
    runs, failures = [], []
    worker = Worker(
        store, WorkerOptions(max_attempts=2, stale_after_s=-1), kinds=recording_kinds(runs, failures=failures)
    )
    assert worker.run_once()
    row = job_table.job(store, job_id)
    assert runs == [] and row.state == "failed" and row.attempts == 3
    assert "gave up after 2 attempts" in row.error and failures == [(job_id, row.error)]


def test_the_light_worker_leaves_model_jobs_to_the_model_worker(store):
    heavy = job_table.enqueue(store, NewJob("noop", None, {}, uses_model=True))
    light = job_table.enqueue(store, NewJob("noop", None, {}))
    runs: list[int] = []
    Worker(store, WorkerOptions(uses_model=False), kinds=recording_kinds(runs)).run_until_idle()
    assert runs == [light]
    Worker(store, WorkerOptions(uses_model=True), kinds=recording_kinds(runs)).run_until_idle()
    assert runs == [light, heavy]


@pytest.mark.parametrize(
    ("settings", "runs_a_model"),
    [
        ({"backend": "exact"}, False),
        ({"backend": "embedding"}, True),
        ({"backend": "embedding", "model": "served-model", "embedding_server": "http://embed.test"}, False),
    ],
)
def test_only_a_preparation_that_runs_a_model_here_waits_for_a_model_worker(store, monkeypatch, settings, runs_a_model):
    """Embeddings from a server are requests, which a light worker sends as well as a GPU worker."""
    monkeypatch.setenv("ACTIVEGRADE_SAMPLING_SERVERS", "http://embed.test")
    job_id = enqueue_preparation(store, demo_project(store, "p", **settings))
    assert job_table.job(store, job_id).uses_model is runs_a_model


@pytest.mark.parametrize(
    ("sampling", "runs_a_model"),
    [({"model": "local.gguf"}, True), ({"api_base": "http://sample.test", "model": "m"}, False)],
)
def test_sampling_runs_a_model_here_only_without_a_server(sampling, runs_a_model):
    assert runs_local_model(ProjectSettings(backend="exact", sampling=sampling)) is runs_a_model


def demo_project(store: Store, name: str, **settings) -> int:
    files = [(path.name, path.read_bytes()) for path in (DEMO / "pool.jsonl", DEMO / "samples.jsonl")]
    return create_project(store, name, files[0], files[1], settings, start=False)


@pytest.mark.parametrize("settings", [{}, {"stratify_by": "both", "n_strata": 4}])
def test_a_chunked_preparation_gives_the_unchunked_items_bit_for_bit(store, settings):
    whole, chunked = demo_project(store, "whole", **settings), demo_project(store, "chunked", **settings)
    assert start_preparation(store, whole, wait=True)
    assert start_preparation(store, chunked, wait=True, chunk_items=40)
    prepare = job_table.latest(store, chunked, PREPARE)
    check, *chunks = job_table.children(store, prepare.id)
    assert prepare.state == "done" and check.kind == CHECK and len(chunks) == 8 and {c.kind for c in chunks} == {CHUNK}
    assert [c.payload["start"] for c in chunks] == list(range(0, 301, 40))
    assert job_table.children(store, job_table.latest(store, whole, PREPARE).id) == []
    a, b = store.load_items(whole), store.load_items(chunked)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for column in ("semantic_entropy", "semantic_entropy_weighted", "agreement"):
        assert a[column].to_numpy().tobytes() == b[column].to_numpy().tobytes()
    assert store.project(chunked).status == "ready"


def samples_file(rows: list[dict], kind: str) -> tuple[str, bytes]:
    """The rows as a JSONL file, or as Parquet in row groups of 3 rows."""
    if kind == "jsonl":
        return "samples.jsonl", "".join(json.dumps(row) + "\n" for row in rows).encode()
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out, row_group_size=3)
    return "samples.parquet", out.getvalue()


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_chunk_reads_its_pool_rows_and_their_samples_alone(store, monkeypatch, kind):
    """Each chunk scores exactly its own pool rows with exactly their samples, even when the samples file
    is in another order than the pool (here reversed) and its ids are numbers where the pool's are text. A
    Parquet samples file's rows of each chunk are found once, before the split, and each chunk searches those."""
    import core.surrogate.prepare

    pool = "".join(json.dumps({"id": str(i), "prompt": f"q{i}", "response": f"r{i % 3}"}) + "\n" for i in range(10))
    rows = [{"id": i, "sample": f"r{(i + k) % 3}"} for i in range(10) for k in range(i % 4 + 1)]
    pid = create_project(store, "p", ("pool.jsonl", pool.encode()), samples_file(rows[::-1], kind), {}, start=False)
    seen: list[tuple[list[str], list[str], list[str]]] = []
    score_items = core.surrogate.prepare.score_items

    def recording(inputs, engine, **kwargs):
        seen.append((inputs.pool["id"].tolist(), inputs.samples["id"].tolist(), inputs.samples["sample"].tolist()))
        return score_items(inputs, engine, **kwargs)

    monkeypatch.setattr(core.surrogate.prepare, "score_items", recording)
    assert start_preparation(store, pid, wait=True, chunk_items=4)
    assert [pool_ids for pool_ids, _, _ in seen] == [["0", "1", "2", "3"], ["4", "5", "6", "7"], ["8", "9"]]
    for pool_ids, sample_ids, texts in seen:
        mine = [row for row in reversed(rows) if str(row["id"]) in pool_ids]
        assert sample_ids == [str(row["id"]) for row in mine] and texts == [row["sample"] for row in mine]
    items = store.load_items(pid)
    assert items["n_samples"].tolist() == [i % 4 + 1 for i in range(10)]
    children = job_table.children(store, job_table.latest(store, pid, PREPARE).id)
    searched = [c.payload.get("sample_rows") for c in children if c.kind == CHUNK]
    assert searched == ([[13, 23], [3, 13], [0, 3]] if kind == "parquet" else [None] * 3)
    assert [c.kind for c in children if c.kind != CHUNK] == ([] if kind == "parquet" else [CHECK])  # ids checked


def test_a_chunk_that_fails_fails_the_preparation(store, monkeypatch):
    import core.surrogate.prepare

    pid = demo_project(store, "p")
    score_items = core.surrogate.prepare.score_items

    def broken(inputs, engine, **kwargs):
        if inputs.pool["id"].iloc[0] == "science-26":  # pool row 120, where chunk three starts
            raise InputError("chunk three is broken", fix="mend it")
        return score_items(inputs, engine, **kwargs)

    monkeypatch.setattr(core.surrogate.prepare, "score_items", broken)
    start_preparation(store, pid, wait=True, chunk_items=40)
    info = store.project(pid)
    assert info.status == "failed" and "chunk three is broken" in info.error
    assert job_table.latest(store, pid, PREPARE).state == "failed"
    assert start_preparation(store, pid)  # "Try again" queues it anew


def test_a_chunked_preparation_checks_the_whole_upload(store):
    """Chunks read only their own samples; the CHECK job beside them finds a sample of no pool item (from a
    Parquet samples file the PREPARE job reads every sample id before the split and finds it), and the
    pool's own rows are checked whole before the split (a duplicate id in two chunks). The files go
    in through the store, as sampled answers do, not through the upload's own check."""
    pool, samples = ((DEMO / name).read_bytes() for name in ("pool.jsonl", "samples.jsonl"))
    settings = ProjectSettings.from_dict({}).to_dict()

    def prepared(name: str, pool_bytes: bytes, sample_bytes: bytes):
        files = {"pool": ("pool.jsonl", pool_bytes), "samples": ("samples.jsonl", sample_bytes)}
        pid = store.create_project(name, settings, files)
        start_preparation(store, pid, wait=True, chunk_items=40)
        return store.project(pid), job_table.latest(store, pid, PREPARE)

    info, prepare = prepared("stray", pool, samples + b'{"id": "nowhere-1", "sample": "42"}\n')
    assert info.status == "failed" and "samples.jsonl, row 2409" in info.error
    assert "id 'nowhere-1' is not in the pool" in info.error and prepare.state == "failed"

    files = {"pool": ("pool.jsonl", pool), "samples": ("samples.jsonl", samples)}
    rows = [json.loads(line) for line in samples.splitlines()] + [{"id": "nowhere-2", "sample": "42"}]
    pid = store.create_project("stray parquet", settings, files | {"samples": samples_file(rows, "parquet")})
    start_preparation(store, pid, wait=True, chunk_items=40)
    info, prepare = store.project(pid), job_table.latest(store, pid, PREPARE)
    assert info.status == "failed" and "samples.parquet, row 2409" in info.error
    assert "id 'nowhere-2' is not in the pool" in info.error
    assert job_table.children(store, prepare.id) == []  # a Parquet file's ids are all read before the split

    first = pool.splitlines()[0]  # the first item again as the pool's last row, in another chunk
    info, prepare = prepared("twice", pool + first + b"\n", samples)
    assert info.status == "failed" and "used more than once, on rows 1, 302" in info.error
    assert job_table.children(store, prepare.id) == []  # failed before the split


def test_a_preparation_no_worker_takes_says_so(store):
    pid = demo_project(store, "p")
    assert start_preparation(store, pid)
    assert not start_preparation(store, pid)  # queued once
    assert waiting_for_worker(store, pid) is None
    message = waiting_for_worker(store, pid, now=later(3600))
    assert "no worker has taken it" in message
    job_table.claim(store, "w", stale_before=earlier())
    assert "stopped responding" in waiting_for_worker(store, pid, now=later(3600))


def test_scores_survive_the_json_round_trip_exactly():
    values = np.array([np.nan, 0.1 + 0.2, 1 / 3, np.log(7) * 1e-300, 5e-324, 1.7976931348623157e308])
    back = scores_from_json(json.loads(json.dumps(scores_to_json({"agreement": values}))))["agreement"]
    assert np.isnan(back[0]) and back[1:].tobytes() == values[1:].tobytes()


def test_a_chunked_nli_preparation_gives_the_unchunked_scores(tmp_path, monkeypatch):
    """A model backend (a tiny random NLI model) scores every item from its own pairs: the chunks,
    each with a cache of its own, give the same classes and entropies within 1e-9."""
    from core.config import CACHE_DIR
    from core.testing.tiny_nli import MNLI_LABELS, build_tiny_nli_model

    store = Store.open(f"sqlite:///{tmp_path / 'nli.db'}")
    model = build_tiny_nli_model(tmp_path / "nli", MNLI_LABELS)
    data = Path(__file__).resolve().parent / "data" / "app"
    files = [(name, (data / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    prepared = []
    for name, chunk_items in (("whole", None), ("chunked", 15)):
        monkeypatch.setenv(CACHE_DIR, str(tmp_path / f"cache-{name}"))
        worker_backend.cache_clear()  # a fresh model and memo for each run, as two workers would have
        pid = create_project(store, name, *files, {"backend": "nli", "model": model}, start=False)
        assert start_preparation(store, pid, wait=True, chunk_items=chunk_items)
        assert store.project(pid).status == "ready", store.project(pid).error
        prepared.append(store.load_items(pid))
    whole, chunked = prepared
    children = job_table.children(store, job_table.latest(store, 2, PREPARE).id)
    assert [c.kind for c in children] == [CHECK, CHUNK, CHUNK, CHUNK]
    for column in ("n_clusters", "stratum"):
        assert whole[column].tolist() == chunked[column].tolist()
    for column in ("semantic_entropy", "semantic_entropy_weighted", "agreement"):
        np.testing.assert_allclose(chunked[column], whole[column], rtol=0, atol=1e-9)


def test_a_worker_thread_keeps_its_backend_across_jobs_and_threads_do_not_share_one():
    """Chunk after chunk, a worker scores with the same backend (its model loaded once, its memo kept);
    another thread, running another job at the same time, gets its own (progress goes to its own job)."""
    worker_backend.cache_clear()
    here = worker_backend(threading.get_ident(), "exact", None, None, "cpu", None)
    assert worker_backend(threading.get_ident(), "exact", None, None, "cpu", None) is here
    other = []
    thread = threading.Thread(
        target=lambda: other.append(worker_backend(threading.get_ident(), "exact", None, None, "cpu", None))
    )
    thread.start()
    thread.join()
    assert other[0] is not here


def test_a_claim_and_a_heartbeat_the_database_refuses_are_logged(store, caplog, monkeypatch):
    """The worker's heartbeat thread used to swallow every failure: now each one is a warning."""
    job_id = job_table.enqueue(store, NewJob("noop", None, {}))
    with caplog.at_level(logging.INFO, logger="core"):
        job = job_table.claim(store, "a", stale_before=earlier())
        assert f"job {job_id} (noop) claimed by a; attempt 1" in caplog.text

        def refused(*_args):
            raise OSError("disk I/O error\nstatement and values")

        monkeypatch.setattr(job_table, "heartbeat", refused)
        worker = Worker(store, WorkerOptions(heartbeat_s=0.01), name="a")
        stop = threading.Event()
        beat = threading.Thread(target=worker._beat, args=(job.id, stop))
        beat.start()
        until(lambda: "heartbeat not stamped" in caplog.text, timeout=10, what="a logged heartbeat failure")
        stop.set()
        beat.join()
    assert f"job {job_id}: heartbeat not stamped (OSError: disk I/O error)" in caplog.text
    assert "statement and values" not in caplog.text  # the first line only
