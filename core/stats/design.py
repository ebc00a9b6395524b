"""The design a project actually grades with, in one place for the app's pages and the simulator.

Strata are those prepared with the project's settings (`stratify_by`,
`n_strata`, decided once by core.surrogate.prepare), never re-stratified here; the
surrogate's predicted grade and covariates are read from the same items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import pandas as pd

from core.stats.allocation import Design, allocation_kappa, design_from_items


class ItemSource(Protocol):
    """Where a project's prepared items are kept (core.store.Store is one): statistics never import the store."""

    def load_items(self, project_id: int) -> pd.DataFrame: ...


PLANNED_BUDGET_SHARE = 0.1
"""Planned budget n0 when the project has not set one: a tenth of the pool (the Projects page's default)."""

MIN_PLANNED_BUDGET = 10


def prepared_design(items: pd.DataFrame, settings: Mapping[str, Any] | None = None) -> Design:
    """The design of a prepared items table: its `stratum` column as it is, the app's other defaults, and the
    allocation the project's settings ask for (settings["budget_fixed"]: `allocation_kappa`)."""
    budget_fixed = bool((settings or {}).get("budget_fixed", False))
    return design_from_items(items, stratify_by=None, kappa=allocation_kappa(budget_fixed))


def project_design(store: ItemSource, project_id: int, settings: Mapping[str, Any] | None = None) -> Design:
    """The design project `project_id` grades with: `prepared_design` of its stored items and its settings."""
    return prepared_design(store.load_items(project_id), settings)


def planned_budget(settings: Mapping[str, Any], n_items: int) -> int:
    """n0, the grades the project plans (the anytime interval's bets are tuned for it).

    settings["planned_budget"] when set, else max(MIN_PLANNED_BUDGET, PLANNED_BUDGET_SHARE N); at most N.
    """
    value = settings.get("planned_budget")
    n0 = int(value) if value else max(MIN_PLANNED_BUDGET, round(PLANNED_BUDGET_SHARE * n_items))
    return max(1, min(n0, n_items))


def grading_budget(settings: Mapping[str, Any], n_items: int) -> int | None:
    """The most items the queue hands out: n0 (`planned_budget`) when the budget is fixed in advance
    (settings["budget_fixed"]), since its fixed-n interval is valid only when read at n0 and not after more
    grades seen; None otherwise (grading goes on until every item is graded; the anytime interval allows it)."""
    return planned_budget(settings, n_items) if settings.get("budget_fixed") else None
