"""Allocations: hand-computed cases and invariants (sums, floors, caps, prefixes) as properties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.stats.allocation import (
    KAPPA,
    allocation_objective,
    design_from_items,
    greedy_counts,
    largest_remainder,
    make_design,
    next_stratum,
    neyman_allocation,
    planned_allocation,
    proportional_allocation,
    stratified_variance,
)
from core.stats.simulate import synthetic_items
from core.stats.spreads import adaptive_sd, calibrated_prior_sd, pooled_sums
from core.stats.stopping import FLOOR_KAPPA, allocation_kappa

strata_sizes = st.lists(st.integers(1, 60), min_size=1, max_size=6)


def test_largest_remainder_by_hand():
    # floors 2, 1, 1 (= 4); the one grade left goes to the largest remainder, 0.5.
    assert largest_remainder(np.array([2.5, 1.3, 1.2]), 5, caps=np.array([10, 10, 10])).tolist() == [3, 1, 1]


def test_neyman_by_hand():
    # N_h S_h = 100 * 0.5 = 200 * 0.25: equal shares.
    assert neyman_allocation(np.array([100, 200]), np.array([0.5, 0.25]), 20).tolist() == [10, 10]
    # n_h proportional to N_h S_h = 30, 10, 60 for n = 10.
    assert neyman_allocation(np.array([100, 100, 200]), np.array([0.3, 0.1, 0.3]), 10, floor=1).tolist() == [3, 1, 6]


def test_neyman_caps_a_small_stratum_and_reallocates():
    # Quota of stratum 0 would be 50 * 5 / 15 = 16.7 > N_0 = 5 (Cochran 5.8).
    assert neyman_allocation(np.array([5, 1000]), np.array([1.0, 0.01]), 50).tolist() == [5, 45]


def test_neyman_floor_for_a_stratum_without_spread():
    assert neyman_allocation(np.array([1000, 1000]), np.array([1.0, 0.0]), 10).tolist() == [8, 2]


def test_proportional_by_hand():
    # Quotas 1, 3, 6; stratum 0 lifted to its floor of 2; 8 left over 30:60 -> 2.67, 5.33 -> 3, 5.
    assert proportional_allocation(np.array([10, 30, 60]), 10).tolist() == [2, 3, 5]


@settings(max_examples=200, deadline=None)
@given(sizes=strata_sizes, data=st.data())
def test_neyman_invariants(sizes, data):
    sizes = np.array(sizes)
    sds = np.array(data.draw(st.lists(st.floats(0, 1), min_size=sizes.size, max_size=sizes.size)))
    floor = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(0, int(sizes.sum())))
    alloc = neyman_allocation(sizes, sds, n, floor)
    assert alloc.sum() == n
    assert (alloc >= 0).all() and (alloc <= sizes).all()
    floors = np.minimum(floor, sizes)
    if n >= floors.sum():
        assert (alloc >= floors).all()


@settings(max_examples=150, deadline=None)
@given(sizes=strata_sizes, data=st.data())
def test_queue_prefixes(sizes, data):
    """Every prefix adds one grade to one open stratum; every stratum's floor comes before anything else,
    one grade per stratum per round."""
    sizes = np.array(sizes)
    weights = sizes / sizes.sum()
    sds = np.array(data.draw(st.lists(st.floats(0, 1), min_size=sizes.size, max_size=sizes.size)))
    floor = data.draw(st.integers(1, 3))
    counts = np.zeros(sizes.size, dtype=np.int64)
    for n in range(1, sizes.sum() + 1):
        h = int(next_stratum(weights, sds, counts, sizes, floor))
        assert 0 <= h and counts[h] < sizes[h]
        counts[h] += 1
        assert counts.sum() == n
        floors = np.minimum(floor, sizes)
        if n <= floors.sum():  # still serving floors: round robin, never a grade beyond a floor
            assert (counts <= floors).all() and counts.max() - counts[counts < floors].min(initial=counts.max()) <= 1
        else:
            assert (counts >= floors).all()
        if n >= sizes.size:
            assert (counts >= 1).all()
    assert next_stratum(weights, sds, counts, sizes, floor) == -1
    assert (greedy_counts(sizes, sds, sizes.sum(), floor) == sizes).all()


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(3, 9), min_size=2, max_size=3), data=st.data())
def test_queue_prefix_is_the_optimal_allocation_once_floors_are_met(sizes, data):
    sizes = np.array(sizes)
    weights = sizes / sizes.sum()
    sds = np.array(data.draw(st.lists(st.floats(0.05, 1), min_size=sizes.size, max_size=sizes.size)))
    floor = 2
    n = data.draw(st.integers(floor * sizes.size, int(sizes.sum())))
    greedy = greedy_counts(sizes, sds, n, floor)
    best = min(
        allocation_objective(weights, sizes, sds, np.array(a))
        for a in itertools.product(*(range(floor, s + 1) for s in sizes))
        if sum(a) == n
    )
    assert allocation_objective(weights, sizes, sds, greedy) == pytest.approx(best, rel=1e-9, abs=1e-15)


def test_strata_whose_grades_agree_still_get_grades_for_the_anytime_interval():
    """Neyman alone gives a stratum of spread ~0 nothing beyond its floor; the anytime term (KAPPA / n_h^2)
    keeps giving it grades, and the allocation tends to Neyman's as every n_h grows."""
    sizes = np.array([200, 800])
    weights = sizes / sizes.sum()
    sds = np.array([0.0, 0.5])
    counts = greedy_counts(sizes, sds, 200, 2)
    assert counts[0] > 2
    # The greedy stops giving stratum 0 grades exactly where its drop falls below stratum 1's.
    k0, k1 = counts.astype(float)
    drop0 = weights[0] ** 2 * KAPPA * (2 * k0 + 1) / (k0**2 * (k0 + 1) ** 2)
    drop1 = weights[1] ** 2 * (sds[1] ** 2 / (k1 * (k1 + 1)) + KAPPA * (2 * k1 + 1) / (k1**2 * (k1 + 1) ** 2))
    assert drop0 <= drop1 * (1 + 1e-12)
    neyman = 200 * 0.1 / (200 * 0.1 + 800 * 0.5)
    gaps = [greedy_counts(sizes, np.array([0.1, 0.5]), n, 2)[0] / n - neyman for n in (50, 150, 450)]
    assert gaps[0] > gaps[1] > gaps[2] > 0


