"""How a project stands: its state (status, preparation progress, items and grades), and its preparation read
from its jobs: queued or running, or waiting for a worker.

Read-only: the Projects page, `activegrade status`, the HTTP API and the project lifecycle
(core.services.project) ask these.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.jobs.preparation_job import PREPARE
from core.store import ProjectInfo, Store
from core.store import jobs as job_table

STALE_AFTER = timedelta(seconds=60)
"""A preparation no worker touched for this long is waiting for one (and a project left preparing this long
may be claimed again)."""


def waiting_for_worker(store: Store, project_id: int, now: datetime | None = None) -> str | None:
    """Why a preparation makes no progress, when no worker has touched it for STALE_AFTER: queued and
    never taken, or held by a worker that stopped responding; None while all is well."""
    job = job_table.latest(store, project_id, PREPARE)
    if job is None or job.state not in job_table.ACTIVE:
        return None
    running = [j for j in [job, *job_table.children(store, job.id)] if j.state == job_table.RUNNING]
    beats = [j.heartbeat_at for j in running if j.heartbeat_at is not None]
    last = max(beats, default=None) or max(filter(None, (job.heartbeat_at, job.created_at)))
    if (now or datetime.now(UTC)) - last <= STALE_AFTER:
        return None
    if running:
        return "its worker stopped responding; another worker takes the job over and resumes it"
    return "no worker has taken it yet: is the app's worker turned off ($ACTIVEGRADE_APP_WORKER=0)? Start one with `python -m core worker`"


def preparation_queued(store: Store, project_id: int) -> bool:
    """Whether the project's preparation job is queued or running (a project left 'preparing' by a
    process that died before jobs existed has none, and may be prepared again)."""
    job = job_table.latest(store, project_id, PREPARE)
    return job is not None and job.state in job_table.ACTIVE


def project_state(store: Store, project: ProjectInfo) -> dict[str, Any]:
    """A project's state: id, name, status, preparation progress, error, items, graded items and grades (every
    grade given: a comparison's one per response graded, a rubric's one per card, its design criterion's)."""
    ready = project.status == "ready"
    graded = store.graded_positions(project.id) if ready else {}
    return {
        "id": project.id,
        "name": project.name,
        "status": project.status,
        "progress": {
            "done": project.progress_done,
            "total": project.progress_total,
            "message": project.progress_message,
        },
        "error": project.error or None,
        "items": store.item_count(project.id) if ready else None,
        "graded_items": len(graded) if ready else None,
        "grades": len(store.grades(project.id)) if ready else None,
        "updated_at": project.updated_at.isoformat(),
    }
