"""Comparing targets on one pool: paired differences, their intervals, win rates (docs/compare.md).

Notation: K targets graded on the same N items, y_k,i in [0, 1] the grade of target k's response to item i.
For a pair (A, B), names sorted, the paired difference d_i = y_A,i - y_B,i lies in [-1, 1] and the estimand
is D = mean_i d_i = mean(A) - mean(B), estimated on the items graded for both (a graded item is one graded for
every target). In pairwise mode a grader says which response is better: the preference
w_i = 1 (A better), 1/2 (tie), 0 (B better), the estimand A's win rate mean_i w_i, which is (1 + mean_i s_i) / 2
for s_i = 2 w_i - 1 in [-1, 1]: one estimator serves both.

Estimator (inside a stratified design, core.stats.allocation.Design): D^ = sum_h W_h dbar_h, variance
V = sum_h W_h^2 (1 - n_h/N_h) s~_h^2 / n_h (Cochran 1977, eq. 5.7), s~_h^2 = max(s_h^2, `difference_floor`).
Interval: the Korn-Graubard interval (core.stats.intervals) of z = (1 + d) / 2, a variable in [0, 1] with mean
(1 + D) / 2 and variance V / 4, Satterthwaite's df, mapped back by d = 2 z - 1; it holds for bounded grades at
any mean, as it does for one target. The interval the anytime and looks regimes read is the confidence
sequence of z (core.stats.confseq), mapped back the same way.

Several pairs: with P = K (K - 1) / 2 pairs every interval is taken at level 1 - alpha / P (Bonferroni):
P(some pair's interval misses) <= sum over pairs of alpha / P = alpha, whatever the dependence between the
pairs' estimates. They share items, so that dependence is strong and of unknown form; Bonferroni needs
nothing of it, and for the P = 3 pairs of three targets it costs little against a joint (Sidak or
max-|t|) interval: 0.9833 against 0.9830 per pair.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.stats.allocation import Design, stratum_moments
from core.stats.intervals import (
    LEVEL,
    agreeing_strata,
    korn_graubard,
    sample_variance,
    satterthwaite_df,
    stratified_mean_variance,
)

MODES = ("absolute", "side-by-side", "pairwise")
"""How a comparison is graded: one response at a time (names hidden), every target's response on one card
(order randomised per item, names hidden, one grade each), or one preference per card (A better, tie, B better)."""
DEFAULT_MODE = "absolute"


@dataclass(frozen=True)
class Comparison:
    """A prepared comparison pool (core.surrogate.targets.prepare_targets).

    models:  target names, sorted.
    items:   model -> core.surrogate.prepare.prepare_items's table of that target's rows; row p is item p
             for every target.
    classes: (K, N) int, the meaning class of each target's answer to each item (comparable within an item).
    """

    models: tuple[str, ...]
    items: dict[str, pd.DataFrame]
    classes: np.ndarray

    @property
    def N(self) -> int:  # noqa: N802 - survey notation
        return int(self.classes.shape[1])

    def same_meaning(self, a: str, b: str) -> np.ndarray:
        """(N,) bool: whether targets a and b gave answers of one meaning class."""
        index = self.models.index
        return self.classes[index(a)] == self.classes[index(b)]


def pairs(models: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every pair (A, B) with A before B in sorted order: the differences mean(A) - mean(B)."""
    return list(itertools.combinations(sorted(models), 2))


def pair_key(a: str, b: str) -> str:
    """The pair's name in results: "A - B"."""
    return f"{a} - {b}"


def simultaneous_level(level: float, n_pairs: int) -> float:
    """Per-pair level 1 - (1 - level) / P whose P intervals hold together at `level` (Bonferroni; module docstring)."""
    return 1.0 - (1.0 - level) / max(n_pairs, 1)


def preference(y_a: np.ndarray, y_b: np.ndarray) -> np.ndarray:
    """A grader's preference simulated from two grades: 1 where y_a > y_b, 1/2 where equal, 0 where y_a < y_b."""
    return 0.5 + 0.5 * np.sign(np.asarray(y_a, dtype=float) - np.asarray(y_b, dtype=float))


def difference_floor(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """The variance floor of a stratum whose differences are all equal (or which has one), values in [-1, 1].

    Such a stratum carries information on its grades, not certainty. With common value c, half a pseudo-grade
    at the far end of [-1, 1] from c (Jeffreys, as core.stats.intervals.equal_strata_floor does on [0, 1]) gives
    a share q = 1 / (2 (n_Z + 1)) of items at distance 1 + |c|: s~^2 = q (1 - q) (1 + |c|)^2, n_Z the grades of
    every stratum whose differences all equal c, which share the one prior
    (core.stats.intervals.agreeing_strata). For c = +-1 this is the floor of z = (1 + d) / 2, times 4; for
    c = 0 (the targets always agreed) a quarter of that, and its term still falls like 1 / n_h^2, the
    interval's width like 1 / n_h. 0 elsewhere.
    """
    equal, common, together = agreeing_strata(counts, sums, sumsq)
    q = 0.5 / (together + 1.0)
    return np.where(equal, q * (1.0 - q) * (1.0 + np.abs(common)) ** 2, 0.0)


@dataclass(frozen=True)
class DifferenceBatch:
    """Estimates of a difference for R replicated samples, arrays of shape (R,): value D^ in [-1, 1] (NaN while
    a stratum has no grade), its variance V, Satterthwaite's df and the grades n (inf for a census)."""

    value: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    n: np.ndarray
    missing: np.ndarray

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Korn-Graubard on z = (1 + d) / 2, mapped back (module docstring); [-1, 1] where a stratum is missing."""
        ready = ~self.missing
        z = np.where(ready, (1.0 + self.value) / 2.0, 0.5)
        low, high = korn_graubard(z, self.variance / 4.0, self.n, self.df, level)
        return np.where(ready, 2.0 * low - 1.0, -1.0), np.where(ready, 2.0 * high - 1.0, 1.0)


def difference_batch(design: Design, positions: np.ndarray, differences: np.ndarray) -> DifferenceBatch:
    """The stratified estimate of the module docstring; positions and differences (R, n), values in [-1, 1]."""
    positions = np.atleast_2d(positions)
    d = np.atleast_2d(np.asarray(differences, dtype=float))
    counts, sums, sumsq = stratum_moments(design, positions, d)
    seen = counts > 0
    s2 = np.maximum(sample_variance(counts, sums, sumsq), difference_floor(counts, sums, sumsq))
    w, sizes = design.weights, design.sizes.astype(float)
    value = np.sum(w * np.where(seen, sums / np.maximum(counts, 1), 0.0), axis=1)
    missing = ~seen.all(axis=1)
    census = (counts >= sizes).all(axis=1)
    n = counts.sum(axis=1)
    return DifferenceBatch(
        value=np.where(missing, np.nan, value),
        variance=stratified_mean_variance(w, sizes, counts, s2),
        df=satterthwaite_df(w, sizes, counts, s2),
        n=np.where(census, np.inf, n),
        missing=missing,
    )


def resolved(low: float, high: float) -> str:
    """A plain statement of what an interval for mean(A) - mean(B) says: "A better", "B better" or "unresolved"."""
    if low > 0:
        return "A better"
    if high < 0:
        return "B better"
    return "unresolved"
