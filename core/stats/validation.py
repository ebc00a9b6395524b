"""The estimate corrected on a random, reviewed validation sample (two-phase sampling, prediction-powered).

When graders err, the stratified mean of their grades estimates the mean of the grades they give, not
the mean of the grades an item deserves. A random share of the graded items is checked: double graded
(core.services.reservations.overlap_positions), each disagreement settled by a reviewer where one has and
read as the mean of its grades until then (the estimand's rule, below: until every disagreement is settled the
correction measures graders' errors only as far as they are, which the dashboard says), or picked for a
reviewer's audit (core.services.review.audit_positions). On that validation sample V the item's
final grade f_i (core.stats.rater_agreement.final_grades: the reviewed grade, else the mean of its
grades) is known beside its first grade y_i. The estimate adds the design estimate of the first grades
and the design estimate of their error on V:

    theta = sum_h W_h ybar_h  +  c,     c = sum_{i in V} w_i (f_i - y_i) / sum_{i in V} w_i,

with w_i = W_h / n_h the first phase's weight of item i's stratum h (V is a random subsample of the
graded items at one rate in every stratum, so its own weight is a constant and cancels: a Hajek mean).
This is the difference estimator of two-phase sampling (Cochran 1977, section 12.9; Sarndal, Swensson
and Wretman 1992, section 9.7) and the prediction-powered estimator of Angelopoulos, Bates, Fannjiang,
Jordan and Zrnic 2023 ("Prediction-powered inference", Science 382), with the first grades as the
predictions and the final grades as the gold labels.

Variance, as prediction-powered inference writes it:

    V = V_st(y) + V(c),     V(c) = m / (m - 1) sum_{i in V} w_i^2 (d_i - c)^2 / (sum_{i in V} w_i)^2,

V_st(y) the stratified variance of the first grades (core.stats.estimate), d_i = f_i - y_i, m = |V|
(the linearised variance of a Hajek mean, Sarndal et al. 1992, result 5.6.1). V is a subset of the
graded items, so the two terms covary: Cov = sum_h W_h^2 S_{yd,h} / n_h. Under grader error that
covariance is negative (a grade wrongly 1 has d = -1), so leaving it out, as here, widens the
interval; it also absorbs the bias left by items both graders got wrong alike, which no review of
disagreements sees (a first version with the covariance and a normal quantile covered the true mean in
0.92 of replications at n = 200 on benchmarks/review.py's goal pool; this one in 0.95). The interval is theta +- t_{m-1} sqrt(V),
cut to [0, 1]: few validation items make a t quantile the honest one.

The estimand is the pool's mean final grade: the reviewed grade where a reviewer set one, the mean
grader's grade elsewhere. Until V has MIN_VALIDATION items the correction is not computed (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.stats.allocation import Design, stratum_moments
from core.stats.estimate import estimate_batch
from core.stats.intervals import LEVEL

MIN_VALIDATION = 2
"""Validation items needed for the correction and its variance (m - 1 > 0)."""


@dataclass(frozen=True)
class ValidatedBatch:
    """The corrected estimate for R replications: arrays of shape (R,); NaN where V is too small."""

    value: np.ndarray
    variance: np.ndarray
    correction: np.ndarray
    """c, the estimated mean error of the first grades (final - first)."""
    validation: np.ndarray
    """m, the validation items of each replication."""

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """theta +- t_{m-1} sqrt(V), cut to [0, 1]; [0, 1] where the correction is NaN."""
        df = np.maximum(self.validation - 1, 1)
        half = stats.t.ppf(0.5 + level / 2, df) * np.sqrt(self.variance)
        ok = np.isfinite(self.value)
        low = np.where(ok, np.clip(self.value - half, 0.0, 1.0), 0.0)
        high = np.where(ok, np.clip(self.value + half, 0.0, 1.0), 1.0)
        return low, high


def validated_batch(
    design: Design, positions: np.ndarray, first: np.ndarray, checked: np.ndarray, final: np.ndarray
) -> ValidatedBatch:
    """The module's estimate for R samples at once.

    positions, first: (R, n), every graded item once with its first grade; checked: (R, n) bool, whether
    the item is in the validation sample; final: (R, n), its final grade (read only where checked).
    """
    positions = np.atleast_2d(positions)
    first = np.atleast_2d(np.asarray(first, dtype=float))
    checked = np.atleast_2d(np.asarray(checked, dtype=bool))
    final = np.atleast_2d(np.asarray(final, dtype=float))
    plain = estimate_batch(design, positions, first, "stratified")
    counts, _, _ = stratum_moments(design, positions, first)
    strata = design.stratum[positions]
    weight = design.weights[strata] / np.maximum(np.take_along_axis(counts, strata, axis=1), 1)
    w = np.where(checked, weight, 0.0)
    d = np.where(checked, final - first, 0.0)
    m = checked.sum(axis=1)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (w * d).sum(axis=1) / total
        spread = (w * (d - c[:, None])) ** 2
        var_c = m / (m - 1) * np.where(checked, spread, 0.0).sum(axis=1) / total**2
    ok = m >= MIN_VALIDATION
    nan = np.full(m.shape, np.nan)
    return ValidatedBatch(
        value=np.where(ok, plain.value + c, nan),
        variance=np.where(ok, plain.variance + var_c, nan),
        correction=np.where(ok, c, nan),
        validation=m,
    )


@dataclass(frozen=True)
class Validated:
    """One project's corrected estimate (NaN value and interval [0, 1] until V has MIN_VALIDATION items)."""

    value: float
    se: float
    ci_low: float
    ci_high: float
    correction: float
    validation: int
    level: float


def validated_estimate(
    design: Design, first: dict[int, float], final: dict[int, float], level: float = LEVEL
) -> Validated:
    """The module's estimate for one project: ``first`` maps every graded position to its first grade,
    ``final`` the validation sample's positions to their final grade (positions not graded are ignored)."""
    positions = np.fromiter(first, dtype=np.int64, count=len(first))
    grades = np.fromiter(first.values(), dtype=float, count=len(first))
    checked = np.fromiter((p in final for p in first), dtype=bool, count=len(first))
    finals = np.fromiter((final.get(p, np.nan) for p in first), dtype=float, count=len(first))
    batch = validated_batch(design, positions[None], grades[None], checked[None], finals[None])
    low, high = batch.interval(level)
    return Validated(
        value=float(batch.value[0]),
        se=float(np.sqrt(batch.variance[0])),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        correction=float(batch.correction[0]),
        validation=int(batch.validation[0]),
        level=level,
    )
