"""Estimate the pool's mean grade from the grades so far, with an honest interval.

Two estimators, both inside the stratified design (METHOD.md section 4):

- "stratified": mu = sum_h W_h ybar_h.
- "difference": the model-assisted difference estimator
  mu = sum_h W_h [ ybar_h - beta' (xbar_h - Xbar_h) ], where x are the
  surrogate covariates (agreement, semantic entropy), Xbar_h their known
  stratum means over the whole pool, and beta a within-stratum ridge
  regression slope, cross-fitted so no item's own grade predicts it
  (core/model_assisted.py).

Variance (both): V = sum_h W_h^2 (1 - n_h/N_h) s~_h^2 / n_h (Cochran 1977,
eq. 5.7), with s~_h^2 the stratum's sample variance (of the grades or the
residuals) stabilised by `core.spreads.adaptive_sd` with
`VARIANCE_PRIOR` pseudo-grades at the surrogate's predicted spread
(recalibrated by the grades, `core.spreads.calibrated_prior_sd`), so a
stratum whose grades are all equal (or with a single grade) does not claim
zero variance. Interval: mu +- t_{df} sqrt(V) with Satterthwaite's degrees of
freedom df = V^2 / sum_h (a_h s~_h^2)^2 / nu_h, a_h = W_h^2 (1 - n_h/N_h) / n_h,
nu_h = n_h - 1 + VARIANCE_PRIOR (Satterthwaite 1946; the t-interval for
stratified means, Cochran 1977 section 5A.11), clipped to [0, 1].
benchmarks/estimation.md reports the coverage that this choice achieves.

The batch functions take arrays with a leading replication axis so that the
simulator runs exactly this code on thousands of replicated samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core.allocation import Design, next_stratum, planned_allocation, stratified_variance, uniform_labels_for_variance
from core.errors import InputError
from core.model_assisted import difference_residuals
from core.spreads import adaptive_sd, calibrated_prior_sd, pooled_sums

METHODS = ("stratified", "difference")
DEFAULT_METHOD = "stratified"
VARIANCE_PRIOR = 1.0
"""Pseudo-grades at the surrogate's predicted spread added to each stratum's variance."""


@dataclass(frozen=True)
class Estimate:
    """The estimate of the pool's mean grade after n grades.

    deff: estimated design effect V / V_uniform(n); uniform_labels: labels
    uniform random sampling would need for the same variance,
    m = S^2 / (V + S^2/N) (= n / deff without finite-population correction);
    labels_saved = m - n. strata: one row per stratum with size, weight,
    planned (the queue's plan for n grades), done, mean and sd of its grades.
    """

    value: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    deff: float
    uniform_labels: float
    labels_saved: float
    method: str
    level: float
    strata: pd.DataFrame


@dataclass(frozen=True)
class BatchEstimate:
    """Estimates for R replicated samples (arrays of shape (R,)); stratum_sd is (R, H)."""

    value: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    s2: np.ndarray
    stratum_sd: np.ndarray

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """value -+ t_{df, (1+level)/2} sqrt(V), clipped to [0, 1]."""
        half = stats.t.ppf(0.5 + level / 2, self.df) * np.sqrt(self.variance)
        return np.clip(self.value - half, 0.0, 1.0), np.clip(self.value + half, 0.0, 1.0)


def resolve_method(method: str) -> str:
    """ "default" -> DEFAULT_METHOD; InputError for a method that is not in METHODS."""
    method = DEFAULT_METHOD if method == "default" else method
    if method not in METHODS:
        raise InputError(f"unknown estimation method {method!r}", fix=f"use one of {', '.join(METHODS)}")
    return method


def _moments(onehot: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-stratum count, sum and sum of squares; onehot (R, n, H), values (R, n)."""
    counts = onehot.sum(axis=1).astype(float)
    sums = np.einsum("rnh,rn->rh", onehot, values)
    sumsq = np.einsum("rnh,rn->rh", onehot, values**2)
    return counts, sums, sumsq


def estimate_batch(
    design: Design,
    positions: np.ndarray,
    grades: np.ndarray,
    method: str = DEFAULT_METHOD,
    variance_prior: float = VARIANCE_PRIOR,
) -> BatchEstimate:
    """Estimates for R samples at once: positions and grades are (R, n), in grading order.

    A stratum without any grade yet (the queue reaches a stratum of weight
    W_h once n W_h >= 1/2) contributes its surrogate-predicted mean m_h with
    variance W_h^2 S0_h^2, one pseudo-grade at the prior: a bias of at most
    W_h |m_h - mu_h| while n < 1/(2 W_h), stated rather than hidden. With
    variance_prior = 0 the variance is the textbook one (R survey's svymean
    with fpc), undefined (0) for strata with one grade.
    """
    method = resolve_method(method)
    positions = np.atleast_2d(positions)
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    strata = design.stratum[positions]
    onehot = (strata[..., None] == np.arange(design.H)).astype(float)
    values = difference_residuals(design, positions, y) if method == "difference" else y
    counts, sums, sumsq = _moments(onehot, values)
    _, ysum, ysumsq = _moments(onehot, y)
    sizes, w = design.sizes.astype(float), design.weights
    seen = counts > 0
    prior_sd = calibrated_prior_sd(design, *pooled_sums(design, positions, y))
    means = np.where(seen, sums / np.maximum(counts, 1), design.prior_mean)
    value = np.sum(w * means, axis=1)
    sd = np.where(seen, adaptive_sd(prior_sd, variance_prior, counts, sums, sumsq), prior_sd)
    terms = w**2 * (1 - counts / sizes) * sd**2 / np.maximum(counts, 1)
    variance = terms.sum(axis=1)
    nu = np.where(seen, np.maximum(counts - 1 + variance_prior, 1e-12), 1.0)
    denom = np.sum(terms**2 / nu, axis=1)
    df = np.where(denom > 0, variance**2 / np.where(denom > 0, denom, 1.0), np.inf)
    ymeans = np.where(seen, ysum / np.maximum(counts, 1), design.prior_mean)
    ysd = np.where(seen, adaptive_sd(prior_sd, variance_prior, counts, ysum, ysumsq), prior_sd)
    ymu = np.sum(w * ymeans, axis=1)
    s2 = np.sum(w * ysd**2, axis=1) + np.sum(w * (ymeans - ymu[:, None]) ** 2, axis=1)
    return BatchEstimate(value=value, variance=variance, df=df, s2=s2, stratum_sd=sd)


def _validated(design: Design, positions, grades) -> tuple[np.ndarray, np.ndarray]:
    positions = np.asarray(positions, dtype=np.int64).ravel()
    grades = np.asarray(grades, dtype=float).ravel()
    if positions.size != grades.size:
        raise InputError(f"{positions.size} graded positions but {grades.size} grades")
    if positions.size and (positions.min() < 0 or positions.max() >= design.N):
        raise InputError(f"a graded position is outside the pool of {design.N} items")
    if np.unique(positions).size != positions.size:
        raise InputError("an item was graded twice", fix="keep one grade per item (or average them) before estimating")
    bad = ~((grades >= 0) & (grades <= 1))
    if bad.any():
        raise InputError(f"grade {grades[bad][0]!r} is not in [0, 1]", fix="map Likert scales onto [0, 1]")
    return positions, grades


def estimate(design: Design, positions, grades, method: str = "default", level: float = 0.95) -> Estimate:
    """Estimate the pool's mean grade from grades at `positions` (in grading order).

    method: "default" (= DEFAULT_METHOD), "stratified" or "difference"; see the
    module docstring for the formulas. With no grade, the value is NaN and
    the interval [0, 1].
    """
    method = resolve_method(method)
    positions, grades = _validated(design, positions, grades)
    n = int(positions.size)
    table = _strata_table(design, positions, grades)
    if n == 0:
        return Estimate(np.nan, np.nan, 0.0, 1.0, 0, np.nan, 0.0, 0.0, method, level, table)
    batch = estimate_batch(design, positions[None], grades[None], method)
    low, high = batch.interval(level)
    variance, s2 = float(batch.variance[0]), float(batch.s2[0])
    uniform_var = (1 - n / design.N) * s2 / n
    m = uniform_labels_for_variance(variance, s2, design.N)
    return Estimate(
        value=float(batch.value[0]),
        se=float(np.sqrt(variance)),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        n=n,
        deff=float(variance / uniform_var) if uniform_var > 0 else np.nan,
        uniform_labels=m,
        labels_saved=m - n,
        method=method,
        level=level,
        strata=table,
    )


def _strata_table(design: Design, positions: np.ndarray, grades: np.ndarray) -> pd.DataFrame:
    strata = design.stratum[positions]
    done = np.bincount(strata, minlength=design.H)
    sums = np.bincount(strata, weights=grades, minlength=design.H)
    sumsq = np.bincount(strata, weights=grades**2, minlength=design.H)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / done
        sd = np.sqrt(np.maximum(sumsq - done * mean**2, 0) / (done - 1))
    return pd.DataFrame(
        {
            "stratum": np.arange(design.H),
            "size": design.sizes,
            "weight": design.weights,
            "planned": planned_allocation(design, positions.size),
            "done": done,
            "mean": np.where(done > 0, mean, np.nan),
            "sd": np.where(done > 1, sd, np.nan),
        }
    )


def grades_needed(
    design: Design, positions, grades, half_width: float, level: float = 0.95, method: str = "default"
) -> int:
    """Total grades after which the interval's half-width should reach `half_width`.

    Projects forward with the queue's greedy allocation (`next_stratum`) and the
    current per-stratum spreads of the estimator (prior-blended): the smallest
    n (at least the grades done) whose planned allocation has
    z sqrt(sum_h W_h^2 (1 - n_h/N_h) s~_h^2 / n_h) <= half_width. The plan
    starts from scratch rather than from the grades done, so it is a
    projection, not a promise; at n = N the variance is 0.
    """
    if not half_width > 0:
        raise InputError(f"the target half-width must be positive, got {half_width}")
    method = resolve_method(method)
    positions, grades = _validated(design, positions, grades)
    if positions.size:
        sd = estimate_batch(design, positions[None], grades[None], method).stratum_sd[0]
    else:
        sd = design.prior_sd
    z = stats.norm.ppf(0.5 + level / 2)
    w, sizes = design.weights, design.sizes
    counts = np.zeros(design.H, dtype=np.int64)
    for n in range(1, design.N + 1):
        counts[next_stratum(w, sd, counts, sizes, design.floor)] += 1
        if n >= positions.size and z * np.sqrt(stratified_variance(w, sizes, sd, counts)) <= half_width:
            return n
    return design.N
