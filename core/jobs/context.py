"""What a job sees while it runs, and what a kind of job is: shared by the worker (core.jobs.worker) and
the jobs it runs (core.jobs.preparation_job, core.jobs.simulation_job)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.store import Store
from core.store import jobs as job_table
from core.store.jobs import JobRow, NewJob

HEARTBEAT_S = 5.0
STALE_AFTER_S = 60.0
MAX_ATTEMPTS = 3
POLL_S = 1.0


@dataclass(frozen=True)
class WorkerOptions:
    """How a worker runs. ``uses_model``: None takes every job, True only those that run a model
    (a GPU worker), False only those that do not. ``device``/``batch_size`` go to the models
    (cuda: half precision). ``idle_exit_s``: stop after that long without a job; ``parent_pid``:
    stop when that process is gone (the app's own worker); ``project_id``: that project's jobs only."""

    device: str = "auto"
    batch_size: int | None = None
    uses_model: bool | None = None
    heartbeat_s: float = HEARTBEAT_S
    stale_after_s: float = STALE_AFTER_S
    max_attempts: int = MAX_ATTEMPTS
    poll_s: float = POLL_S
    idle_exit_s: float | None = None
    parent_pid: int | None = None
    project_id: int | None = None


@dataclass
class JobContext:
    """What a running job sees: the store, its row, the worker's name and options."""

    store: Store
    job: JobRow
    worker: str
    options: WorkerOptions
    released: bool = field(default=False)

    def split(self, children: Sequence[NewJob], checkpoint: dict[str, Any]) -> None:
        """Hand the rest of the work to ``children``; this job waits, queued, until they are done and then
        runs again with ``checkpoint``."""
        self.released = job_table.split(self.store, self.job.id, self.worker, children, checkpoint)
        if not self.released:
            raise Lost(self.job.id)


class Lost(Exception):
    """The job was taken over by another worker (this one missed its heartbeat)."""


@dataclass(frozen=True)
class Kind:
    """One kind of job: ``run(context)`` returns the result to store; ``failed(store, job, error)``
    tells whoever waits on it (a project's status) that it failed for good."""

    run: Callable[[JobContext], dict[str, Any] | None]
    failed: Callable[[Store, JobRow, str], None]
