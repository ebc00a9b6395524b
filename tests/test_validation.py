"""core.stats.validation (the estimate corrected on a random reviewed sample) and core.stats.simulate_review."""

from __future__ import annotations

import numpy as np
import pytest

from core.stats.allocation import make_design
from core.stats.estimate import estimate
from core.stats.simulate_review import figures, noisy, review_runs
from core.stats.validation import validated_batch, validated_estimate


def two_strata():
    stratum = np.repeat([0, 1], [60, 40])
    return make_design(stratum, np.full(100, 0.5), np.zeros((100, 1)))


def test_the_correction_is_the_weighted_mean_error_on_the_validation_sample():
    design = two_strata()
    # stratum 0: items 0-9 graded, all first grades 1; stratum 1: items 60-64 graded, first grades 0
    first = {p: 1.0 for p in range(10)} | {p: 0.0 for p in range(60, 65)}
    final = {0: 0.0, 1: 1.0, 60: 1.0, 61: 0.0}  # errors -1, 0 (stratum 0) and +1, 0 (stratum 1)
    result = validated_estimate(design, first, final)
    w0, w1 = 0.6 / 10, 0.4 / 5  # W_h / n_h
    c = (w0 * -1 + w1 * 1) / (2 * w0 + 2 * w1)
    assert result.correction == pytest.approx(c)
    plain = estimate(design, list(first), list(first.values()))
    assert result.value == pytest.approx(plain.value + c)
    d = np.array([-1, 0, 1, 0]) - c
    w = np.array([w0, w0, w1, w1])
    var_c = 4 / 3 * np.sum((w * d) ** 2) / w.sum() ** 2
    assert result.se == pytest.approx(np.sqrt(plain.se**2 + var_c))
    assert result.validation == 4 and 0 <= result.ci_low < result.value < result.ci_high <= 1


def test_too_small_a_validation_sample_gives_no_estimate():
    design = two_strata()
    result = validated_estimate(design, {0: 1.0, 60: 0.0}, {0: 1.0})
    assert np.isnan(result.value) and (result.ci_low, result.ci_high) == (0.0, 1.0)
    batch = validated_batch(
        design, np.array([[0, 60]]), np.array([[1.0, 0.0]]), np.array([[False, False]]), np.zeros((1, 2))
    )
    assert np.isnan(batch.value[0]) and batch.validation[0] == 0


def test_noisy_grades_err_at_the_given_rate():
    rng = np.random.default_rng(1)
    labels = np.repeat([0.0, 1.0, 0.5], 20_000)
    grades = noisy(labels, 0.1, rng)
    assert np.mean(grades[:40_000] != labels[:40_000]) == pytest.approx(0.1, abs=0.01)
    assert set(np.unique(grades[:40_000])) == {0.0, 1.0}


def test_the_validated_estimate_removes_most_of_the_bias_review_of_disagreements_leaves():
    rng = np.random.default_rng(0)
    labels = (rng.random(1000) < 0.1).astype(float)
    design = make_design(np.repeat(np.arange(4), 250), np.full(1000, 0.5), np.zeros((1000, 1)))
    result = figures(review_runs(design, labels, 200, reps=200, flip=0.1, overlap=0.2, seed=0))
    today, reviewed, validated = (result[k]["bias"] for k in ("mean of two", "reviewed where exists", "validated"))
    assert today > 0.06  # flips at mean 0.1 push the mean of the grades up by about 0.08
    assert 0.7 * today < reviewed < 0.95 * today  # review of disagreements alone: about a fifth less
    assert abs(validated) < 0.5 * today
    assert result["validated"]["coverage"] > 0.85 > result["mean of two"]["coverage"]
