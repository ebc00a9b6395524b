"""How a project stops, and which interval it reads when it does: the regimes, decided here and nowhere else.

- ``looks`` (the default): planned looks on information (core.stats.looks).
  The information after n grades is measured by the interval the last look
  reads, the fixed-n Korn-Graubard interval (core.stats.intervals) at the
  last look's level 2 Phi(c_K) - 1: its information fraction is
  t(n) = (target / h_K(n))^2, h_K(n) that interval's half-width now, so
  t = 1 exactly when the last look's interval is as narrow as the target.
  Look k is taken at the first n (from MIN_LOOK_GRADES grades, every stratum
  given its first grades) with t(n) >= t_k; its interval is the repeated
  confidence interval at level 2 Phi(c_k) - 1. Grading is done at the first
  look whose interval is at most the target wide, at the last look at the
  latest (unless skips hold it: then its interval is read again, with the skips' bound, at every grade
  after). Because the looks are set on information, not on grade counts,
  nobody needs to know beforehand how many grades the target takes, and
  because every look's interval holds jointly with the others, a manager may
  stop at any look for any reason. Between looks the interval valid now is
  the anytime one (core.stats.confseq).
  This is the information-based monitoring of group-sequential designs
  (Mehta and Tsiatis 2001, "Flexible sample size considerations using
  information-based interim monitoring", Drug Inf. J. 35; Jennison and
  Turnbull 2000, section 7.2.2) applied to the fixed-width stopping rule of
  Chow and Robbins (1965, "On the asymptotic theory of fixed-width sequential
  confidence intervals for the mean", Ann. Math. Statist. 36), which stops at
  the first n whose interval is narrow enough and covers at the nominal level
  as the width shrinks; the few looks and the spending cap what peeking
  at the variance can cost.
- ``anytime``: the betting confidence sequence, read at any grade; the
  stopping rule stops once its half-width is at most the target.
- ``fixed``: a budget n0 fixed in advance; the fixed-n interval read at n0.

`run_looks` replays the ``looks`` regime on R grading orders at once: the
simulator's stopping mode and the live project (R = 1) run this one function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.errors import InputError
from core.stats.allocation import FLOOR_KAPPA, KAPPA, Design
from core.stats.estimate import from_moments
from core.stats.intervals import korn_graubard
from core.stats.looks import LookPlan, look_plan
from core.stats.skips import skip_widening

LOOKS, ANYTIME, FIXED = "looks", "anytime", "fixed"
REGIMES = (LOOKS, ANYTIME, FIXED)
DEFAULT_REGIME = LOOKS
REGIME_NAMES = {
    LOOKS: "planned looks on information",
    ANYTIME: "any grade (anytime-valid)",
    FIXED: "a budget fixed in advance",
}
"""How each regime is named to people (pages, report)."""

LOOKS_METHOD = "stratified"
"""The estimator whose interval the looks read (core.stats.estimate.from_moments of the grades: the stratified
mean), whichever one a page shows beside it (core.services.reading.reported_estimate)."""

MIN_LOOK_GRADES = 10
"""No look before this many grades: the intervals' small-sample rules are checked from n = 10
(benchmarks/stopping.md); the queue's first grades go to every stratum anyway."""

_SCREEN = 1.5
"""A look is checked exactly (Korn-Graubard) only where the normal-theory half-width is within this factor of
the look's trigger: the exact interval is never this much narrower, and the check costs a Beta quantile."""


def check_regime(regime: str) -> str:
    """The regime's name, or InputError naming the choices."""
    if regime not in REGIMES:
        raise InputError(f"unknown stopping regime {regime!r}", fix=f"use one of {', '.join(REGIMES)}")
    return regime


def allocation_kappa(regime: str) -> float:
    """The small-n term the queue allocates with (core.stats.allocation.allocation_objective): the anytime
    regime reads the confidence sequence, whose width a stratum with few grades sets (KAPPA); the others read
    the fixed-n interval, whose floor for a stratum of equal grades costs FLOOR_KAPPA."""
    return KAPPA if check_regime(regime) == ANYTIME else FLOOR_KAPPA


