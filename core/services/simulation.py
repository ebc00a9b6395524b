"""Simulations of a project's grading, for the Simulate page: checked, queued as jobs, read back.

``start`` checks that the actor may simulate the project (auth.SIMULATE), checks the budgets
at once (a bad one is said before any wait) and queues the job (core.jobs.simulation_job) a
worker runs; ``latest`` reads the project's newest run back as a ``Run``. The page renders
what these return and decides nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.jobs.simulation_job import enqueue_simulation, latest_simulation
from core.services import auth
from core.services.outcome import permitted
from core.services.setup import suggested_n0
from core.settings import ProjectSettings
from core.stats.intervals import LEVEL
from core.stats.simulate import METHODS, ORACLES, budget_sizes, budgets_around
from core.stats.stopping import ANYTIME, REGIME_NAMES
from core.store import Store
from core.store import jobs as job_table

__all__ = ["LEVEL", "METHODS", "ORACLES", "Run", "defaults", "latest", "regime_name", "start"]


@dataclass(frozen=True)
class Run:
    """A simulation as its page shows it: ``running`` (queued or running), ``failed`` (with ``error``) or
    ``done`` (with ``result``, core.stats.simulate.simulate's figures)."""

    state: str
    error: str | None = None
    result: dict[str, Any] | None = None


def defaults(settings: ProjectSettings, needed: int, n_items: int) -> tuple[tuple[str, ...], int]:
    """The form's default budgets (around ``needed``, the grades the project's forecast now says the target
    needs) and n0, the rule the Projects page's n0 follows too (core.stats.simulate.budgets_around,
    setup.suggested_n0)."""
    return budgets_around(needed, n_items), suggested_n0(settings, needed, n_items)


def start(
    store: Store,
    actor: auth.User | None,
    project_id: int,
    *,
    budgets: Sequence[str],
    reps: int,
    seed: int,
    methods: Sequence[str],
    n0: int,
    skip_wrong: float,
    skip_right: float,
) -> int:
    """Queue a simulation of the project with these arguments (core.stats.simulate.simulate's); its job id.
    Refused unless the actor may simulate the project; InputError for a budget that is no share or count."""
    permitted(store, actor, auth.SIMULATE, project_id)
    budget_sizes(budgets, store.item_count(project_id))
    return enqueue_simulation(
        store,
        project_id,
        budgets=list(budgets),
        reps=reps,
        seed=seed,
        methods=list(methods),
        n0=n0,
        skip_wrong=skip_wrong,
        skip_right=skip_right,
    )


def latest(store: Store, actor: auth.User | None, project_id: int) -> Run | None:
    """The project's newest simulation, or None when none was run; Refused unless the actor may simulate it."""
    permitted(store, actor, auth.SIMULATE, project_id)
    job = latest_simulation(store, project_id)
    if job is None:
        return None
    if job.state in job_table.ACTIVE:
        return Run("running")
    if job.state == job_table.FAILED:
        return Run("failed", error=job.error)
    return Run("done", result=job.result)


def regime_name(result: dict[str, Any]) -> str:
    """How the stopping regime a simulation allocated for is named to people (core.stats.stopping.REGIME_NAMES)."""
    return REGIME_NAMES[result.get("regime", ANYTIME)]  # runs from before regimes were anytime
