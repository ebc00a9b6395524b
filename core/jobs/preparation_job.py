"""One project's preparation as jobs: sample surrogate answers if asked, read the uploads, cluster, score
and stratify, save the items, and say at every stage what is going on.

`enqueue_preparation` queues a PREPARE job; a worker (core.jobs.worker) runs it. A pool of more than
``chunk_items`` items is split: the PREPARE job queues one CHUNK job per ``chunk_items`` pool rows (core.surrogate.prepare.score_items on its rows and their
samples alone, each chunk's scores its result), and a CHECK job (the whole upload checked) unless it
checked every sample id itself, which any workers run in parallel, and waits; once
every child is done it runs again, joins the scores in pool order and stratifies the whole pool
(core.surrogate.prepare.stratified_items), exactly as one worker scoring the whole pool would.
Sampling checkpoints itself (core.jobs.sampling_job); every finished chunk is a checkpoint of the
preparation, so a worker killed mid-way costs at most the chunk it held.
"""

from __future__ import annotations

import functools
import math
import threading
import time

import numpy as np

from core.config import config
from core.jobs.context import JobContext, Kind
from core.jobs.sampling_job import SAMPLING_MESSAGE, allowed_server, sample_project
from core.settings import ProjectSettings
from core.store import Store, json_safe
from core.store import jobs as job_table
from core.store.jobs import JobRow, NewJob
from core.surrogate.semantic.base import EMBEDDING, Backend

PREPARE, CHUNK, CHECK = "prepare", "prepare_chunk", "prepare_check"
HEARTBEAT_S = 5.0
TICK_S = 1.0
READING = "reading the uploads"
CLUSTERING = "clustering surrogate answers"
JOINING = "joining the chunks and stratifying the pool"
PROGRESS_EVERY_S = 0.5


def chunk_items() -> int:
    """Pool rows per chunk: $ACTIVEGRADE_CHUNK_ITEMS (core.config), 20,000 when unset."""
    return config().chunk_items


def runs_local_model(settings: ProjectSettings) -> bool:
    """Whether preparing the project runs a model on the worker's machine, which decides which workers may
    take its jobs (``WorkerOptions.uses_model``: a GPU worker takes them, a light one leaves them): it embeds
    or runs NLI here unless it clusters exactly or its embeddings come from a server, or it samples with a
    local model (a sampling request without an ``api_base``, core.jobs.sampling_job.sampling_from_settings).
    Work a server does is a request, as light as reading the uploads."""
    embeds_here = settings.backend != "exact" and settings.embedding_server is None
    samples_here = bool(settings.sampling) and "api_base" not in settings.sampling
    return embeds_here or samples_here


def enqueue_preparation(store: Store, project_id: int, chunk_size: int | None = None) -> int:
    """Queue the project's preparation, flagged as running a model when it does so here (`runs_local_model`)."""
    settings = store.project(project_id).settings
    payload = {"chunk_items": chunk_size or chunk_items()}
    return job_table.enqueue(store, NewJob(PREPARE, project_id, payload, runs_local_model(settings)))