@dataclass(frozen=True)
class LookBatch:
    """The ``looks`` regime replayed on R grading orders (arrays of shape (R,), ``taken`` (R, K)).

    stopped: whether the rule said done within the grades given; n: grades at the stop (the grades given where
    not stopped); look: the look at the stop (0-based; -1 where not stopped); value, low, high: the estimate and
    the look's interval at the stop (NaN where not stopped); taken: the grades at which each look was taken
    (0: not yet); last: the latest look taken (-1: none) and last_low, last_high its interval.
    """

    stopped: np.ndarray
    n: np.ndarray
    look: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    taken: np.ndarray
    last_low: np.ndarray
    last_high: np.ndarray

    @property
    def last(self) -> np.ndarray:
        return (self.taken > 0).sum(axis=1) - 1


class LookReplay:
    """The ``looks`` regime (module docstring) replayed on R grading orders, resumable: `advance` steps through
    more grades, in grading order, from where the last call left off, so a live project replays each grade
    once (core.services.live_looks) and the simulator all of them in one call (`run_looks`).

    The stratified estimator's interval is computed exactly where a look is due. The first grade at which each
    replication's rule says done is its stop; later grades are ignored.
    """

    def __init__(
        self,
        design: Design,
        target: float,
        reps: int = 1,
        plan: LookPlan | None = None,
        *,
        start: int = MIN_LOOK_GRADES,
    ) -> None:
        if not 0 < target <= 0.5:
            raise InputError(f"the target half-width must be in (0, 0.5], got {target}")
        self.design, self.target, self.start = design, target, start
        self.plan = plan or look_plan()
        self.steps = 0
        self._counts, self._sums, self._sumsq, self._skips = (np.zeros((reps, design.H)) for _ in range(4))
        self._binary = np.ones(reps, dtype=bool)
        self._stopped = np.zeros(reps, dtype=bool)
        self._out = {k: np.full(reps, np.nan) for k in ("value", "low", "high", "last_low", "last_high")}
        self._stop_n = np.zeros(reps, dtype=np.int64)
        self._look = np.full(reps, -1, dtype=np.int64)
        self._taken = np.zeros((reps, len(self.plan.fractions)), dtype=np.int64)
        self._following = np.zeros(reps, dtype=np.int64)  # the next look each replication waits for
        # past the last look (held there by skips only) the last look's interval is read again at every grade

    def advance(self, positions: np.ndarray, grades: np.ndarray, skipped: np.ndarray | None = None) -> LookReplay:
        """Step through the grades at ``positions`` ((R, m), the grades after those replayed so far).

        ``skipped`` (R, m): the items of the step's stratum drawn before it that stay skipped (passed over by
        every grader). Skips are not grades: the look's interval is widened on each side by how far they could
        move the estimate (core.stats.skips.skip_widening, Manski's worst case), so a project whose skips keep
        it wider than the target cannot stop.
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=np.int64))
        y = np.atleast_2d(np.asarray(grades, dtype=float))
        strata = self.design.stratum[positions]
        for step in range(positions.shape[1]):
            if self._stopped.all():
                break
            self._step(strata[:, step], y[:, step], None if skipped is None else skipped[:, step])
        return self

    def _step(self, h: np.ndarray, x: np.ndarray, skipped: np.ndarray | None) -> None:
        """One grade per replication (stratum ``h``, grade ``x``), and the look it makes due, if any."""
        design, rows = self.design, np.arange(h.size)
        counts, sums, sumsq = self._counts, self._sums, self._sumsq
        counts[rows, h] += 1
        sums[rows, h] += x
        sumsq[rows, h] += x * x
        if skipped is not None:
            self._skips[rows, h] = skipped
        self._binary &= (x == 0) | (x == 1)
        self.steps += 1
        n = self.steps
        if n < self.start:
            return
        wanted = ~self._stopped & (counts >= np.minimum(design.floor, design.sizes)).all(axis=1)
        if not wanted.any():
            return
        fractions, levels = np.asarray(self.plan.fractions), np.asarray(self.plan.levels)
        moments = (counts[wanted], sums[wanted], sumsq[wanted])
        batch = from_moments(design, moments, moments, self._binary[wanted], with_saving=False)
        variance_all = batch.variance
        trigger = self.target / np.sqrt(fractions[self._following[wanted]])
        near = self.plan.constants[-1] * np.sqrt(variance_all) <= _SCREEN * trigger
        if not near.any():
            return
        idx = np.flatnonzero(wanted)[near]
        value, variance, size, df = batch.value[near], variance_all[near], batch.n[near], batch.df[near]
        low, high = korn_graubard(value, variance, size, df, levels[-1])
        half = (high - low) / 2
        info = np.where(half > 0, (self.target / np.maximum(half, 1e-300)) ** 2, np.inf)
        due = info >= fractions[self._following[idx]]
        if not due.any():
            return
        idx, value, variance, size, df, info = (a[due] for a in (idx, value, variance, size, df, info))
        k = np.searchsorted(fractions, info, side="right") - 1  # the furthest look reached
        low = np.empty(idx.size)
        high = np.empty(idx.size)
        for j in np.unique(k):
            at = k == j
            low[at], high[at] = korn_graubard(value[at], variance[at], size[at], df[at], levels[j])
        if skipped is not None:
            down, up = skip_widening(design.weights, value, counts[idx], sums[idx], self._skips[idx])
            low, high = np.maximum(low - down, 0.0), np.minimum(high + up, 1.0)
        self._taken[idx, k] = n
        self._following[idx] = np.minimum(k + 1, fractions.size - 1)
        out = self._out
        out["last_low"][idx], out["last_high"][idx] = low, high
        done = (high - low) / 2 <= self.target + 1e-12
        if done.any():
            hit = idx[done]
            self._stopped[hit] = True
            self._stop_n[hit] = n
            self._look[hit] = k[done]
            out["value"][hit], out["low"][hit], out["high"][hit] = value[done], low[done], high[done]

    def batch(self) -> LookBatch:
        """The replay so far (a copy): stops, looks taken and intervals."""
        out = {k: v.copy() for k, v in self._out.items()}
        return LookBatch(
            stopped=self._stopped.copy(),
            n=np.where(self._stopped, self._stop_n, self.steps),
            look=self._look.copy(),
            taken=self._taken.copy(),
            **out,
        )


def run_looks(
    design: Design,
    positions: np.ndarray,
    grades: np.ndarray,
    target: float,
    plan: LookPlan | None = None,
    *,
    start: int = MIN_LOOK_GRADES,
    skipped: np.ndarray | None = None,
) -> LookBatch:
    """Replay the ``looks`` regime (module docstring) on the grades at ``positions``, (R, n) in grading order:
    `LookReplay` through all of them at once (``skipped`` as in `LookReplay.advance`)."""
    reps = np.atleast_2d(np.asarray(positions)).shape[0]
    return LookReplay(design, target, reps, plan, start=start).advance(positions, grades, skipped).batch()


@dataclass(frozen=True)
class HeldStop:
    """A stop the skips held (`held_stop`): ``done`` whether they have let it go, at ``n`` grades (the last
    grade while they hold it), with the estimate ``value`` and the look's interval ``low``..``high`` there,
    widened by the ``standing`` skips then."""

    done: bool
    n: int
    value: float
    low: float
    high: float
    standing: int


def held_stop(
    design: Design,
    positions: np.ndarray,
    grades: np.ndarray,
    start: int,
    level: float,
    target: float,
    skipped_after: dict[int, int],
) -> HeldStop | None:
    """Where a live project's ``looks`` stop lies once the skips it met are counted, as `LookReplay` counts them
    when it is given the skips (the simulator's): None where no skip stood at ``start``, the stop the grades
    alone give (a look at level ``level``); else the first grade k from ``start`` on at which that look's
    interval, read again on the first k grades (in grading order, ``positions`` and ``grades``), widened by the
    skips standing then (core.stats.skips.skip_widening), is at most ``target`` wide (``done``); where none is,
    the last grade, not done: the skips hold it still. ``skipped_after``: each skipped item -> the grades given
    before its skip; a skip stands at grade k when it came after fewer than k grades and its item is not among
    the first k graded. Vectorised over the grades from ``start`` on (one pass of sums, as `LookReplay` keeps
    them)."""
    positions = np.asarray(positions, dtype=np.int64)
    grades = np.asarray(grades, dtype=float)
    n, order = positions.size, {int(p): k for k, p in enumerate(positions)}
    ks = np.arange(start, n + 1)
    skips = np.zeros((ks.size + 1, design.H))  # skips standing at each k, by stratum (a difference array)
    for position, before in skipped_after.items():
        first, last = max(before + 1, start), order.get(position, n)  # standing for first <= k <= last
        if first <= last:
            skips[first - start, design.stratum[position]] += 1
            skips[last - start + 1, design.stratum[position]] -= 1
    skips = np.cumsum(skips, axis=0)[:-1]
    if not skips[0].any():
        return None
    one_hot = np.zeros((n, design.H))
    one_hot[np.arange(n), design.stratum[positions]] = 1.0
    counts, sums, sumsq = (np.cumsum(one_hot * w[:, None], axis=0)[ks - 1] for w in (np.ones(n), grades, grades**2))
    binary = np.cumsum(~((grades == 0) | (grades == 1)))[ks - 1] == 0
    batch = from_moments(design, (counts, sums, sumsq), (counts, sums, sumsq), binary, with_saving=False)
    low, high = korn_graubard(batch.value, batch.variance, batch.n, batch.df, level)
    down, up = skip_widening(design.weights, batch.value, counts, sums, skips)
    low, high = np.maximum(low - down, 0.0), np.minimum(high + up, 1.0)
    done = np.flatnonzero((high - low) / 2 <= target + 1e-12)
    at = int(done[0]) if done.size else ks.size - 1
    return HeldStop(
        bool(done.size), int(ks[at]), float(batch.value[at]), float(low[at]), float(high[at]), int(skips[at].sum())
    )


def uniform_fixed_n(s2: float, size: int, target: float, level: float = 0.95) -> int:
    """Grades a plain uniform random sample needs for half-width ``target`` with the usual fixed-n (Wald)
    interval: n0 = z^2 S^2 / h^2 and n = n0 / (1 + n0 / N), rounded up, at most N (Cochran 1977, eq. 4.1-4.2)."""
    z = stats.norm.ppf(0.5 + level / 2)
    n0 = z**2 * max(s2, 0.0) / target**2
    return int(min(size, np.ceil(n0 / (1 + n0 / size))))


def uniform_fixed_n_wilson(s2: float, mean: float, size: int, target: float, level: float = 0.95) -> int:
    """Grades a plain uniform random sample needs for half-width ``target`` with Wilson's score interval, the
    valid fixed-n interval for a proportion at small n p (Brown, Cai and DasGupta 2001, Statist. Sci. 16,
    recommend it over the Wald interval, whose coverage is erratic and poor where n p is small: at p = 0.02
    the Wald size of 30 grades expects 0.6 positives, and its interval covers far below 95%).

    Wilson's half-width at p-hat = p after m trials, z sqrt(p (1 - p) / m + z^2 / (4 m^2)) / (1 + z^2 / m)
    (Wilson 1927), is read on the effective size m = n p (1 - p) / S^2 of grades of variance S^2 (as the
    Korn-Graubard interval reads its Beta, core.stats.intervals), so that for binary grades it is Wilson's
    own; n0 = the smallest such n, then n = n0 / (1 + n0 / N), at most N. At p = 0 or 1 the effective size is
    the grades' count, Wilson's half-width there z^2 / (2 (m + z^2)): a pool of every grade 0 said 0 grades (an
    outside audit). Where only S^2 is 0 (every grade 1/2, say) it is the Wald size."""
    spread = mean * (1 - mean)
    if spread > 0 and s2 <= 0:
        return uniform_fixed_n(s2, size, target, level)
    z = stats.norm.ppf(0.5 + level / 2)
    m = np.arange(1, 100 * size + 1, dtype=float) / 10.0  # effective sizes in steps of 0.1
    half = z * np.sqrt(spread / m + z**2 / (4 * m**2)) / (1 + z**2 / m)
    reached = np.flatnonzero(half <= target)
    if reached.size == 0:
        return size
    n0 = m[reached[0]] * (s2 / spread if spread > 0 else 1.0)
    return int(min(size, np.ceil(n0 / (1 + n0 / size))))
