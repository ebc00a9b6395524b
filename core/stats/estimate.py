"""Estimate the pool's mean grade from the grades so far, with an honest interval.

Two estimators, both inside the stratified design (docs/method.md, *Estimators*):

- "stratified": mu = sum_h W_h ybar_h.
- "difference": the model-assisted difference estimator
  mu = sum_h W_h [ ybar_h - beta' (xbar_h - Xbar_h) ], where x are the
  surrogate covariates (agreement, semantic entropy), Xbar_h their known
  stratum means over the whole pool, and beta a within-stratum ridge
  regression slope, cross-fitted so no item's own grade predicts it
  (core/stats/model_assisted.py).

Variance (both): V = sum_h W_h^2 (1 - n_h/N_h) s~_h^2 / n_h (Cochran 1977,
eq. 5.7), s~_h^2 the stratum's sample variance (of the grades or the
residuals), floored where the stratum's grades are all equal
(`core.stats.intervals.equal_strata_floor`: information on the grades of every
stratum that agrees on the same grade, not certainty).

Interval: Korn-Graubard, the Clopper-Pearson interval on the effective sample
size n* = mu (1 - mu) / V with the df = n - H adjustment (R survey's
svyciprop method "beta"), n* = n where it is undefined (mu = 0 or 1);
`core.stats.intervals` has the formulas, the rule and why it serves grades in
[0, 1] too. It is a fixed-n interval: valid for a budget decided in advance,
not when one stops upon reading it.

No estimate leans on an ungraded stratum: until every stratum has a grade
the value is NaN, the interval [0, 1], and `missing` names the strata without
one (the queue grades every stratum first: core.stats.allocation.next_stratum).

The batch functions take arrays with a leading replication axis so that the
simulator runs exactly this code on thousands of replicated samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core.errors import InputError
from core.stats.allocation import Design, greedy_prefixes, planned_allocation, stratified_variance, stratum_moments
from core.stats.collapse import collapsed_variances, strata_differ
from core.stats.intervals import (
    LEVEL,
    bounded_variance,
    equal_strata_floor,
    korn_graubard,
    sample_variance,
    satterthwaite_df,
    stratified_mean_variance,
)
from core.stats.model_assisted import difference_residuals
from core.stats.savings import LiveSaving, LiveSavingBatch, live_saving_batch

METHODS = ("stratified", "difference")
DEFAULT_METHOD = "stratified"


@dataclass(frozen=True)
class Estimate:
    """The estimate of the pool's mean grade after n grades.

    value, se, ci_low, ci_high: the estimate, sqrt(V) and the fixed-n
    (Korn-Graubard) interval; NaN, NaN, 0, 1 while `missing` is not empty.
    missing: strata without any grade yet (their numbers).
    saving: the live saving against uniform sampling (`core.stats.savings.live_saving`),
    None until every stratum has 2 grades; deff, uniform_labels and labels_saved
    come from it and are None with it. strata: one row per stratum with size,
    weight, planned (the queue's plan for n grades), done, mean and sd of its grades.
    """

    value: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    method: str
    level: float
    strata: pd.DataFrame
    missing: tuple[int, ...] = ()
    saving: LiveSaving | None = None

    @property
    def deff(self) -> float | None:
        return None if self.saving is None else self.saving.deff

    @property
    def uniform_labels(self) -> float | None:
        return None if self.saving is None else self.saving.uniform_labels

    @property
    def labels_saved(self) -> float | None:
        return None if self.saving is None else self.saving.uniform_labels - self.n


@dataclass(frozen=True)
class BatchEstimate:
    """Estimates for R replicated samples: arrays of shape (R,), and (R, H) for counts and stratum_sd.

    value is NaN and the interval [0, 1] in a replication with an ungraded
    stratum (`missing`). df = n - H, the design's degrees of freedom (survey's degf).
    """

    value: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    n: np.ndarray
    counts: np.ndarray
    stratum_sd: np.ndarray
    saving: LiveSavingBatch | None
    """The live saving against uniform sampling each replication's dashboard shows (NaN where withheld); None
    where it was not asked for (`from_moments`'s ``with_saving``)."""

    @property
    def missing(self) -> np.ndarray:
        """(R, H): strata without a grade."""
        return self.counts == 0

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """The Korn-Graubard interval (core.stats.intervals.korn_graubard); [0, 1] where a stratum is missing."""
        ready = ~self.missing.any(axis=1)
        value = np.where(ready, self.value, 0.5)
        low, high = korn_graubard(value, self.variance, self.n, self.df, level)
        return np.where(ready, low, 0.0), np.where(ready, high, 1.0)


def resolve_method(method: str) -> str:
    """ "default" -> DEFAULT_METHOD; InputError for a method that is not in METHODS."""
    method = DEFAULT_METHOD if method == "default" else method
    if method not in METHODS:
        raise InputError(f"unknown estimation method {method!r}", fix=f"use one of {', '.join(METHODS)}")
    return method


def estimate_batch(
    design: Design, positions: np.ndarray, grades: np.ndarray, method: str = DEFAULT_METHOD
) -> BatchEstimate:
    """Estimates for R samples at once: positions and grades are (R, n), in grading order.

    The value, V and df of the module docstring; `BatchEstimate.interval` gives
    the fixed-n interval. A census (every stratum fully graded) has V = 0 and
    n = inf, a zero-width interval.
    """
    method = resolve_method(method)
    positions = np.atleast_2d(positions)
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    values = difference_residuals(design, positions, y) if method == "difference" else y
    counts, sums, sumsq = stratum_moments(design, positions, values)
    grade_moments = (counts, sums, sumsq) if values is y else stratum_moments(design, positions, y)
    binary = ((y == 0) | (y == 1)).all(axis=1)
    return from_moments(design, (counts, sums, sumsq), grade_moments, binary, bounded=values is y)


def from_moments(
    design: Design,
    moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    grade_moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    binary: np.ndarray,
    *,
    bounded: bool = True,
    with_saving: bool = True,
) -> BatchEstimate:
    """The estimate of the module docstring from per-stratum sufficient statistics, (R, H) each.

    ``moments``: count, sum and sum of squares of the values the estimator averages (the grades, or the
    difference estimator's residuals); ``grade_moments``: those of the grades themselves (for the all-equal
    floor and the saving); ``binary``: (R,) whether every grade is 0 or 1 (the df rule). ``bounded``: the
    values are the grades, so the variance is core.stats.intervals.bounded_variance's (a residual's spread is
    no share of the grades' Bernoulli variance). Each sample reads its strata apart where
    core.stats.collapse.strata_differ of its grades says so; the saving takes that verdict rather than test
    again. ``with_saving``: compute the live saving too (the stopping rule's replay, which reads
    only the interval, leaves it out: a third of its cost). What `estimate_batch` computes, and what
    core.stats.stopping updates grade by grade.
    """
    counts, sums, sumsq = moments
    sizes, w = design.sizes.astype(float), design.weights
    seen = counts > 0
    differ = strata_differ(*grade_moments)
    s2 = read_spreads(moments, grade_moments, differ)
    value = np.sum(w * np.where(seen, sums / np.maximum(counts, 1), 0.0), axis=1)
    value = np.where(seen.all(axis=1), value, np.nan)
    variance = stratified_mean_variance(w, sizes, counts, s2)
    if bounded:
        variance = bounded_variance(w, sizes, grade_moments, variance, binary, ~np.asarray(differ))
    n = counts.sum(axis=1)
    census = (counts >= sizes).all(axis=1)
    return BatchEstimate(
        value=value,
        variance=variance,
        df=np.where(binary | ~differ, n - design.H, satterthwaite_df(w, sizes, counts, s2)),
        n=np.where(census, np.inf, n),
        counts=counts,
        stratum_sd=np.where(seen, np.sqrt(s2), design.prior_sd),
        saving=_saving(w, sizes, grade_moments, differ) if with_saving else None,
    )


def read_spreads(moments, grade_moments, differ: np.ndarray) -> np.ndarray:
    """s~_h^2, (..., H): the spreads the variance reads, of the values in ``moments`` (the grades or the
    difference estimator's residuals; ``grade_moments`` the grades'): each stratum's sample variance, floored
    where its grades agree (core.stats.intervals.equal_strata_floor), where the strata ``differ``; else their
    pooled within-stratum variance (core.stats.collapse)."""
    counts, _, _ = moments
    _, ysum, ysumsq = grade_moments
    own = np.maximum(sample_variance(*moments), equal_strata_floor(counts, ysum, ysumsq))
    return collapsed_variances(own, moments, grade_moments, differ)


def _saving(weights: np.ndarray, sizes: np.ndarray, grade_moments, differ: np.ndarray) -> LiveSavingBatch:
    """The live saving (core.stats.savings) on the grades' spreads as the interval reads them (`read_spreads`),
    so that its design variance is the interval's: pooled while the strata are read as one. With each stratum's
    own floor instead, the all-zero strata of a rare mean read as about 1 / (2 n_h) each, the pool's S^2 as
    several times its own, and uniform sampling as dear: a Likert pool of mean 0.02 showed +48% at its stop where
    a uniform sample read with the usual interval needs a third of its grades (benchmarks/stopping.md before)."""
    spreads = read_spreads(grade_moments, grade_moments, differ)
    return live_saving_batch(weights, sizes, *grade_moments, spreads, differ)


def checked_grades(design: Design, positions, grades) -> tuple[np.ndarray, np.ndarray]:
    """Positions and grades as flat arrays; InputError unless they pair up, lie in the pool, name each item
    once and are grades in [0, 1]."""
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


def estimate(design: Design, positions, grades, method: str = "default", level: float = LEVEL) -> Estimate:
    """Estimate the pool's mean grade from grades at `positions` (in grading order).

    method: "default" (= DEFAULT_METHOD), "stratified" or "difference"; see the
    module docstring for the formulas. With no grade, or while a stratum has
    none (`Estimate.missing`), the value is NaN and the interval [0, 1].
    """
    method = resolve_method(method)
    positions, grades = checked_grades(design, positions, grades)
    n = int(positions.size)
    table = _strata_table(design, positions, grades)
    missing = tuple(int(h) for h in np.flatnonzero(table["done"].to_numpy() == 0))
    if missing:
        return Estimate(np.nan, np.nan, 0.0, 1.0, n, method, level, table, missing)
    batch = estimate_batch(design, positions[None], grades[None], method)
    low, high = batch.interval(level)
    return Estimate(
        value=float(batch.value[0]),
        se=_standard_error(float(batch.value[0]), float(batch.variance[0]), census=bool(np.isinf(batch.n[0]))),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        n=n,
        method=method,
        level=level,
        strata=table,
        saving=batch.saving.first(),
    )


def _standard_error(value: float, variance: float, census: bool) -> float:
    """sqrt(V); NaN where V is 0 and the estimate lies strictly inside (0, 1) short of a ``census`` (every item
    graded: V is 0 by the finite-population correction): the grades then show no spread to read it from (a
    stratum of one grade, the others' grades agreeing), and the interval falls back to n* = n, nearly [0, 1]. A
    standard error of 0 beside that interval read as exact (the API's review)."""
    return float("nan") if variance <= 0 and 0 < value < 1 and not census else float(np.sqrt(variance))


def _strata_table(design: Design, positions: np.ndarray, grades: np.ndarray) -> pd.DataFrame:
    done, sums, sumsq = stratum_moments(design, positions, grades)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / done
        sd = np.sqrt(np.maximum(sumsq - done * mean**2, 0) / (done - 1))
    return pd.DataFrame(
        {
            "stratum": np.arange(design.H),
            "size": design.sizes,
            "weight": design.weights,
            "planned": planned_allocation(design, positions.size),
            "done": done.astype(np.int64),
            "mean": np.where(done > 0, mean, np.nan),
            "sd": np.where(done > 1, sd, np.nan),
        }
    )


def grades_needed(
    design: Design, positions, grades, half_width: float, level: float = LEVEL, method: str = "default"
) -> int:
    """Total grades after which the interval's half-width should reach `half_width`.

    Projects forward with the queue's greedy allocation (`next_stratum`) and the
    current per-stratum spreads of the estimator (`BatchEstimate.stratum_sd`;
    the surrogate's for a stratum without grades): the smallest
    n (at least the grades done) whose planned allocation has
    z sqrt(sum_h W_h^2 (1 - n_h/N_h) s~_h^2 / n_h) <= half_width. The plan
    starts from scratch rather than from the grades done, so it is a
    projection, not a promise; at n = N the variance is 0.
    """
    if not half_width > 0:
        raise InputError(f"the target half-width must be positive, got {half_width}")
    method = resolve_method(method)
    positions, grades = checked_grades(design, positions, grades)
    if positions.size:
        sd = estimate_batch(design, positions[None], grades[None], method).stratum_sd[0]
    else:
        sd = design.prior_sd
    z = stats.norm.ppf(0.5 + level / 2)
    w, sizes = design.weights, design.sizes
    for n, counts in enumerate(greedy_prefixes(sizes, sd, design.floor, design.kappa), start=1):
        if n >= positions.size and z * np.sqrt(stratified_variance(w, sizes, sd, counts)) <= half_width:
            return n
    return design.N
