"""Live savings (core.savings): the between-strata correction, withholding, the range."""

from __future__ import annotations

import numpy as np
import pytest

from core.savings import live_saving, live_saving_batch, saving_range


def test_live_saving_by_hand():
    """Two strata of 500, grades (1, 0, 1, 0) and (1, 1, 1, 0): s^2 = 1/3 and 1/4.

    v_h = (1 - 4/500) s_h^2 / 4; V = sum 1/4 v_h; between = sum 1/2 (ybar_h - mu)^2 - sum 1/4 v_h.
    """
    w, sizes = np.array([0.5, 0.5]), np.array([500, 500])
    counts, sums, sumsq = np.array([4, 4]), np.array([2.0, 3.0]), np.array([2.0, 3.0])
    s2 = np.array([1 / 3, 1 / 4])
    v = (1 - 4 / 500) * s2 / 4
    mu = 0.5 * 0.5 + 0.5 * 0.75
    total = 0.5 * s2.sum() + 0.5 * ((0.5 - mu) ** 2 + (0.75 - mu) ** 2) - 0.25 * v.sum()
    variance = 0.25 * v.sum()
    m = total / (variance + total / 1000)
    saving = live_saving(w, sizes, counts, sums, sumsq)
    assert saving.share == pytest.approx(1 - 8 / m)
    assert saving.deff == pytest.approx(variance / ((1 - 8 / 1000) * total / 8))


def test_withheld_until_every_stratum_has_two_grades():
    w, sizes = np.array([0.5, 0.5]), np.array([500, 500])
    assert live_saving(w, sizes, np.array([1, 5]), np.array([1.0, 2.0]), np.array([1.0, 2.0])) is None
    assert np.isnan(
        live_saving_batch(w, sizes, np.array([[1, 5]]), np.array([[1.0, 2.0]]), np.array([[1.0, 2.0]]))[0][0]
    )


def test_a_surrogate_without_signal_shows_no_saving_on_average():
    """Five equal strata that all hold the same Bernoulli(0.4) grades, 4 grades each (n = 20): the
    corrected saving averages about 0 and rarely looks large; without the correction term
    sum_h W_h (1 - W_h) v_h it would average about +15 points."""
    rng = np.random.default_rng(0)
    reps, H, k = 4000, 5, 4  # noqa: N806
    w, sizes = np.full(H, 1 / H), np.full(H, 1000)
    grades = (rng.random((reps, H, k)) < 0.4).astype(float)
    counts, sums = np.full((reps, H), k), grades.sum(-1)
    share = live_saving_batch(w, sizes, counts, sums, sums)[0]
    shown = share[np.isfinite(share)]
    assert abs(shown.mean()) < 0.05
    assert np.mean(shown > 0.3) < 0.1
    # The same without the correction: S^2 = sum W s^2 + sum W (ybar - mu)^2.
    s2 = grades.var(axis=-1, ddof=1)
    means = grades.mean(-1)
    total = (w * s2).sum(-1) + (w * (means - means.mean(-1, keepdims=True)) ** 2).sum(-1)
    variance = (w**2 * (1 - k / 1000) * s2 / k).sum(-1)
    naive = 1 - 20 * (variance + total / 5000) / total
    assert np.nanmean(naive) > shown.mean() + 0.1


def test_saving_range_brackets_the_share():
    rng = np.random.default_rng(1)
    strata = np.repeat([0, 1], 30)
    grades = np.concatenate([(rng.random(30) < 0.1), (rng.random(30) < 0.8)]).astype(float)
    w, sizes = np.array([0.5, 0.5]), np.array([1000, 1000])
    saving = live_saving(w, sizes, np.array([30, 30]), np.bincount(strata, grades), np.bincount(strata, grades))
    ranged = saving_range(w, sizes, strata, grades, saving)
    assert ranged.low < saving.share < ranged.high
    assert saving_range(w, sizes, strata, grades, None) is None
