"""The jobs table: enqueue, claim, heartbeat, checkpoint and finish long work (core.jobs runs it).

A worker claims the oldest claimable job: queued with no unfinished children, or running with a
heartbeat older than ``stale_before`` (its worker died: it is taken over). On PostgreSQL the
candidate row is locked with ``SELECT ... FOR UPDATE SKIP LOCKED``, so workers never wait on each
other; on SQLite, a single writer, the claim is one conditional ``UPDATE ... WHERE id = ? AND
<still claimable>`` that only one worker can win. Every later write of a worker names it
(``WHERE worker = ? AND state = 'running'``) and returns False when the job is no longer its own
(taken over after a missed heartbeat): what it then holds is never written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, exists, func, insert, or_, select, update
from sqlalchemy.orm import aliased

from core.store.models import Job, aware, aware_or_none, utcnow

if TYPE_CHECKING:
    from core.store.store import Store

logger = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
ACTIVE = (QUEUED, RUNNING)


@dataclass(frozen=True)
class JobRow:
    """A snapshot of one job."""

    id: int
    kind: str
    project_id: int | None
    parent_id: int | None
    state: str
    uses_model: bool
    payload: dict[str, Any]
    checkpoint: dict[str, Any]
    result: dict[str, Any] | None
    progress_done: int
    progress_total: int
    message: str
    attempts: int
    error: str
    worker: str | None
    created_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True)
class NewJob:
    """A job to insert: its kind, project, payload and whether it runs a model."""

    kind: str
    project_id: int | None
    payload: dict[str, Any]
    uses_model: bool = False


def _row(job: Job) -> JobRow:
    return JobRow(
        id=job.id,
        kind=job.kind,
        project_id=job.project_id,
        parent_id=job.parent_id,
        state=job.state,
        uses_model=job.uses_model,
        payload=dict(job.payload or {}),
        checkpoint=dict(job.checkpoint or {}),
        result=job.result,
        progress_done=job.progress_done,
        progress_total=job.progress_total,
        message=job.message,
        attempts=job.attempts,
        error=job.error,
        worker=job.worker,
        created_at=aware(job.created_at),
        started_at=aware_or_none(job.started_at),
        heartbeat_at=aware_or_none(job.heartbeat_at),
        finished_at=aware_or_none(job.finished_at),
    )


def _values(new: NewJob, parent_id: int | None = None) -> dict[str, Any]:
    return {
        "kind": new.kind,
        "project_id": new.project_id,
        "parent_id": parent_id,
        "state": QUEUED,
        "uses_model": new.uses_model,
        "payload": new.payload,
        "checkpoint": {},
        "progress_done": 0,
        "progress_total": 0,
        "message": "",
        "attempts": 0,
        "error": "",
        "created_at": utcnow(),
    }


def enqueue(store: Store, new: NewJob) -> int:
    """Insert a queued job; returns its id."""
    with store.session() as s, s.begin():
        job = Job(**_values(new))
        s.add(job)
        s.flush()
        return job.id


def _ready():
    """Queued with every child done."""
    child = aliased(Job)
    return and_(Job.state == QUEUED, ~exists().where(child.parent_id == Job.id, child.state != DONE))


def _claimable(stale_before: datetime):
    """`_ready`, or running with a heartbeat older than ``stale_before``."""
    return or_(_ready(), and_(Job.state == RUNNING, Job.heartbeat_at < stale_before))


def claim(
    store: Store,
    worker: str,
    *,
    stale_before: datetime,
    uses_model: bool | None = None,
    project_id: int | None = None,
    kinds: Sequence[str] | None = None,
) -> JobRow | None:
    """Take the oldest claimable job for ``worker`` (state running, attempts + 1, heartbeat now), or None.

    ``uses_model`` False takes only jobs that run no model, True only those that do, None any;
    ``project_id`` and ``kinds`` narrow the choice further.
    """
    filters = [_claimable(stale_before)]
    if uses_model is not None:
        filters.append(Job.uses_model == uses_model)
    if project_id is not None:
        filters.append(Job.project_id == project_id)
    if kinds is not None:
        filters.append(Job.kind.in_(list(kinds)))
    while True:
        with store.session() as s, s.begin():
            query = select(Job.id, Job.state, Job.worker).where(*filters).order_by(Job.id).limit(1)
            if s.bind.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True, of=Job)
            found = s.execute(query).first()
            if found is None:
                return None
            job_id, state, holder = found
            now = utcnow()
            won = s.execute(
                update(Job)
                .where(Job.id == job_id, *filters)
                .values(
                    state=RUNNING,
                    worker=worker,
                    attempts=Job.attempts + 1,
                    started_at=now,
                    heartbeat_at=now,
                )
                .execution_options(synchronize_session=False)
            )
            if won.rowcount == 1:
                job = _row(s.get(Job, job_id))
                if state == RUNNING:  # its holder stopped stamping the heartbeat
                    logger.warning(
                        "job %d (%s) taken over by %s from %s, whose heartbeat was older than %s; attempt %d",
                        job.id,
                        job.kind,
                        worker,
                        holder,
                        stale_before.isoformat(timespec="seconds"),
                        job.attempts,
                    )
                else:
                    logger.info("job %d (%s) claimed by %s; attempt %d", job.id, job.kind, worker, job.attempts)
                return job
        # another worker won this one between the read and the write (SQLite): look again


def _mine(job_id: int, worker: str):
    return and_(Job.id == job_id, Job.worker == worker, Job.state == RUNNING)


def _update_mine(store: Store, job_id: int, holder: str, **values: Any) -> bool:
    with store.session() as s, s.begin():
        done = s.execute(
            update(Job).where(_mine(job_id, holder)).values(**values).execution_options(synchronize_session=False)
        )
        return done.rowcount == 1


def heartbeat(store: Store, job_id: int, worker: str) -> bool:
    """Stamp the job's heartbeat; False when it is no longer this worker's."""
    return _update_mine(store, job_id, worker, heartbeat_at=utcnow())


def progress(store: Store, job_id: int, worker: str, done: int, total: int, message: str) -> bool:
    """Record progress (also a heartbeat); False when the job is no longer this worker's."""
    return _update_mine(
        store, job_id, worker, progress_done=done, progress_total=total, message=message, heartbeat_at=utcnow()
    )


