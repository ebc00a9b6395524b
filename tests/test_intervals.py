"""Fixed-n intervals (core.stats.intervals): hand-computed cases and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from core.stats.intervals import (
    all_equal_floor,
    beta_interval,
    effective_size,
    equal_strata_floor,
    korn_graubard,
    sample_variance,
    satterthwaite_df,
    stratum_variance,
)


def test_beta_interval_is_clopper_pearson_at_whole_counts():
    # 3 of 20: scipy's exact binomial interval.
    exact = stats.binomtest(3, 20).proportion_ci(0.95, method="exact")
    assert beta_interval(np.array(3 / 20), np.array(20.0)) == pytest.approx((exact.low, exact.high))
    # 0 of 60: (0, 1 - 0.025^(1/60)); 60 of 60 mirrored.
    assert beta_interval(np.array(0.0), np.array(60.0)) == pytest.approx((0.0, 1 - 0.025 ** (1 / 60)))
    assert beta_interval(np.array(1.0), np.array(60.0)) == pytest.approx((0.025 ** (1 / 60), 1.0))


def test_effective_size_rule_where_undefined():
    """n* = mu (1 - mu) / V; n where mu is 0 or 1 or V = 0."""
    sizes = effective_size(np.array([0.2, 0.0, 1.0, 0.3]), np.array([0.0016, 0.0, 0.001, 0.0]), np.array(50))
    assert sizes.tolist() == pytest.approx([100.0, 50.0, 50.0, 50.0])


def test_korn_graubard_by_hand():
    """svyciprop(method = "beta"): n* = 0.16 / 0.0016 = 100, times (t_49 / t_45)^2, Beta quantiles."""
    size = 100 * (stats.t.ppf(0.975, 49) / stats.t.ppf(0.975, 45)) ** 2
    low, high = korn_graubard(np.array(0.2), np.array(0.0016), np.array(50.0), np.array(45.0))
    assert low == pytest.approx(stats.beta.ppf(0.025, 0.2 * size, 0.8 * size + 1))
    assert high == pytest.approx(stats.beta.ppf(0.975, 0.2 * size + 1, 0.8 * size))


def test_a_census_collapses_only_with_infinite_size():
    assert korn_graubard(np.array(0.3), np.array(0.0), np.array(np.inf), np.array(np.inf)) == pytest.approx((0.3, 0.3))
    low, high = korn_graubard(np.array(0.0), np.array(0.0), np.array(40.0), np.array(39.0))
    assert low == 0.0 and high >= 1 - 0.025 ** (1 / 40) - 1e-12


def test_stratum_variance_by_hand():
    # Grades 1, 0, 1: s^2 = (2 - 4/3) / 2 = 1/3. Grades 0, 0, 0 (W = 1): p~ = (0 + 1/2) / 4 = 1/8.
    counts, sums, sumsq = np.array([3, 3, 1, 0]), np.array([2.0, 0.0, 1.0, 0.0]), np.array([2.0, 0.0, 1.0, 0.0])
    assert sample_variance(counts, sums, sumsq).tolist() == pytest.approx([1 / 3, 0.0, 0.0, 0.0])
    # One grade of 1 (W = 1): p~ = 1.5 / 2 = 3/4.
    assert stratum_variance(counts, sums, sumsq).tolist() == pytest.approx([1 / 3, 7 / 64, 3 / 16, 0.0])
    # Every grade 1/2: the Bernoulli variance at 1/2, whatever n_h.
    assert all_equal_floor(np.array([50]), np.array([25.0]), np.array([12.5])) == pytest.approx([0.25])


def test_strata_that_agree_on_one_grade_share_one_jeffreys_prior():
    """Two strata of 14 and 25 grades of 0 read p~ = 1/2 / 40 together; a stratum of 4 grades of 1 has its
    own, 1 - 1/2 / 5; a stratum whose grades differ has no floor."""
    counts = np.array([[14, 25, 4, 6]])
    sums = np.array([[0.0, 0.0, 4.0, 3.0]])
    floor = equal_strata_floor(counts, sums, sums)
    zeros, ones = 0.5 / 40, 1 - 0.5 / 5
    assert floor[0].tolist() == pytest.approx([zeros * (1 - zeros)] * 2 + [ones * (1 - ones), 0.0])
    # one such stratum alone: the per-stratum floor
    assert equal_strata_floor(counts[:, 1:], sums[:, 1:], sums[:, 1:]) == pytest.approx(
        all_equal_floor(counts[:, 1:], sums[:, 1:], sums[:, 1:])
    )


def test_agreeing_strata_of_a_finer_scale_read_the_share_of_the_strata_that_differ():
    """Two strata of all-0 Likert grades and one whose grades differ (0, 0.25, 0.5, 0.25: within-stratum sum of
    squares 0.125 against a Bernoulli sum 4 m (1 - m) = 0.75 at m = 0.25): the agreeing strata's floor is that
    share, with Jeffreys' pseudo-grade, of the Bernoulli variance at their one prior. Where every stratum agrees
    (all grades 1/2 so far), no stratum shows a spread and the floor keeps the whole Bernoulli variance."""
    counts = np.array([[14.0, 25.0, 4.0]])
    sums = np.array([[0.0, 0.0, 1.0]])
    sumsq = np.array([[0.0, 0.0, 0.375]])
    whole = 1.5 / 44
    pseudo = whole * (1 - whole)
    rho = (0.125 + pseudo) / (0.75 + pseudo)
    zeros = 0.5 / 40
    floor = equal_strata_floor(counts, sums, sumsq)[0]
    assert floor.tolist() == pytest.approx([rho * zeros * (1 - zeros)] * 2 + [0.0])
    halves = equal_strata_floor(np.array([[10.0, 20.0]]), np.array([[5.0, 10.0]]), np.array([[2.5, 5.0]]))
    assert halves[0].tolist() == pytest.approx([0.25, 0.25])


def test_satterthwaite_by_hand():
    # One stratum: df = n - 1.
    assert satterthwaite_df(np.array([1.0]), np.array([1000.0]), np.array([12]), np.array([0.2])) == pytest.approx(11)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), weight=st.floats(0.01, 1.0), ones=st.booleans())
def test_an_all_equal_stratum_does_not_shrink_faster_than_one_over_n(n, weight, ones):
    """Its term W^2 s~^2 / n_h, times n_h^2, stays above W^3 / 8: the width falls like 1/n_h, as
    Clopper-Pearson's 1 - 0.025^(1/n_h) does, and no faster."""
    floor = all_equal_floor(np.array([n]), np.array([float(n) if ones else 0.0]), np.array([float(n) if ones else 0.0]))
    assert weight**2 * floor[0] / n * n**2 >= weight**3 / 8