def run_prepare(context: JobContext) -> None:
    """The PREPARE job: sample if asked, then score the pool (split into chunks when it is large), or,
    run again once its chunks are done, join them; saves the items (the project is then ready).

    Before a split it reads and checks the pool alone (its rows, ids and columns, whole), for the number
    of chunks. Each chunk checks its own samples, not those of no pool item: from a Parquet samples file
    this job reads every sample id (`_sample_rows`) and refuses those; otherwise a CHECK job checks the
    samples against the whole pool beside the chunks. At 10^6 items that whole read took 7 s of the
    serial part of a preparation; the pool alone takes 2 s, the samples' ids 2 s more."""
    store, job = context.store, context.job
    project_id = job.project_id
    if "chunks" in job.checkpoint:
        report = PreparationReport(store, project_id)
        report.stage(JOINING, 0, 0)
        parts = [scores_from_json(c.result["scores"]) for c in job_table.children(store, job.id) if c.kind == CHUNK]
        scores = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
        _save(store, project_id, _inputs(store, project_id, samples=False).pool, scores)
        return
    settings = store.project(project_id).settings
    if settings.sampling:
        sample_project(store, project_id, _progress_writer(store, project_id, SAMPLING_MESSAGE), context.options.device)
    report = PreparationReport(store, project_id)
    report.stage(READING, 0, 0)
    if settings.targets:
        _save_comparison(store, project_id, _inputs(store, project_id), settings, report)
        return
    size, pool_ids = int(job.payload["chunk_items"]), _inputs(store, project_id, samples=False).pool["id"]
    n = len(pool_ids)
    count = max(math.ceil(n / size), 1)
    if count == 1:
        _save(store, project_id, *_scored(context, _inputs(store, project_id), report))
        return
    where = _sample_rows(store, project_id, pool_ids, size)
    chunks = [
        NewJob(
            CHUNK,
            project_id,
            {"start": i * size, "stop": min((i + 1) * size, n), "index": i, "count": count} | found,
            job.uses_model,
        )
        for i, found in enumerate(where or [{}] * count)
    ]
    check = [] if where is not None else [NewJob(CHECK, project_id, {}, job.uses_model)]
    store.set_progress(project_id, 0, count, f"split into {count} chunks of up to {size:,} items")
    context.split([*check, *chunks], {"chunks": count})


def run_check(context: JobContext) -> None:
    """A CHECK job: read and check the whole upload, samples and pool together, and store nothing; its
    InputError fails the preparation (``preparation_failed``) with the file and row to mend."""
    _inputs(context.store, context.job.project_id)


def run_chunk(context: JobContext) -> dict:
    """A CHUNK job: the scores of its pool rows, as its result, from those rows and their samples alone
    (every item is scored from its own texts, core.surrogate.prepare.score_items): at 10^6 items in 10
    chunks, a chunk checks, indexes and clusters its 10^6 samples, not all 10^7."""
    store, payload, project_id = context.store, context.job.payload, context.job.project_id
    report = PreparationReport(store, project_id, prefix=f"chunk {payload['index'] + 1} of {payload['count']}: ")
    report.stage(READING, 0, 0)
    sample_rows = range(*payload["sample_rows"]) if "sample_rows" in payload else None
    inputs = _inputs(store, project_id, rows=range(payload["start"], payload["stop"]), sample_rows=sample_rows)
    return {"scores": scores_to_json(_scored(context, inputs, report)[1])}


def _inputs(
    store: Store, project_id: int, *, samples: bool = True, rows: range | None = None, sample_rows: range | None = None
):
    """The project's uploads, read and checked (``rows``: those pool rows and their samples alone, searched
    for in ``sample_rows``, see core.inputs.readers.load). ``samples=False`` reads the pool alone, for the
    join, which needs only the pool's rows (core.inputs.io.load_inputs makes the pool's frame from the pool
    file only): the finish, the serial part of a chunked preparation, then skips parsing every sample
    (10^7 at 10^6 items)."""
    from core.inputs.readers import load_project_inputs

    files = store.input_files(project_id)
    chosen = files.get("samples") if samples else None
    return load_project_inputs(files["pool"], chosen, store.project(project_id).settings, rows, sample_rows)


def _sample_rows(store: Store, project_id: int, pool_ids, size: int) -> list[dict] | None:
    """Each chunk's ``sample_rows`` (the rows of the samples file from its first sample to its last), read
    once here from a Parquet samples file's id column (core.inputs.readers.sample_rows_by_chunk): each
    chunk then reads the ids of its own rows, not all of them (at 10^6 items in 50 chunks, 0.7 s of each
    chunk's read). Every sample id is checked on the way, so no CHECK job reads the whole upload again.
    None for other uploads."""
    from core.inputs.readers import sample_rows_by_chunk

    files = store.input_files(project_id)
    samples = files.get("samples")
    bounds = None if samples is None else sample_rows_by_chunk(samples, pool_ids, files["pool"][0], size)
    return None if bounds is None else [{"sample_rows": [rows.start, rows.stop]} for rows in bounds]