def finish(store: Store, job_id: int, worker: str, result: dict[str, Any] | None = None) -> bool:
    """Mark the job done with its result; False (nothing written) when it is no longer this worker's."""
    return _update_mine(store, job_id, worker, state=DONE, result=result, error="", finished_at=utcnow())


def requeue(store: Store, job_id: int, worker: str, error: str) -> bool:
    """Give the job back to the queue after a failure another attempt may not repeat."""
    return _update_mine(store, job_id, worker, state=QUEUED, worker=None, error=error)


def fail(store: Store, job_id: int, worker: str | None, error: str) -> bool:
    """Mark the job failed for good. With ``worker``, only if it is still that worker's; with None,
    a job no worker holds (a parent waiting for its chunks)."""
    condition = _mine(job_id, worker) if worker is not None else and_(Job.id == job_id, Job.state == QUEUED)
    with store.session() as s, s.begin():
        done = s.execute(
            update(Job)
            .where(condition)
            .values(state=FAILED, error=error, finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        return done.rowcount == 1


def split(store: Store, job_id: int, worker: str, children: Sequence[NewJob], checkpoint: dict[str, Any]) -> bool:
    """In one transaction: insert ``children`` under the job, store its checkpoint and put it back in
    the queue, where it waits until every child is done (attempts start again from 0). False, and
    nothing written, when the job is no longer this worker's."""
    with store.session() as s, s.begin():
        released = s.execute(
            update(Job)
            .where(_mine(job_id, worker))
            .values(state=QUEUED, worker=None, attempts=0, checkpoint=checkpoint, heartbeat_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        if released.rowcount != 1:
            return False
        s.execute(insert(Job), [_values(child, job_id) for child in children])
        return True


def job(store: Store, job_id: int) -> JobRow:
    with store.session() as s:
        row = s.get(Job, job_id)
        if row is None:
            raise KeyError(f"no job with id {job_id}")
        return _row(row)


def children(store: Store, job_id: int) -> list[JobRow]:
    """The job's children in the order they were made."""
    with store.session() as s:
        return [_row(r) for r in s.scalars(select(Job).where(Job.parent_id == job_id).order_by(Job.id))]


def latest(store: Store, project_id: int, kind: str) -> JobRow | None:
    """The project's newest job of this kind (top-level, not a chunk), or None."""
    with store.session() as s:
        row = s.scalar(
            select(Job)
            .where(Job.project_id == project_id, Job.kind == kind, Job.parent_id.is_(None))
            .order_by(Job.id.desc())
            .limit(1)
        )
        return None if row is None else _row(row)


def jobs(store: Store, project_id: int | None = None) -> list[JobRow]:
    """Every job (of one project), oldest first."""
    query = select(Job).order_by(Job.id)
    if project_id is not None:
        query = query.where(Job.project_id == project_id)
    with store.session() as s:
        return [_row(r) for r in s.scalars(query)]


def longest_wait(store: Store) -> float | None:
    """Seconds since the oldest job that any worker could claim now (queued, every child done) was queued;
    None when none waits."""
    with store.session() as s:
        oldest = s.scalar(select(func.min(Job.created_at)).where(_ready()))
    return None if oldest is None else (utcnow() - aware(oldest)).total_seconds()


def pending(store: Store) -> int:
    """How many jobs are queued or running."""
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(Job).where(Job.state.in_(ACTIVE))) or 0)
