"""The project's design: strata as prepared, and the planned budget the anytime interval is tuned for."""

from __future__ import annotations

import numpy as np

from core.stats.allocation import KAPPA
from core.stats.design import planned_budget, prepared_design, project_design
from core.stats.simulate import synthetic_items
from core.stats.stopping import FLOOR_KAPPA
from core.stats.strata import stratify


class FakeStore:
    def __init__(self, items):
        self.items = items

    def load_items(self, project_id):
        assert project_id == 7
        return self.items


def test_the_design_keeps_the_prepared_strata():
    items = synthetic_items(200, seed=1)
    items["stratum"] = stratify(items["semantic_entropy"], items["agreement"], n_strata=3, by="entropy")
    design = project_design(FakeStore(items), 7)
    assert design.H == items["stratum"].nunique()
    assert (design.stratum == prepared_design(items).stratum).all()
    assert (np.unique(design.stratum, return_counts=True)[1] == items["stratum"].value_counts().sort_index()).all()


def test_only_the_anytime_regime_allocates_for_the_sequence():
    items = synthetic_items(200, seed=1)
    assert prepared_design(items, "anytime").kappa == KAPPA
    assert prepared_design(items).kappa == FLOOR_KAPPA == prepared_design(items, "looks").kappa
    fixed = project_design(FakeStore(items), 7, "fixed")
    assert fixed.kappa == FLOOR_KAPPA
    assert (fixed.stratum == prepared_design(items).stratum).all()


def test_planned_budget():
    assert planned_budget(None, 1319) == 132
    assert planned_budget(None, 40) == 10
    assert planned_budget(200, 1319) == 200
    assert planned_budget(5000, 1319) == 1319
