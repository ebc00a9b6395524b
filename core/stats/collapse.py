"""Strata read as one until the grades show that they differ: the allocation and the variance decided together.

A surrogate that carries no signal (or a pool whose few positives have not
shown where they lie yet) gives strata whose grades do not differ; Neyman
weights fitted to the surrogate's or to the noise of a few grades then cost
grades against plain random sampling (issue 27: MSE ratio 1.59 at n = 10),
and a stratum floor per stratum adds up (H all-zero strata each carry half a
Jeffreys pseudo-grade, so at a mean of 0.02 the stratified interval stopped
at 1.9-4.3 times uniform's size). So, grade by grade:

- the strata *differ* when the one-way analysis-of-variance F test of equal
  stratum means rejects at HETEROGENEITY_LEVEL (core.stats.savings.
  heterogeneity_pvalue, the saving's own test: one rule, read by the saving,
  the queue and the interval);
- until they do, the queue allocates proportionally (equal spreads: Neyman
  with S_h = S is n_h ~ N_h; Cochran 1977, section 5.5), and the variance
  reads every stratum's spread as the pooled within-stratum variance

      s_w^2 = sum_h (n_h - 1) s_h^2 / (n - H),

  floored, where every grade so far is equal, by Jeffreys' floor of the
  whole sample (core.stats.intervals.all_equal_floor on the totals), as a
  one-stratum sample would be. Under proportional allocation
  V = (1 - f) sum_h W_h S_h^2 / n whatever the S_h (Cochran 1977, eq. 5.28),
  and s_w^2 estimates sum_h W_h S_h^2 without bias there, since
  (n_h - 1) / (n - H) ~ W_h; so the collapsed variance is the textbook one for
  the allocation actually used, with n - H degrees of freedom instead of a few
  per stratum, and it is what "collapsed strata" estimators pool (Cochran
  1977, section 5A.12; Wolter, Introduction to Variance Estimation, 2007,
  section 2.5);
- once the strata differ, each stratum's own floored spread, and the queue's
  adaptive Neyman spreads (core.stats.queue.queue_spreads).

The test is rerun at every grade; under equal stratum means it rejects in
about HETEROGENEITY_LEVEL of samples at any one n, so a pool without signal
stays close to proportional, and a surrogate with signal switches within a
few dozen grades (benchmarks/stopping.md measures both).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from core.stats.intervals import all_equal_floor, jeffreys_mean, sample_variance, stratum_variance
from core.stats.savings import HETEROGENEITY_LEVEL, heterogeneity_pvalue


def strata_differ(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """(...) bool: the F test of equal stratum means rejects at HETEROGENEITY_LEVEL; per-stratum grade
    counts, sums and sums of squares (..., H). False while the test is undefined (n <= H)."""
    s2 = stratum_variance(counts, sums, sumsq)
    return heterogeneity_pvalue(counts, sums, s2) < HETEROGENEITY_LEVEL


def spreads_differ(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """(...) bool: Bartlett's test of equal stratum variances rejects at HETEROGENEITY_LEVEL (Snedecor &
    Cochran, Statistical Methods, 8th ed., 1989, section 13.9):

        T = [(n - k) ln s_p^2 - sum_h (n_h - 1) ln s_h^2] / C,
        C = 1 + (sum_h 1/(n_h - 1) - 1/(n - k)) / (3 (k - 1)),   T ~ chi^2(k - 1),

    over the k strata with at least 2 values, s_p^2 their pooled variance. A stratum whose values are all
    equal is read at s_p^2 / n_h, not 0: n_h equal values say the spread is small, not that it is nil, so two
    equal values drawn by chance do not reject. For values whose spread is not a function of their mean
    (a difference between two targets' grades: equal means, a stratum of agreeing answers with no spread),
    where `strata_differ` cannot see it. False while the test is undefined (k < 2, or no spread at all)."""
    counts = np.asarray(counts, dtype=float)
    used = counts >= 2
    df = np.where(used, counts - 1.0, 0.0)
    total = df.sum(axis=-1)
    s2 = sample_variance(counts, sums, sumsq)
    pooled = np.divide((df * s2).sum(axis=-1), total, out=np.zeros_like(total), where=total > 0)
    s2 = np.maximum(s2, pooled[..., None] / np.maximum(counts, 1.0))
    k = used.sum(axis=-1)
    defined = (k >= 2) & (pooled > 0)
    safe = np.where(used & defined[..., None], s2, 1.0)
    log_pooled = np.log(np.where(defined, pooled, 1.0))
    statistic = total * log_pooled - (df * np.log(safe)).sum(axis=-1)
    inverse = np.divide(1.0, df, out=np.zeros_like(df), where=df > 0).sum(axis=-1)
    correction = 1 + (inverse - 1 / np.maximum(total, 1.0)) / (3 * np.maximum(k - 1, 1))
    p = stats.chi2.sf(statistic / correction, np.maximum(k - 1, 1))
    return defined & (p < HETEROGENEITY_LEVEL)


def pooled_within_variance(moments, grade_moments=None) -> np.ndarray:
    """s_w^2 = sum_h (n_h - 1) s_h^2 / sum_h (n_h - 1) of the values in ``moments`` (count, sum, sum of squares
    per stratum, (..., H)), floored by `all_equal_floor` of all the grades together (``grade_moments``,
    default ``moments``: every grade equal), shape (...); that floor alone where no stratum has 2 grades."""
    counts, sums, sumsq = (np.asarray(m, dtype=float) for m in moments)
    _, ysums, ysumsq = (np.asarray(m, dtype=float) for m in (grade_moments or moments))
    df = np.maximum(counts - 1.0, 0.0)
    dev = (df * sample_variance(counts, sums, sumsq)).sum(axis=-1)
    total = df.sum(axis=-1)
    within = np.divide(dev, total, out=np.zeros_like(dev), where=total > 0)
    n, s = counts.sum(axis=-1), ysums.sum(axis=-1)
    centre = jeffreys_mean(n, s)
    floor = np.where(total > 0, all_equal_floor(n, s, ysumsq.sum(axis=-1)), centre * (1.0 - centre))
    return np.maximum(within, floor)


def collapsed_variances(s2: np.ndarray, moments, grade_moments, differ) -> np.ndarray:
    """The per-stratum spreads the variance reads (..., H): ``s2`` (each stratum's own, floored) where the
    strata ``differ`` (`strata_differ` of the grades), else `pooled_within_variance` of the values in
    ``moments`` (the grades, or the difference estimator's residuals; floored on ``grade_moments``) for every
    stratum (module docstring)."""
    pooled = pooled_within_variance(moments, grade_moments)
    return np.where(np.asarray(differ)[..., None], s2, pooled[..., None])