def served_embeddings(settings: ProjectSettings) -> dict[str, str | None]:
    """The project's embedding server as `core.surrogate.semantic.get_backend` takes it (``api_base`` and
    ``api_key_env``, the variable the operator named for its key), {} when its embeddings are computed here.
    InputError when the deployment does not allow that server, or not any more, or its key is not set
    (core.jobs.sampling_job.allowed_server): checked when the project is created and each time it is prepared."""
    if settings.embedding_server is None:
        return {}
    server = allowed_server(
        settings.embedding_server,
        use="take embeddings from",
        instead="embed with a local model ('Embeddings from' when creating a project)",
    )
    return {"api_base": server.url, "api_key_env": server.key_env}


@functools.lru_cache(maxsize=2)
def worker_backend(
    thread: int,
    name: str,
    model: str | None,
    threshold: float | None,
    device: str,
    batch_size: int | None,
    api_base: str | None = None,
    api_key_env: str | None = None,
) -> Backend:
    """The backend a worker thread scores with, kept across the jobs it runs (one at a time): a pool
    prepared in chunks loads the model once per worker and embeds each distinct string once per worker
    (the backend's own memo), not once per chunk. Per thread, because a backend reports progress to
    the job it is running. With ``api_base``, the embeddings come from that server (`served_embeddings`)."""
    from core.surrogate.semantic import get_backend

    return get_backend(
        name,
        model=model,
        threshold=threshold,
        device=device,
        batch_size=batch_size,
        api_base=api_base,
        api_key_env=api_key_env,
    )


def _scored(context: JobContext, inputs, report: PreparationReport):
    """(the inputs' pool, score_items on its rows) with the project's backend on the worker's device, the
    report ticking."""
    from core.surrogate.prepare import score_items

    settings = context.store.project(context.job.project_id).settings
    engine = worker_backend(
        threading.get_ident(),
        settings.backend,
        settings.model,
        settings.threshold,
        context.options.device,
        context.options.batch_size,
        **served_embeddings(settings),
    )
    stop_ticking = threading.Event()
    ticking = threading.Thread(target=_keep_reporting, args=(report, stop_ticking), daemon=True)
    ticking.start()
    try:
        return inputs.pool, score_items(inputs, engine, progress=report.clustering, stage=report.stage)
    finally:
        stop_ticking.set()


def _save(store: Store, project_id: int, pool, scores: dict[str, np.ndarray]) -> None:
    from core.surrogate.prepare import stratified_items

    settings = store.project(project_id).settings
    items = stratified_items(
        pool,
        scores,
        n_strata=settings.n_strata,
        stratify_by=settings.stratify_by,
        proxy=settings.proxy,
    )
    store.save_items(project_id, items)


def _save_comparison(
    store: Store, project_id: int, inputs, settings: ProjectSettings, report: PreparationReport
) -> None:
    """A comparison project's preparation, in one job (no chunks yet): core.surrogate.targets.prepare_targets
    with the project's backend, its items (comparison_items: one row per item, every target's response)
    saved."""
    from core.surrogate.targets import comparison_items, prepare_targets

    report.stage(CLUSTERING, 0, 0)
    options = {k: v for k, v in (("model", settings.model), ("threshold", settings.threshold)) if v is not None}
    comparison = prepare_targets(
        inputs,
        backend=settings.backend,
        file=store.input_files(project_id)["pool"][0],
        **options,
        **served_embeddings(settings),
    )
    store.save_items(project_id, comparison_items(comparison, settings.n_strata))


