"""Estimators: hand-computed survey values, intervals that do not collapse, unbiasedness, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.errors import InputError
from core.stats.allocation import design_from_items, make_design
from core.stats.design import prepared_design
from core.stats.estimate import estimate, estimate_batch, grades_needed
from core.stats.model_assisted import difference_residuals
from core.stats.simulate import replay_queue, replication_orders, synthetic_items


@pytest.fixture
def two_strata():
    # N_1 = 10, N_2 = 20 (positions 0..9 and 10..29).
    return make_design(np.repeat([0, 1], [10, 20]), np.full(30, 0.5))


def test_matches_survey_svymean_with_fpc_and_korn_graubard(two_strata):
    """R: svymean(~y, svydesign(ids=~1, strata=~h, fpc=~N, data=d)) on this sample, by hand,
    then svyciprop(~y, design, method="beta") by its formula.

    mean = (1/3)(2/3) + (2/3)(1/2) = 5/9; s_1^2 = s_2^2 = 1/3;
    V = (1/3)^2 (1 - 3/10) (1/3) / 3 + (2/3)^2 (1 - 4/20) (1/3) / 4 = 0.0086420 + 0.0296296.
    n* = (5/9)(4/9) / V, times (t_{6} / t_{5})^2 (df = n - H = 5); Beta quantiles at n* mu.
    """
    positions = [0, 1, 2, 10, 11, 12, 13]
    grades = [1, 0, 1, 1, 1, 0, 0]
    batch = estimate_batch(two_strata, np.array([positions]), np.array([grades]), "stratified")
    assert batch.value[0] == pytest.approx(5 / 9)
    variance = (1 / 9) * 0.7 * (1 / 3) / 3 + (4 / 9) * 0.8 * (1 / 3) / 4
    assert batch.variance[0] == pytest.approx(variance)
    assert batch.df[0] == 5
    size = (5 / 9) * (4 / 9) / variance * (stats.t.ppf(0.975, 6) / stats.t.ppf(0.975, 5)) ** 2
    x = size * 5 / 9
    low, high = batch.interval(0.95)
    assert low[0] == pytest.approx(stats.beta.ppf(0.025, x, size - x + 1))
    assert high[0] == pytest.approx(stats.beta.ppf(0.975, x + 1, size - x))


def test_default_estimate_reports_savings_and_strata(two_strata):
    result = estimate(two_strata, [0, 1, 2, 10, 11, 12, 13], [1, 0, 1, 1, 1, 0, 0])
    assert result.n == 7 and result.ci_low < result.value < result.ci_high
    assert result.missing == ()
    assert result.labels_saved == pytest.approx(result.uniform_labels - 7)
    assert result.saving.low <= result.saving.share <= result.saving.high
    assert result.strata["done"].tolist() == [3, 4]
    assert result.strata["mean"].tolist() == pytest.approx([2 / 3, 1 / 2])
    assert result.strata["size"].tolist() == [10, 20]
    assert result.strata["planned"].sum() == 7


def test_equal_grades_do_not_collapse_the_interval(two_strata):
    result = estimate(two_strata, [0, 1, 10, 11, 12], [1, 1, 1, 1, 1])
    assert result.value == 1.0
    assert result.ci_high == 1.0 and result.ci_low < 0.9
    assert result.se > 0


@pytest.mark.parametrize(("n", "clopper_pearson"), [(60, 0.0596), (100, 0.0362), (200, 0.0182)])
@pytest.mark.parametrize("strata", [1, 3])
def test_all_zero_grades_give_at_least_the_clopper_pearson_bound(n, clopper_pearson, strata):
    """Every grade 0: n* is undefined, so n* = n, the exact bound 1 - 0.025^(1/n) of a simple random sample."""
    design = make_design(np.arange(3000) % strata, np.full(3000, 0.2))
    result = estimate(design, np.arange(n), np.zeros(n))
    assert result.value == 0.0 and result.ci_low == 0.0
    assert result.ci_high >= clopper_pearson
    assert result.ci_high == pytest.approx(1 - 0.025 ** (1 / n), rel=0.05)


def test_an_all_zero_stratum_with_few_grades_keeps_the_interval_open():
    """Half the pool seen twice, both 0, the other half 58 times with 2 ones: the 2 grades say little."""
    design = make_design(np.repeat([0, 1], 1000), np.full(2000, 0.5))
    positions = np.concatenate([[0, 1], np.arange(1000, 1058)])
    grades = np.zeros(60)
    grades[2:4] = 1.0
    result = estimate(design, positions, grades)
    assert result.value == pytest.approx(0.5 * 2 / 58)
    assert result.ci_high > 0.2  # the ungraded 998 items of stratum 0 could hold many ones


def test_strata_whose_grades_are_all_0_are_floored_with_one_prior_between_them():
    """Strata of 14 and 25 grades of 0 beside one of 20 grades half 1: the strata differ, and the two of
    0s carry Jeffreys' half a pseudo-grade between them, p~ = 1/2 / 40, not half a grade each."""
    design = make_design(np.repeat([0, 1, 2], 1000), np.full(3000, 0.5))
    positions = np.concatenate([np.arange(14), np.arange(1000, 1025), np.arange(2000, 2020)])
    grades = np.zeros(59)
    grades[39::2] = 1.0
    p = 0.5 / 40
    s2 = np.array([p * (1 - p), p * (1 - p), np.var(grades[39:], ddof=1)])
    counts = np.array([14, 25, 20])
    expected = np.sum((1 / 3) ** 2 * (1 - counts / 1000) * s2 / counts)
    assert estimate(design, positions, grades).se ** 2 == pytest.approx(expected)


