"""core.services.overview (the stratifying variable's own ranges) and core.services.target_plan (the setup page's headline)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.services.overview import histogram, strata_table, stratifying_columns
from core.services.progress import STOPPING_INTERVAL, items_to_target
from core.services.target_plan import plan_for_target, uniform_items
from core.stats.allocation import make_design


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


def test_uniform_items_is_cochrans_sample_size():
    z = stats.norm.ppf(0.975)
    n0 = z**2 * 0.25 / 0.05**2
    assert uniform_items(10_000, 0.5, 0.05) == math.ceil(n0 / (1 + n0 / 10_000))
    assert uniform_items(50, 0.5, 0.001) == 50


def test_plan_for_target_gives_a_range_around_its_headline_below_uniform_with_signal():
    stratum = np.repeat(np.arange(3), 2000)
    proxy = np.array([0.98, 0.5, 0.02])[stratum]
    design = make_design(stratum, proxy, np.c_[proxy])
    plan = plan_for_target(design, 0.02)
    assert plan.low <= plan.items <= plan.high <= design.N
    assert plan.items < plan.uniform and plan.interval == STOPPING_INTERVAL
    low, high = plan.saving_range  # the headline's saving range holds its own point figure
    assert low <= 1 - plan.items / plan.uniform <= high and low < high
    assert plan.items == items_to_target(design, [], [], 0.02)  # the dashboard's projection, the same interval


def test_with_the_anytime_interval_both_counts_are_for_it_and_a_fixed_budget_reads_the_fixed_n_one():
    from core.services.progress import FIXED_BUDGET_INTERVAL, width_ratio
    from core.stats.confseq import anytime_interval
    from core.stats.estimate import estimate

    stratum = np.repeat(np.arange(3), 2000)
    rng = np.random.default_rng(1)
    proxy = np.clip(np.array([0.95, 0.5, 0.05])[stratum] + rng.uniform(-0.3, 0.3, stratum.size), 0, 1)
    design = make_design(stratum, proxy, np.c_[proxy])  # the proxy varies within strata: the estimators differ
    positions = [int(p) for h in range(3) for p in rng.choice(np.flatnonzero(stratum == h), 20, replace=False)]
    grades = [float(rng.random() < proxy[p]) for p in positions]
    anytime = anytime_interval(design, positions, grades, 200)
    ratio = width_ratio(design, positions, grades, anytime=anytime)
    assert 0 < ratio < 1  # the anytime interval is the wider
    plan = plan_for_target(design, 0.02, positions, grades, anytime=anytime)
    assert plan.items == items_to_target(design, positions, grades, 0.02, anytime=anytime)  # the dashboard's
    p = float(np.clip(estimate(design, positions, grades).value, 0.01, 0.99))
    assert plan.uniform == uniform_items(design.N, p, 0.02 * ratio)  # uniform's count for the same interval
    assert plan.items < plan.uniform and plan.interval == STOPPING_INTERVAL
    low, high = plan.saving_range  # the headline's saving range holds its own point figure
    assert low <= 1 - plan.items / plan.uniform <= high and low < high
    fixed = plan_for_target(design, 0.02, positions, grades, anytime=anytime, budget_fixed=True)
    assert fixed.interval == FIXED_BUDGET_INTERVAL and fixed.items == items_to_target(design, positions, grades, 0.02)
    assert fixed.uniform == uniform_items(design.N, p, 0.02) and fixed.items < plan.items
    other = plan_for_target(design, 0.02, positions, grades, anytime=anytime, method="difference")
    assert other.items == items_to_target(design, positions, grades, 0.02, "difference", anytime)  # the project's
    assert other.items != plan.items  # estimator, as the dashboard's projection uses it