def test_with_kappa_zero_the_queue_is_plain_neyman_at_every_prefix():
    """A budget fixed in advance (kappa = 0): after the floors every prefix minimises the stratified variance
    alone, so a stratum whose grades all agree gets nothing beyond its floor."""
    sizes = np.array([200, 800])
    assert greedy_counts(sizes, np.array([0.0, 0.5]), 200, 2, kappa=0.0)[0] == 2
    sds = np.array([0.1, 0.3, 0.5])
    sizes = np.array([6, 7, 8])
    weights = sizes / sizes.sum()
    for n in range(6, 22):
        greedy = greedy_counts(sizes, sds, n, 2, kappa=0.0)
        best = min(
            stratified_variance(weights, sizes, sds, np.array(a))
            for a in itertools.product(*(range(2, s + 1) for s in sizes))
            if sum(a) == n
        )
        assert stratified_variance(weights, sizes, sds, greedy) == pytest.approx(best, rel=1e-12)
    assert (
        allocation_kappa("fixed") == FLOOR_KAPPA == allocation_kappa("looks") and allocation_kappa("anytime") == KAPPA
    )


def test_adaptive_sd_by_hand():
    # Grades 1, 0, 1: squared deviations 2 - 4/3 = 2/3; (2 * 0.25 + 2/3) / (2 + 2).
    value = adaptive_sd(np.array([0.5]), 2.0, np.array([3]), np.array([2.0]), np.array([2.0]))
    assert value[0] ** 2 == pytest.approx((0.5 + 2 / 3) / 4)
    # k = 0: the sample standard deviation; 0 for fewer than two grades.
    plain = adaptive_sd(np.array([0.5, 0.5]), 0.0, np.array([3, 1]), np.array([2.0, 1.0]), np.array([2.0, 1.0]))
    assert plain.tolist() == pytest.approx([np.sqrt(1 / 3), 0.0])


