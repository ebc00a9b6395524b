"""Live savings (core.stats.savings): the between-strata correction, withholding, the range."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.stats.intervals import stratum_variance
from core.stats.savings import HETEROGENEITY_LEVEL, heterogeneity_pvalue, live_saving, live_saving_batch


def test_live_saving_by_hand():
    """Two strata of 500, grades (1, 0, 1, 0, 1, 0) and (1, 1, 1, 1, 1, 0): s^2 = 3/10 and 1/6.

    v_h = (1 - 6/500) s_h^2 / 6; V = sum 1/4 v_h; B = sum 1/2 (ybar_h - mu)^2 - sum 1/4 v_h;
    se(B)^2 = 2 sum (v_h / 4)^2 + 4 sum (ybar_h - mu)^2 v_h / 4. The range is the saving at B -+ z se;
    the saving shown leaves B out until the F test of equal stratum means rejects at 5%."""
    w, sizes = np.array([0.5, 0.5]), np.array([500, 500])
    counts, sums = np.array([6, 6]), np.array([3.0, 5.0])
    s2 = np.array([3 / 10, 1 / 6])
    v = (1 - 6 / 500) * s2 / 6
    means = np.array([0.5, 5 / 6])
    mu = means.mean()
    between = 0.5 * ((means - mu) ** 2).sum() - 0.25 * v.sum()
    se = np.sqrt(2 * ((v / 4) ** 2).sum() + ((means - mu) ** 2 * v).sum())
    variance = 0.25 * v.sum()
    z = stats.norm.ppf(0.9)

    def share(b):
        total = 0.5 * s2.sum() + b
        return 1 - 12 * (variance + total / 1000) / total

    saving = live_saving(w, sizes, counts, sums, sums)
    assert saving.low == pytest.approx(share(max(between - z * se, 0)))
    assert saving.high == pytest.approx(share(between + z * se))
    # F test of equal means: SSB = 6 (1/6)^2 2 = 1/3 on 1 df, SSW = 5 (3/10 + 1/6) on 10 df; p ~ 0.26.
    f = (1 / 3) / (5 * s2.sum() / 10)
    assert f == pytest.approx(10 / 7)
    assert not stats.f.sf(f, 1, 10) < 0.05  # not shown: the saving at B = 0
    assert saving.share == pytest.approx(share(0.0))
    assert saving.deff == pytest.approx(variance / ((1 - 12 / 1000) * (0.5 * s2.sum()) / 12))
    assert saving.low <= saving.share <= saving.high


def test_withheld_until_every_stratum_has_two_grades():
    w, sizes = np.array([0.5, 0.5]), np.array([500, 500])
    assert live_saving(w, sizes, np.array([1, 5]), np.array([1.0, 2.0]), np.array([1.0, 2.0])) is None
    batch = live_saving_batch(w, sizes, np.array([[1, 5]]), np.array([[1.0, 2.0]]), np.array([[1.0, 2.0]]))
    assert np.isnan(batch.share[0]) and np.isnan(batch.low[0])


def test_a_surrogate_without_signal_shows_no_saving_on_average():
    """Five equal strata that all hold the same Bernoulli(0.4) grades, 4 grades each (n = 20): the
    saving shown averages about 0 and rarely looks large; the plain between-strata term
    sum_h W_h (ybar_h - mu)^2 would show about +15 points on average."""
    rng = np.random.default_rng(0)
    reps, H, k = 4000, 5, 4  # noqa: N806
    w, sizes = np.full(H, 1 / H), np.full(H, 1000)
    grades = (rng.random((reps, H, k)) < 0.4).astype(float)
    counts, sums = np.full((reps, H), k), grades.sum(-1)
    batch = live_saving_batch(w, sizes, counts, sums, sums)
    shown = batch.share[np.isfinite(batch.share)]
    assert abs(shown.mean()) < 0.05
    assert np.mean(shown > 0.15) < 0.1
    # The same without the correction: S^2 = sum W s^2 + sum W (ybar - mu)^2.
    s2 = grades.var(axis=-1, ddof=1)
    means = grades.mean(-1)
    total = (w * s2).sum(-1) + (w * (means - means.mean(-1, keepdims=True)) ** 2).sum(-1)
    variance = (w**2 * (1 - k / 1000) * s2 / k).sum(-1)
    naive = 1 - 20 * (variance + total / 5000) / total
    assert np.nanmean(naive) > shown.mean() + 0.1


def test_a_real_between_strata_gap_is_shown():
    """Strata with means 0.1 and 0.9, 30 grades each: the gain is evident and shown in full."""
    rng = np.random.default_rng(1)
    grades = np.stack([rng.random(30) < 0.1, rng.random(30) < 0.9]).astype(float)
    saving = live_saving(np.array([0.5, 0.5]), np.array([1000, 1000]), np.array([30, 30]), grades.sum(1), grades.sum(1))
    assert saving.share > 0.5 and saving.low > 0.3 and saving.low <= saving.share <= saving.high


def test_the_f_test_claims_a_gain_in_about_five_percent_of_samples_without_one():
    """Equal stratum means, unequal counts (3 to 8 grades): the share of samples where the between-strata gain
    counts stays near HETEROGENEITY_LEVEL; with means 0.1 and 0.9 it counts in most."""
    rng = np.random.default_rng(2)
    reps, counts = 4000, np.array([3, 4, 5, 6, 8])
    mask = np.arange(8) < counts[:, None]
    for means, low, high in (([0.4] * 5, 0.02, 0.08), ([0.1, 0.1, 0.9, 0.9, 0.9], 0.8, 1.0)):
        grades = (rng.random((reps, 5, 8)) < np.array(means)[:, None]) * mask
        sums = grades.sum(-1).astype(float)
        s2 = stratum_variance(np.broadcast_to(counts, sums.shape), sums, sums)
        claimed = heterogeneity_pvalue(np.broadcast_to(counts, sums.shape), sums, s2) < HETEROGENEITY_LEVEL
        assert low < claimed.mean() < high


def test_strata_read_as_one_compare_with_the_pooled_spread_not_each_strata_floor():
    """Five strata of 400 at a rare mean, 6 grades each, one positive in all (the F test does not reject):
    the estimate's saving compares with the pooled within-stratum variance, as the interval reads it
    (core.stats.estimate.read_spreads), which is 1/30 here. Each stratum's own floor, 1 / (2 n_h) - ish
    for the four all-zero strata, made S^2 about 2.5 times that and a uniform sample look dear: a saving
    shown at the stop where uniform needs fewer grades."""
    from core.stats.allocation import make_design
    from core.stats.estimate import estimate
    from core.stats.forecast import stop_saving
    from core.stats.stopping import FIXED

    design = make_design(np.repeat(np.arange(5), 400), np.full(2000, 0.3))
    positions = np.concatenate([np.arange(h * 400, h * 400 + 6) for h in range(5)])
    grades = np.zeros(30)
    grades[0] = 1.0
    saving = estimate(design, positions, grades).saving
    assert saving.s2 == pytest.approx(5 / 6 / 25)  # (n_0 - 1) s_0^2 = 5/6 over n - H = 25 df
    counts, sums = np.full(5, 6), np.array([1.0, 0, 0, 0, 0])
    own = live_saving(np.full(5, 0.2), np.full(5, 400), counts, sums, sums)
    assert own.s2 > 2 * saving.s2
    # stopped here at +-0.1: a uniform sample read with the usual interval needs z^2 S^2 / h^2 grades
    assert (
        stop_saving(30, saving.s2, 1 / 30, 2000, 0.1, FIXED).fixed_n
        < 0
        < stop_saving(30, own.s2, 1 / 30, 2000, 0.1, FIXED).fixed_n
    )
