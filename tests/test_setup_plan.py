"""core.services.overview: the stratifying variable's own ranges and its histogram."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.services.overview import empty_responses, histogram, strata_table, stratifying_columns
from core.services.setup import planned_budget_chosen
from core.settings import ProjectSettings


def _items() -> pd.DataFrame:
    agreement = np.r_[np.ones(10), np.linspace(0.1, 0.9, 20)]
    return pd.DataFrame(
        {
            "agreement": agreement,
            "semantic_entropy": np.r_[np.zeros(10), np.full(20, np.log(8))],  # tied entropies across strata
            "stratum": np.r_[np.zeros(10, int), np.ones(10, int), np.full(10, 2)],
        }
    )


def test_strata_by_agreement_show_agreement_ranges_that_differ():
    table = strata_table(_items(), "agreement")
    assert list(table.columns) == ["stratum", "items", "share", "agreement from", "agreement to", "mean agreement"]
    ranges = list(zip(table["agreement from"], table["agreement to"]))
    assert len(set(ranges)) == 3
    assert "entropy from" in strata_table(_items(), "entropy").columns
    assert stratifying_columns("both") == ["semantic_entropy", "agreement"]


def test_histogram_counts_items_per_bin_and_stratum():
    h = histogram(_items(), "agreement", bins=10)
    assert h["items"].sum() == 30 and set(h["stratum"]) == {0, 1, 2}
    assert h["to"].max() == pytest.approx(1.0)


def test_a_planned_budget_left_as_offered_stays_unset_unless_the_budget_is_fixed_in_the_same_save():
    """Unset and untouched, n0 keeps following the forecast; a budget fixed in the same save is the n0 the form
    showed, not the default of 10% of the pool; a number typed is kept."""
    unset = ProjectSettings()
    assert planned_budget_chosen(unset, 126, 126, budget_fixed=False) is None
    assert planned_budget_chosen(unset, 126, 126, budget_fixed=True) == 126
    assert planned_budget_chosen(unset, 90, 126, budget_fixed=False) == 90
    assert planned_budget_chosen(ProjectSettings(planned_budget=126), 126, 126, budget_fixed=False) == 126


def test_items_with_an_empty_response_are_named_for_the_setup_pages_warning():
    items = pd.DataFrame({"id": ["q1", "q2", "q3", "q4"], "response": ["4", "", "  \n", None]})
    assert empty_responses(items) == ["q2", "q3", "q4"]  # accepted without a word before (a manager's review)
    assert empty_responses(items.drop(columns="response")) == []  # a comparison's responses are per model