def scores_to_json(scores: dict[str, np.ndarray]) -> dict[str, list]:
    """A chunk's scores as JSON values (NaN -> null; Python's JSON writes every float's shortest exact form)."""
    return json_safe({name: values.tolist() for name, values in scores.items()})


def scores_from_json(scores: dict[str, list]) -> dict[str, np.ndarray]:
    """A chunk's stored scores as arrays again (JSON null -> NaN; JSON keeps every float exactly)."""
    return {
        name: np.array(values, dtype=int if name in ("n_samples", "n_clusters") else float)
        for name, values in scores.items()
    }


def preparation_failed(store: Store, job: JobRow, error: str) -> None:
    """A PREPARE or CHUNK job failed for good: the project shows the error (a chunk's parent fails too)."""
    if job.parent_id is not None:
        job_table.fail(store, job.parent_id, None, error)
    store.set_status(job.project_id, "failed", error)


PREPARE_KIND = Kind(run=run_prepare, failed=preparation_failed)
CHUNK_KIND = Kind(run=run_chunk, failed=preparation_failed)
CHECK_KIND = Kind(run=run_check, failed=preparation_failed)


def _keep_reporting(report: PreparationReport, stop: threading.Event) -> None:
    """Every TICK_S until ``stop``: a stage without counts says how long it has run, and the
    project row's heartbeat (``updated_at``) is stamped."""
    while not stop.wait(TICK_S):
        report.tick()


def progress_text(stage: str, done: int, total: int, unit: str) -> str:
    """What the Projects page shows of a running preparation, e.g. "embedding the texts: 1,200 of 5,000 texts"."""
    return f"{stage}: {done:,} of {total:,} {unit}"


def _progress_writer(store: Store, project_id: int, message: str):
    """A ``progress(done, total)`` callback (items) that writes to the database at most every PROGRESS_EVERY_S."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            store.set_progress(project_id, done, total, progress_text(message, done, total, "items"))

    return progress


class PreparationReport:
    """Writes the preparation's stage to the project row, so the Projects page says what is going on:
    reading the uploads, loading the model, embedding k of n texts, clustering i of N items.

    A new stage is written at once; counts within a stage at most every PROGRESS_EVERY_S, and always
    the last one. ``tick`` (every TICK_S, from another thread) adds the seconds a stage without
    counts has run (a model loads in one call), and otherwise stamps the heartbeat every HEARTBEAT_S.
    """

    def __init__(self, store: Store, project_id: int, prefix: str = "") -> None:
        self._store, self._project_id, self._prefix = store, project_id, prefix
        self._stage, self._started, self._last = "", 0.0, time.monotonic()
        self._counted = True
        self._lock = threading.Lock()

    def _write(self, stage: str, done: int, total: int, message: str) -> None:
        with self._lock:
            now = time.monotonic()
            if stage != self._stage:
                self._stage, self._started = stage, now
            elif done < total and now - self._last < PROGRESS_EVERY_S:
                return
            self._last, self._counted = now, total > 0
            self._store.set_progress(self._project_id, done, total, self._prefix + message)

    def stage(self, what: str, done: int, total: int) -> None:
        """core.surrogate.semantic.base.Stage, and READING: reading the uploads, loading the model, embedding."""
        if what == EMBEDDING:
            self._write(what, done, total, progress_text("embedding the texts", done, total, "texts"))
        else:
            self._write(what, done, total, what)

    def clustering(self, done: int, total: int) -> None:
        """core.surrogate.semantic.Progress: items clustered."""
        self._write(CLUSTERING, done, total, progress_text(CLUSTERING, done, total, "items"))

    def tick(self) -> None:
        with self._lock:
            now = time.monotonic()
            if self._stage and not self._counted:
                self._store.set_progress(
                    self._project_id, 0, 0, f"{self._prefix}{self._stage}: {now - self._started:.0f} s"
                )
                self._last = now
            elif now - self._last >= HEARTBEAT_S:
                self._store.heartbeat(self._project_id)  # only the time: the counts stay as last written
                self._last = now
