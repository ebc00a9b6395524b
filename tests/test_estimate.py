"""Estimators: hand-computed survey values, intervals that do not collapse, unbiasedness, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.allocation import design_from_items, make_design
from core.errors import InputError
from core.estimate import estimate, estimate_batch, grades_needed
from core.model_assisted import difference_residuals
from core.simulate import replay_queue, replication_orders, synthetic_items


@pytest.fixture
def two_strata():
    # N_1 = 10, N_2 = 20 (positions 0..9 and 10..29).
    return make_design(np.repeat([0, 1], [10, 20]), np.full(30, 0.5))


def test_matches_survey_svymean_with_fpc(two_strata):
    """R: svymean(~y, svydesign(ids=~1, strata=~h, fpc=~N, data=d)) on this sample, by hand.

    mean = (1/3)(2/3) + (2/3)(1/2) = 5/9; s_1^2 = s_2^2 = 1/3;
    V = (1/3)^2 (1 - 3/10) (1/3) / 3 + (2/3)^2 (1 - 4/20) (1/3) / 4 = 0.0086420 + 0.0296296.
    """
    positions = [0, 1, 2, 10, 11, 12, 13]
    grades = [1, 0, 1, 1, 1, 0, 0]
    batch = estimate_batch(two_strata, np.array([positions]), np.array([grades]), "stratified", variance_prior=0.0)
    assert batch.value[0] == pytest.approx(5 / 9)
    variance = (1 / 9) * 0.7 * (1 / 3) / 3 + (4 / 9) * 0.8 * (1 / 3) / 4
    assert batch.variance[0] == pytest.approx(variance)
    # Satterthwaite df: V^2 / sum_h (a_h s_h^2)^2 / (n_h - 1).
    a1, a2 = (1 / 9) * 0.7 / 3 / 3, (4 / 9) * 0.8 / 4 / 3
    assert batch.df[0] == pytest.approx(variance**2 / (a1**2 / 2 + a2**2 / 3))
    low, high = batch.interval(0.95)
    half = stats.t.ppf(0.975, batch.df[0]) * np.sqrt(variance)
    assert (low[0], high[0]) == pytest.approx((5 / 9 - half, 1.0))  # clipped to [0, 1]


def test_default_estimate_reports_savings_and_strata(two_strata):
    result = estimate(two_strata, [0, 1, 2, 10, 11, 12, 13], [1, 0, 1, 1, 1, 0, 0])
    assert result.n == 7 and result.ci_low < result.value < result.ci_high
    assert result.labels_saved == pytest.approx(result.uniform_labels - 7)
    assert result.strata["done"].tolist() == [3, 4]
    assert result.strata["mean"].tolist() == pytest.approx([2 / 3, 1 / 2])
    assert result.strata["size"].tolist() == [10, 20]
    assert result.strata["planned"].sum() == 7


def test_equal_grades_do_not_collapse_the_interval(two_strata):
    result = estimate(two_strata, [0, 1, 10, 11, 12], [1, 1, 1, 1, 1])
    assert result.value == 1.0
    assert result.ci_high == 1.0 and result.ci_low < 0.9
    assert result.se > 0


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
    """1,000 replays of the anytime queue on a synthetic pool: bias within noise, coverage 93-97%."""
    items = synthetic_items(800, seed=2, likert=scale == "likert")
    labels = items["label"].to_numpy()
    design = design_from_items(items)
    orders = replication_orders(design.N, 4, 1000)
    positions = replay_queue(design, labels, orders, 60)
    batch = estimate_batch(design, positions, labels[positions], method)
    low, high = batch.interval(0.95)
    mu = labels.mean()
    assert abs(batch.value.mean() - mu) < 3 * batch.value.std() / np.sqrt(1000)
    assert 0.93 <= np.mean((low <= mu) & (mu <= high)) <= 0.97


def test_grades_needed_shrinks_with_the_target(two_strata):
    wide = grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=0.3)
    narrow = grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=0.1)
    assert 4 <= wide < narrow <= 30
    assert grades_needed(two_strata, [0, 1, 10, 11], [1, 0, 1, 0], half_width=1.0) == 4
    with pytest.raises(InputError, match="positive"):
        grades_needed(two_strata, [], [], half_width=0)