def test_a_stratum_without_grades_is_reported_not_filled(two_strata):
    result = estimate(two_strata, [10, 11, 12], [1.0, 0.0, 1.0])
    assert result.missing == (0,)
    assert np.isnan(result.value) and (result.ci_low, result.ci_high) == (0.0, 1.0)
    assert result.saving is None and result.labels_saved is None


def test_saving_is_withheld_until_every_stratum_has_two_grades(two_strata):
    assert estimate(two_strata, [0, 10, 11], [1.0, 0.0, 1.0]).saving is None
    assert estimate(two_strata, [0, 1, 10, 11], [1.0, 0.0, 0.0, 1.0]).saving is not None


def test_a_census_has_a_zero_width_interval(two_strata):
    grades = (np.arange(30) % 3 == 0).astype(float)
    result = estimate(two_strata, np.arange(30), grades)
    assert result.ci_low == result.ci_high == pytest.approx(grades.mean())


def test_likert_and_continuous_grades(two_strata):
    result = estimate(two_strata, [0, 1, 10, 11], [0.25, 0.75, 0.5, 1.0])
    assert result.value == pytest.approx((1 / 3) * 0.5 + (2 / 3) * 0.75)


def test_no_grade_yet(two_strata):
    result = estimate(two_strata, [], [])
    assert np.isnan(result.value) and (result.ci_low, result.ci_high) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("positions", "grades", "message"),
    [
        ([0, 1], [1.0], "2 graded positions but 1 grades"),
        ([0, 0], [1, 1], "graded twice"),
        ([0], [1.5], "not in \\[0, 1\\]"),
        ([99], [1], "outside the pool"),
    ],
)
def test_bad_grades_are_input_errors(two_strata, positions, grades, message):
    with pytest.raises(InputError, match=message):
        estimate(two_strata, positions, grades)
    with pytest.raises(InputError, match="unknown estimation method"):
        estimate(two_strata, [0], [1.0], method="magic")


def test_an_unknown_method_is_refused_before_any_grade(two_strata):
    with pytest.raises(InputError, match="unknown estimation method"):
        estimate(two_strata, [], [], method="magic")
    with pytest.raises(InputError, match="unknown estimation method"):
        grades_needed(two_strata, [], [], half_width=0.1, method="magic")


def test_cross_fitting_never_uses_an_items_own_grade():
    design = design_from_items(synthetic_items(200))
    order = replication_orders(design.N, 0, 1)[0][:40]
    grades = (np.arange(40) % 3 == 0).astype(float)
    base = difference_residuals(design, order[None], grades[None])[0]
    for i in (0, 7, 23):
        flipped = grades.copy()
        flipped[i] = 1 - flipped[i]
        changed = difference_residuals(design, order[None], flipped[None])[0]
        # The item's own residual moves by exactly its grade's change: its prediction did not.
        assert changed[i] - base[i] == pytest.approx(flipped[i] - grades[i])


def test_difference_estimator_gains_from_a_covariate_that_predicts_within_strata():
    rng = np.random.default_rng(0)
    agreement = rng.random(2000)
    labels = (rng.random(2000) < agreement).astype(float)
    design = make_design(np.zeros(2000, dtype=int), np.full(2000, 0.5), agreement[:, None])
    orders = replication_orders(2000, 1, 400)[:, :100]
    plain = estimate_batch(design, orders, labels[orders], "stratified")
    model = estimate_batch(design, orders, labels[orders], "difference")
    mu = labels.mean()
    assert np.mean((model.value - mu) ** 2) < 0.8 * np.mean((plain.value - mu) ** 2)
    assert abs(model.value.mean() - mu) < 3 * model.value.std() / np.sqrt(400)


@pytest.mark.parametrize(
    ("method", "scale"), [("stratified", "binary"), ("difference", "binary"), ("stratified", "likert")]
)
def test_queue_and_estimator_unbiased_with_honest_coverage(method, scale):
    """1,000 replays of the anytime queue on a synthetic pool: bias within noise, coverage 93.5-98.5%."""
    items = synthetic_items(800, seed=2, likert=scale == "likert")
    labels = items["label"].to_numpy()
    design = design_from_items(items)
    orders = replication_orders(design.N, 4, 1000)
    positions = replay_queue(design, labels, orders, 60)
    batch = estimate_batch(design, positions, labels[positions], method)
    low, high = batch.interval(0.95)
    mu = labels.mean()
    assert abs(batch.value.mean() - mu) < 3 * batch.value.std() / np.sqrt(1000)
    assert 0.935 <= np.mean((low <= mu) & (mu <= high)) <= 0.985


def test_grades_needed_shrinks_with_the_target(two_strata):
    wide = grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=0.3)
    narrow = grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=0.1)
    assert 4 <= wide < narrow <= 30
    assert grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=1.0) == 4
    with pytest.raises(InputError, match="positive"):
        grades_needed(two_strata, [], [], half_width=0)


def test_no_standard_error_of_0_beside_an_interval_of_almost_0_to_1():
    """Two grades that agree in one stratum and one in the other show no spread: the variance reads 0 and the
    interval falls back to n* = n, nearly [0, 1]; the standard error is then unknown (NaN, null in the API), not 0
    (the API's review read "se": 0.0 beside [0.05, 1.00] as exact). A standard error at a bound stays a number."""
    design = prepared_design(synthetic_items(40, seed=1))
    assert design.H == 2 and [int(design.stratum[p]) for p in (36, 24, 25)] == [0, 0, 1]
    inside = estimate(design, [36, 24, 25], [1.0, 1.0, 0.0])
    assert 0 < inside.value < 1 and np.isnan(inside.se) and inside.ci_low < 0.01 and inside.ci_high > 0.99
    at_bound = estimate(design, [36, 24, 25], [1.0, 1.0, 1.0])
    assert at_bound.value == 1 and np.isfinite(at_bound.se)