@settings(max_examples=200, deadline=None)
@given(value=st.floats(0, 1), size=st.floats(0.5, 1e5), bigger=st.floats(1.0, 10.0))
def test_beta_interval_contains_the_estimate_and_narrows_with_size(value, size, bigger):
    low, high = beta_interval(np.array(value), np.array(size))
    assert 0 <= low <= value <= high <= 1
    low2, high2 = beta_interval(np.array(value), np.array(size * bigger))
    assert high2 - low2 <= high - low + 1e-9


def test_the_df_factor_never_narrows_the_interval_below_its_effective_size():
    """Two strata of one grade each: Satterthwaite's df, counting each as one df, passed n - 1, and Korn-Graubard's
    factor (t_{n-1} / t_df)^2 came to 8.7, a 95% interval 0.86 wide for a standard error of 0.6 (an integrator's
    review)."""
    import numpy as np

    from core.stats.intervals import degrees_of_freedom_factor, satterthwaite_df

    df = satterthwaite_df(np.array([0.5, 0.5]), np.array([50.0, 50.0]), np.array([1.0, 1.0]), np.array([0.25, 0.25]))
    assert float(df) > 1.0  # more than the n - 1 = 1 two grades have
    assert float(degrees_of_freedom_factor(np.array(2.0), df)) == 1.0
    factors = degrees_of_freedom_factor(np.array([3.0, 10.0, 40.0]), np.array([2.9, 9.5, np.inf]))
    assert (factors <= 1.0).all()
