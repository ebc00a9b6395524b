"""The design a project actually grades with, in one place for the app's pages and the simulator.

Strata are those prepared with the project's settings (`stratify_by`,
`n_strata`, decided once by core.surrogate.prepare), never re-stratified here; the
surrogate's predicted grade and covariates are read from the same items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pandas as pd

from core.errors import InputError
from core.stats.allocation import DEFAULT_FLOOR, Design, design_from_items
from core.stats.stopping import DEFAULT_REGIME, allocation_kappa


class ItemSource(Protocol):
    """Where a project's prepared items are kept (core.store.Store is one): statistics never import the store."""

    def load_items(self, project_id: int) -> pd.DataFrame: ...


PLANNED_BUDGET_SHARE = 0.1
"""Planned budget n0 when the project has not set one: a tenth of the pool (the Projects page's default)."""

MIN_PLANNED_BUDGET = 10


def prepared_design(items: pd.DataFrame, regime: str = DEFAULT_REGIME) -> Design:
    """The design of a prepared items table: its `stratum` column as it is, the app's other defaults, and the
    allocation the project's stopping regime asks for (core.stats.stopping.allocation_kappa)."""
    return design_from_items(items, stratify_by=None, kappa=allocation_kappa(regime))


def project_design(store: ItemSource, project_id: int, regime: str = DEFAULT_REGIME) -> Design:
    """The design project `project_id` grades with: `prepared_design` of its stored items and its regime."""
    return prepared_design(store.load_items(project_id), regime)


def planned_budget(planned: int | None, n_items: int) -> int:
    """n0, the grades the project plans (the anytime interval's bets are tuned for it).

    ``planned`` (the project's ``ProjectSettings.planned_budget``) when set, else
    max(MIN_PLANNED_BUDGET, PLANNED_BUDGET_SHARE N); at most N. ``ProjectSettings.n0`` reads it for a project.
    """
    n0 = int(planned) if planned else max(MIN_PLANNED_BUDGET, round(PLANNED_BUDGET_SHARE * n_items))
    return max(1, min(n0, n_items))


def grading_budget(planned: int | None, budget_fixed: bool, n_items: int) -> int | None:
    """The most items the queue hands out: n0 (`planned_budget`) when the budget is fixed in advance
    (``budget_fixed``), since its fixed-n interval is valid only when read at n0 and not after more grades
    seen; None otherwise (grading goes on until every item is graded; the anytime interval allows it).
    ``ProjectSettings.budget`` reads it for a project."""
    return planned_budget(planned, n_items) if budget_fixed else None


def fixed_budget_problem(n0: int, sizes: Sequence[int], floor: int = DEFAULT_FLOOR) -> InputError | None:
    """Why a budget fixed at ``n0`` cannot be read as planned, or None: the queue first gives every stratum
    min(floor, N_h) grades (core.stats.allocation.Design.floor); below their sum some stratum has fewer than two
    grades and the fixed-n interval has no variance for it, so the project would stop with no interval. (A budget
    is fixed before the first grade: core.services.project_actions.FIXED_ONCE_GRADED.)"""
    needed = int(sum(min(floor, size) for size in sizes))
    if n0 < needed:
        return InputError(
            f"a budget fixed at n0 = {n0:,} grades is below the {needed:,} the design gives its {len(sizes)} strata "
            f"first ({floor} each): some stratum would end with too few grades for an interval",
            fix=f"set the planned number of grades n0 to {needed:,} or more",
        )
    return None
