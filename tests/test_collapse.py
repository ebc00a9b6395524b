"""Strata read as one until their grades differ (core.stats.collapse): the queue, the variance, the interval."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.allocation import FLOOR_KAPPA, KAPPA, make_design
from core.stats.collapse import pooled_within_variance, spreads_differ, strata_differ
from core.stats.estimate import estimate
from core.stats.queue import queue_spreads, queue_stratum
from core.stats.spreads import pooled_sums


def _moments(groups):
    counts = np.array([[len(g) for g in groups]], dtype=float)
    sums = np.array([[sum(g) for g in groups]], dtype=float)
    sumsq = np.array([[sum(x * x for x in g) for g in groups]], dtype=float)
    return counts, sums, sumsq


def test_the_f_test_tells_differing_strata_from_equal_ones():
    same = _moments([[0, 1, 0, 1, 1, 0]] * 3)
    apart = _moments([[0] * 8, [1] * 8, [0, 1] * 4])
    assert not strata_differ(*same)[0] and strata_differ(*apart)[0]
    assert not strata_differ(*_moments([[0], [1]]))[0]  # undefined (n <= H): not shown to differ


def test_bartletts_test_sees_spreads_that_differ_where_the_means_do_not():
    """Differences between two targets' grades (z = (1 + d) / 2): a stratum of agreeing answers is all 1/2, the
    others spread around 1/2. The means' F test cannot see it; Bartlett's test does."""
    quiet, spread = [0.5] * 12, [0.0, 0.5, 1.0, 0.5] * 3
    moments = _moments([quiet, spread, spread])
    assert not strata_differ(*moments)[0] and spreads_differ(*moments)[0]
    assert not spreads_differ(*_moments([spread, spread[::-1], spread]))[0]
    assert not spreads_differ(*_moments([[0.5, 0.5], spread, spread]))[0]  # two equal values by chance
    assert not spreads_differ(*_moments([[0.5] * 3, [0.5] * 4]))[0]  # no spread anywhere: undefined
    assert not spreads_differ(*_moments([[0.5] * 9, [1.0]]))[0]  # one stratum of 2 values or more


def test_bartletts_test_rejects_equal_spreads_at_about_its_level():
    rng = np.random.default_rng(3)
    values = rng.choice([0.0, 0.5, 1.0], size=(4000, 5, 12), p=[0.2, 0.6, 0.2])
    moments = (np.full((4000, 5), 12.0), values.sum(axis=-1), (values**2).sum(axis=-1))
    assert spreads_differ(*moments).mean() < 0.08


def test_the_pooled_within_variance_and_its_floor():
    groups = [[0.0, 1.0, 1.0], [0.2, 0.4], [0.5]]
    counts, sums, sumsq = _moments(groups)
    expected = (2 * np.var(groups[0], ddof=1) + 1 * np.var(groups[1], ddof=1)) / 3
    assert pooled_within_variance((counts, sums, sumsq))[0] == pytest.approx(expected)
    zeros = _moments([[0.0] * 10, [0.0] * 10])
    centre = 0.5 / 21  # Jeffreys on all 20 grades together, not half a pseudo-grade per stratum
    assert pooled_within_variance(zeros)[0] == pytest.approx(centre * (1 - centre))


def test_a_rare_positive_costs_no_floor_per_stratum():
    """Mean 0.02: one positive in 50 grades over 5 equal strata. Each all-zero stratum used to carry Jeffreys'
    half pseudo-grade, which made the interval about twice as wide as a uniform sample's of the same grades."""
    design = make_design(np.repeat(np.arange(5), 400), np.full(2000, 0.5))
    positions = np.concatenate([np.arange(h * 400, h * 400 + 10) for h in range(5)])
    grades = np.zeros(50)
    grades[0] = 1.0
    stratified = estimate(design, positions, grades)
    uniform = estimate(make_design(np.zeros(2000, dtype=int), np.full(2000, 0.5)), positions, grades)
    width = stratified.ci_high - stratified.ci_low
    assert width == pytest.approx(uniform.ci_high - uniform.ci_low, rel=0.05)


def test_the_queue_allocates_proportionally_until_the_strata_differ():
    sizes = np.array([100, 300, 600])
    design = make_design(np.repeat(np.arange(3), sizes), np.repeat([0.05, 0.5, 0.95], sizes))
    positions = np.array([0, 1, 100, 101, 400, 401])
    same = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    spreads = queue_spreads(design, _moments([same[:2], same[2:4], same[4:]]), pooled_sums(design, positions, same))
    assert np.ptp(spreads) == pytest.approx(0.0)  # one common spread: Neyman is proportional
    apart = np.array([0.0] * 10 + [1.0, 0.0] * 5 + [1.0] * 10)
    moments = _moments([apart[:10], apart[10:20], apart[20:]])
    at = np.concatenate([np.arange(10), 100 + np.arange(10), 400 + np.arange(10)])
    assert np.ptp(queue_spreads(design, moments, pooled_sums(design, at, apart))) > 0.05


@pytest.mark.parametrize(("kappa", "largest"), [(FLOOR_KAPPA, 5), (KAPPA, 4)])
def test_while_pooled_the_fixed_n_queue_drops_the_floors_small_n_term(kappa, largest):
    """Grades that vary little and show no difference between strata: the queue of a design read with the
    fixed-n interval allocates proportionally (its all-equal floor is the pooled sample's), while the anytime
    interval's per-stratum term still evens the strata out."""
    sizes = np.array([150, 150, 150, 550])
    design = make_design(np.repeat(np.arange(4), sizes), np.full(sizes.sum(), 0.5), kappa=kappa)
    counts = np.zeros(4, dtype=int)
    grades = [[], [], [], []]
    for _ in range(10):
        moments = _moments(grades)
        h = int(queue_stratum(design, counts[None], moments, pooled_sums(design, [], []))[0])
        counts[h] += 1
        grades[h].append(0.05 * (len(grades[h]) % 2))
    assert not strata_differ(*_moments(grades))[0] and counts[3] == largest