def calibrated(design, positions, grades):
    return calibrated_prior_sd(design, *pooled_sums(design, np.asarray(positions), np.asarray(grades, dtype=float)))


def test_calibration_without_grades_is_the_surrogate_prior():
    design = make_design(np.repeat([0, 1, 2], 100), np.repeat([0.0, 0.5, 1.0], 100))
    assert calibrated(design, [], []) == pytest.approx(design.prior_sd)


def test_calibration_follows_the_grades():
    """Grades that track the surrogate steeply shrink the extreme strata's spreads; flat grades flatten them."""
    strata = np.repeat([0, 1, 2], 100)
    design = make_design(strata, np.repeat([0.0, 0.5, 1.0], 100), calibration_strength=10)
    positions = np.concatenate([np.arange(0, 40), np.arange(100, 140), np.arange(200, 240)])
    steep = np.repeat([0.0, 0.5, 1.0], 40).round()  # all wrong, half right, all right
    steep[40:80] = np.arange(40) % 2
    flat = np.arange(120) % 2
    steep_sd, flat_sd = calibrated(design, positions, steep), calibrated(design, positions, flat)
    assert steep_sd[0] < design.prior_sd[0] and steep_sd[2] < design.prior_sd[2]
    assert np.ptp(flat_sd) < 0.5 * np.ptp(design.prior_sd)
    # Grades of 1/2 instead of alternating 0 and 1 (same means) use less of the 0/1 bound m (1 - m).
    halves = steep.copy()
    halves[40:80] = 0.5
    assert (calibrated(design, positions, halves) < steep_sd).all()
    # Batches: the same numbers row by row.
    batch = calibrated_prior_sd(design, *pooled_sums(design, np.stack([positions, positions]), np.stack([steep, flat])))
    assert batch == pytest.approx(np.stack([steep_sd, flat_sd]))


def test_design_from_prepared_items():
    items = synthetic_items(300)
    design = design_from_items(items, stratify_by=None)
    assert design.N == 300 and design.sizes.sum() == 300
    assert np.array_equal(design.stratum, items["stratum"].to_numpy())
    assert design.ids[0] == "item-00000"
    assert design.covariates.shape == (300, 2)
    # Smoothed proxy: 1/2 + shrink (a - 1/2), so spreads never vanish.
    assert design.proxy.min() == pytest.approx(0.25) and design.proxy.max() == pytest.approx(0.75)
    assert (design.prior_sd > 0.4).all()


def test_design_restratifies_by_agreement_by_default():
    items = synthetic_items(300)
    design = design_from_items(items)
    mean_agreement = [items["agreement"][design.stratum == h].mean() for h in range(design.H)]
    assert mean_agreement == sorted(mean_agreement, reverse=True)


def test_items_without_samples_get_a_neutral_proxy():
    items = synthetic_items(100)
    items.loc[:4, ["agreement", "semantic_entropy"]] = np.nan
    design = design_from_items(items)
    assert np.isfinite(design.covariates).all()
    assert design.proxy[:5] == pytest.approx(0.5)
    assert len(np.unique(design.stratum[:5])) == 1


@pytest.mark.filterwarnings("error")
def test_a_pool_without_any_sample_gives_one_neutral_stratum_quietly():
    items = synthetic_items(40)
    items[["agreement", "semantic_entropy"]] = np.nan
    design = design_from_items(items)
    assert design.H == 1 and design.covariates.shape == (40, 0)
    assert design.proxy == pytest.approx(0.5)


def test_design_errors_name_the_problem():
    with pytest.raises(InputError, match="agreement"):
        design_from_items(pd.DataFrame({"stratum": [0, 1], "semantic_entropy": [0.0, 1.0]}))
    with pytest.raises(InputError, match="row 2"):
        design_from_items(pd.DataFrame({"stratum": [0, None], "agreement": [1.0, 0.0]}), stratify_by=None)


def test_the_planned_allocation_spends_the_budget():
    strata = np.repeat([0, 1], 500)
    informative = make_design(strata, np.repeat([0.0, 1.0], 500), shrink=0.9)
    assert planned_allocation(informative, 100).sum() == 100
