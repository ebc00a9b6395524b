"""Simulations as jobs: the Simulate page queues one (`enqueue_simulation`), a worker runs
`core.stats.simulate.simulate` on the project's prepared items and stores its figures as the job's
result, and the page shows the project's latest run to whoever comes back to it, on any server.
Every run has the stopping mode too (core.stats.simulate_stopping), at the project's own target, regime,
planned budget and expected score: grades until the rule says done, as a manager would grade. The form's n0
tunes the fixed budgets' anytime intervals only.
"""

from __future__ import annotations

from typing import Any

from core.jobs.context import JobContext, Kind
from core.store import Store, json_safe
from core.store import jobs as job_table
from core.store.jobs import JobRow, NewJob

SIMULATE = "simulate"
ARGUMENTS = ("budgets", "reps", "seed", "methods", "n0", "skip_wrong", "skip_right")


def settings_read(settings: Any) -> dict[str, Any]:
    """The project settings a run reads (its stopping regime, target and the score the manager expects), as
    its result keeps them: the page says when the project's have changed since (core.services.simulation)."""
    return {
        "stopping": settings.stopping,
        "target_half_width": float(settings.target_half_width),
        "expected_score": settings.expected_score,
    }


def enqueue_simulation(store: Store, project_id: int, **arguments: Any) -> int:
    """Queue ``simulate(items, **arguments)`` on the project's items (ARGUMENTS only); returns the job's id."""
    unknown = sorted(set(arguments) - set(ARGUMENTS))
    if unknown:
        raise TypeError(f"unknown simulation argument {unknown[0]!r}")
    return job_table.enqueue(store, NewJob(SIMULATE, project_id, json_safe(arguments)))


def latest_simulation(store: Store, project_id: int) -> JobRow | None:
    """The project's newest simulation job (queued, running, done or failed), or None."""
    return job_table.latest(store, project_id, SIMULATE)


def run_simulation(context: JobContext) -> dict:
    from core.stats.design import prepared_design
    from core.stats.simulate import simulate

    items = context.store.load_items(context.job.project_id)
    settings = context.store.project(context.job.project_id).settings
    design = prepared_design(items, settings.stopping)
    result = simulate(
        items,
        design=design,
        regime=settings.stopping,
        target_half_width=float(settings.target_half_width),
        planned=settings.planned_budget,
        expected=settings.expected_score,
        **context.job.payload,
    )
    return json_safe(result | {"settings": settings_read(settings)})


def _failed(store: Store, job: JobRow, error: str) -> None:
    """Nothing waits on a simulation but its page, which reads the job's error."""


SIMULATE_KIND = Kind(run=run_simulation, failed=_failed)
