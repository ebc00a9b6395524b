"""Setting a project up, as its manager reads and chooses it: the choices of the new-project form, the design
the project grades with, its planned budget, where a budget's grades go (planned against proportional) and
the anytime interval the live pages read.

The pages never import core.stats or core.jobs (tests/test_architecture.py): what of them a page offers or
shows comes through here, computed from the project's settings and the store.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from core.jobs.sampling_job import SamplingSettings, ServerSamplingSettings, default_model
from core.settings import ProjectSettings
from core.stats.allocation import Design, planned_allocation, proportional_allocation
from core.stats.confseq import AnytimeInterval, anytime_interval
from core.stats.design import prepared_design
from core.stats.intervals import LEVEL
from core.stats.proxy import proxy_choices
from core.stats.stopping import ANYTIME, FIXED, LOOKS, REGIME_NAMES
from core.stats.strata import STRATIFY_BY

__all__ = [
    "LEVEL",
    "REGIME_CHOICES",
    "REGIME_NAMES",
    "STRATIFY_BY",
    "AnytimeInterval",
    "Design",
    "SamplingSettings",
    "ServerSamplingSettings",
    "allocation_table",
    "anytime_after",
    "default_model",
    "design_of",
    "path_n0",
    "planned_budget_chosen",
    "proxy_choices",
]


REGIME_CHOICES = (LOOKS, ANYTIME)
"""The regimes a project picks from when it is set up (core.settings.ProjectSettings.regime); a budget fixed in
advance is its own setting (``budget_fixed``)."""


def design_of(items: pd.DataFrame, regime: str) -> Design:
    """The design the project grades with: its prepared strata, allocated for its stopping regime
    (``ProjectSettings.stopping``; core.stats.design.prepared_design)."""
    return prepared_design(items, regime)


def allocation_table(design: Design, budget: int) -> pd.DataFrame:
    """Per stratum: items, predicted mean grade and spread, the planned (Neyman-like) grades of ``budget`` and
    the proportional ones (what uniform sampling gives on average)."""
    return pd.DataFrame(
        {
            "stratum": range(design.H),
            "items": design.sizes,
            "predicted mean grade": design.prior_mean.round(3),
            "predicted spread": design.prior_sd.round(3),
            "planned grades": planned_allocation(design, budget),
            "proportional": proportional_allocation(design.sizes, budget, design.floor),
        }
    )


def anytime_after(design: Design, positions: Iterable[int], grades: Iterable[float], n0: int) -> AnytimeInterval:
    """The anytime-valid interval after these grades, tuned for ``n0`` grades (core.stats.confseq)."""
    return anytime_interval(design, list(positions), list(grades), n0)


def path_n0(settings: ProjectSettings, n0: int) -> int | None:
    """The n0 of the anytime interval an estimate path draws: the project's ``n0`` (ProjectSettings.anytime_n0),
    or None when the budget is fixed in advance (no anytime interval is read then)."""
    return None if settings.stopping == FIXED else n0


def planned_budget_chosen(settings: ProjectSettings, n0: int, offered: int, budget_fixed: bool) -> int | None:
    """The ``planned_budget`` to store from a form that offered n0 = ``offered`` (the n0 the project uses,
    ProjectSettings.anytime_n0, which every form offers) and got ``n0``: unset stays unset while the field is
    untouched and the budget is fixed as before (n0 then keeps following the forecast for the target); else
    the n0 given, so that a budget fixed in the same save is the number the manager saw, not the default of
    10% of the pool."""
    untouched = settings.planned_budget is None and n0 == offered and budget_fixed == settings.budget_fixed
    return None if untouched else n0
