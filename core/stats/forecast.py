"""How many grades the project will need before it may stop, with an 80% range: the one forecast.

The setup headline, the dashboard's projection, the Simulate page, the report
and the simulator's stopping mode all call `forecast`.

Grades to stop. Under Neyman allocation a stratified design's variance after
n grades is V = A / n - B / N (Cochran 1977, eq. 5.25), A = (sum_h W_h S_h)^2,
B = sum_h W_h S_h^2. The stop reads the Clopper-Pearson interval at the
effective size n* = m (1 - m) / V (Korn and Graubard; core.stats.intervals),
so it comes at the least n whose n* gives an interval at most h wide on each
side: n* = `exact_size`(m, h), then

    n(S) = A / (m (1 - m) / n* + B / N),

or, once grades are given and the strata read apart, the least n whose allocation around the grades each
stratum holds reaches that variance (`least_grades`),

at the level of the interval the regime reads at its stop: the last planned
look's (core.stats.looks) for ``looks``, 95% at n0 for ``fixed`` (whose stop
is n0 itself), and for ``anytime`` the fixed-n projection at the half-width r
h, r = the fixed-n over the anytime half-width (measured on the grades once
the sequence is known, else ANYTIME_WIDTH_RATIO). At few expected successes
the exact interval is much wider than the normal one (at m = 0.02 and n* = 45,
0.058 against 0.041), which a normal approximation with a continuity
correction missed. S_h = sqrt(rho m_h (1 - m_h)), m_h the stratum's mean grade
and rho the share of the Bernoulli variance the grades use (1 for
correct/incorrect grades; estimated from the grades for finer scales). On a
scale of a few grade values (0, 1/2, 1, say) a stratum's variance is never
below (m_h - a)(b - m_h), a and b the scale's values either side of m_h: the
least a distribution on those values with mean m_h can vary (`lattice_floor`).

The range. The stratum means are unknown, so n(S) is a random variable; the
forecast is its weighted median and 10% and 90% quantiles over DRAWS draws of

    logit c_h = b (logit p_h - mean logit p) + e, e such that sum_h W_h c_h = expit(logit(l) + delta),  then
    m_h ~ Beta(k c_h + s_h, k (1 - c_h) + n_h - s_h),

where l is the pool's level: the surrogate's (or the manager's) predicted mean
p updated by the grades so far as K pseudo-grades would be, l = (K p + s +
1/2) / (K + n + 1) (K = POOL_PRIOR_GRADES, or EXPECTED_PRIOR_GRADES for the
manager's score); delta ~ Normal(0, sigma^2 K / (K + n)) how far that level
may be off (sigma = SIGMA_SURROGATE or SIGMA_EXPECTED); b ~ Uniform(-1, 1) the
unknown calibration slope of the surrogate's stratum predictions p_h (0: no
signal, 1: at face value, -1: the same spread the other way round: a surrogate
whose agreement falls where the target's grades rise separates the strata as
well, and the grades' likelihood picks the sign; with b ~ Uniform(0, 1), which
gives such a surrogate no mass, the projection after 20 grades held 0.47-0.55
of the stops on an outside audit's anti-correlated pools, 0.90-0.92 with it);
k ~ log-uniform on STRENGTH_RANGE the pseudo-grades behind each stratum's prior
mean, and s_h, n_h the stratum's grades so far.
The shape, b and k, is what the grades say least about directly, and what
decides the stratification's gain: each draw is weighted by the likelihood of
the grades' split over the strata under its shape (`_strata_prior`), so the
grades, not a fixed k, say how far the strata stray from the surrogate's
profile and from each other (with k fixed at 4, the setup's 80% range held
0.97 of the stops over the benchmark's pools together). Before any grade the
range is the prior's. The prior stratum mean p_h is the surrogate's raw
prediction (the design's smoothed proxy unshrunk); the level l is the pool's
mean, and each draw's shape is shifted on the logit scale (e) so that its
strata average to the draw's level: the manager's expected score, where one is
given, is the draws' median pool mean, whatever the shape.

The grades so far are part of the stop's. The stop reads the estimate after n
grades, of which the k_h so far in each stratum are known: for 0/1 grades (rho
= 1), whose variance is a function of the means the stop reads, a draw's stop
is n(S) at the means the stop will read, m'_h = f_h x_h + (1 - f_h) m_h, x_h
the stratum's mean so far and f_h = k_h / n_h its share of the stratum's
grades at the stop (n_h its Neyman share of the draw's n). Drawing the means
as if the stop read them afresh kept the range as wide near the stop as the
uncertainty of the means after those grades (the projection's high over its
low 9 to 12 times after 20 grades of a rare mean; on a pool of signal the
range read at 60% of the stop held 0.99 of the stops). A finer scale's stop
reads the grades' own spread, whose uncertainty given the k grades the
kurtosis term below carries; pinning its means as well counted the grades
given twice (on the benchmark's skewed pools the projection after 20 grades
held 0.06-0.90 of the stops with it, 0.19-0.96 without). A draw's stop then
varies by the sampling noise of the variance estimate that triggers it (the
Chow-Robbins stop is the first n with z^2 V_hat(n) <= h^2): V = sum_h W_h^2
S_h^2 / n_h, and for 0/1 grades the relative variance of a stratum's s_h^2
from n_h grades is (1 - 2 m_h)^2 / (n_h m_h (1 - m_h)); summed over the strata
by their shares of V (`_spread_noise`), it enters as a log-normal factor. It
is the noise of the whole estimate at n, not only of the n - k grades still to
come: given the grades so far only those vary, but the queue's allocation
answers the same noise, and on a pool of signal (tests/test_stopping.py) stops
fell inside the range read at 30%, 60% and 90% of the stop 0.86, 0.72 and 0.62
of the time with the part to come alone, 0.89, 0.88 and 0.82 with the whole.
For a finer scale, whose rho is read from the k grades rather than drawn, the
noise is the spread's own, the uncertainty of rho included: the variance the
stop reads after n grades is the one the k grades so far show, weighted k / n,
and that of the n - k still to come, so given the k grades its relative
standard deviation is sqrt((kappa - 1) (n - k) / (n k)), kappa the grades'
kurtosis about their stratum means (`_excess_kurtosis`; (kappa - 1) / n is the
relative variance of a variance estimated from n grades, which for 0/1 grades
is the Bernoulli formula above, and the fourth moment about each stratum's
own few grades is corrected for their mean being read from them); before the
kurtosis can be read, the Bernoulli formula times rho. Once it is read, each
draw holds the pooled variance at the grades' (`_held_share`): the drawn
means move the strata's shape, not the level of a variance read directly,
whose uncertainty the kurtosis term already carries. And the range is centred
at the spread's posterior median, the grades' variance times exp(v^2 / 2), v
that relative standard deviation: a variance estimated from skewed grades
falls below the spread more often than above it (on the log scale, a normal
of mean -v^2 / 2 about it, whose mean is the spread itself). With the three
and the share floor below, the projection after 20 grades held 0.70-0.90 of
the stops (within 2 s.e.) on 26 of the benchmark's 36 finer-scale (pool,
target) pairs, against 20 before (benchmarks/stopping.md); 25 since strata whose
grades agree share one prior (core.stats.intervals.equal_strata_floor): a Likert
pool of mean 0.1 with a strong surrogate stops sooner, and its projection holds
0.92-0.93 of the stops, above the goal.

Before any grade the forecast is only as good as the surrogate's (or the
manager's) idea of the mean, and its range says so: sigma is wide; and a
surrogate that cannot tell strata apart leaves the slope of the strata's
means unknown, which the weighted draws carry until the grades show it.

A finer scale's stop reads the larger of the grades' variance and a floor,
the Bernoulli variance at a Jeffreys-smoothed mean times the share rho
(core.stats.intervals.share_variance), which sets the stop at rare means:
the forecast's stop is the later of the spread's n(S) and the floor's own
(`_share_floor_grades`), read at the mean the stop will see, the grades
given and the draw's mean for the rest.

0/1 grades read as one sample (strata whose means the stop would not yet tell
apart, `_strata_read_apart`) stop where the mean their count shows allows it:
a first passage of the count (`_passage`), whose spread at a rare mean comes
from how soon the first few successes come, which the log-normal noise above,
a first-order approximation for many successes, does not have.

The floor's stop is the least n whose own floor allows it (`first_stop`), the
mean of the grades to come carries their sampling noise, and grades all at one
end of a finer scale show none of its share, which is then drawn as before any
grade (docs/method.md, *The forecast*).

Where it is known to miss (benchmarks/stopping.md): skewed scores at rare
means, whose stop is the first time the floor and the noisy spread are both
small enough, a first passage the forecast's single noise draw models only
roughly (the projection after 20 grades holds 0.54-0.60 of those stops).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import special, stats

from core.stats.allocation import Design, stratum_moments
from core.stats.design import planned_budget
from core.stats.intervals import beta_interval, jeffreys_mean
from core.stats.looks import look_plan
from core.stats.savings import HETEROGENEITY_LEVEL
from core.stats.stopping import ANYTIME, FIXED, LOOKS, check_regime, uniform_fixed_n_wilson

RANGE = (0.1, 0.9)
"""Quantiles of the forecast's range: an 80% range."""

DRAWS = 500
"""Draws of the stratum means per forecast (the weights leave about a tenth of them effective once a few
hundred grades are in; 1,000 draws moved the benchmark's calibration by no more than its noise, at twice
the time)."""

SIGMA_SURROGATE = 0.6
"""sd, on the logit scale, of how far the pool's mean may lie from the surrogate's prediction of it."""

SIGMA_EXPECTED = 0.35
"""sd, on the logit scale, of how far the pool's mean may lie from a score the manager expects."""

POOL_PRIOR_GRADES = 4.0
"""Pseudo-grades behind the surrogate's prediction of the pool's mean: the grades move the forecast's level
to theirs within a few dozen (a surrogate's agreement is a ranking, not a calibrated probability)."""

EXPECTED_PRIOR_GRADES = 20.0
"""Pseudo-grades behind a score the manager expects."""

STRENGTH_RANGE = (1.0, 200.0)
"""Where k, the pseudo-grades behind each stratum's prior mean, may lie: drawn log-uniformly (the
scale-invariant prior of a precision) and weighted by the grades (`_strata_prior`). At 1 a stratum's mean is
its own grades' nearly at once; at 200 the strata keep the surrogate's shape until hundreds of grades say
otherwise. Which of the two a pool is like, the grades' split over the strata tells."""

SHARE_PRIOR_GRADES = 2.0
"""Pseudo-grades at rho = 1 behind the variance share the grades show (`_variance_share`)."""

BINARY_LEVELS = (0.0, 1.0)
"""The grade values of a correct/incorrect scale (rho = 1)."""

SHARE_PRIOR_RANGE = (0.05, 1.0)
"""Where rho may lie before any grade of a scale finer than correct/incorrect: Var y <= m (1 - m) for y in
[0, 1] (Bhatia and Davis 2000), so rho is in (0, 1]; the forecast draws it log-uniformly (the scale-invariant
prior of a variance ratio, as Jeffreys' for a scale) from the least share the scale's values allow at the
draw's means (`lattice_floor`, pooled over the strata), at least 0.05, the least `_variance_share` reads, to 1."""

MIN_KURTOSIS_GRADES = 8
"""Grades (in strata with 2 or more) before a finer scale's kurtosis is read from them (`_excess_kurtosis`);
fewer keep the Bernoulli formula for the stop's noise."""

ANYTIME_WIDTH_RATIO = 0.62
"""r before the confidence sequence is known: its fixed-n half-width is about 0.62 times the anytime one
near the n0 it is tuned for (benchmarks/estimation.md: 1.5-1.9 times), i.e. about 2.6 times the grades."""


@dataclass(frozen=True)
class Forecast:
    """Grades to stop under the regime: ``n`` (median), ``low``..``high`` (the 80% range), ``regime``,
    ``graded`` (the grades it was made from; 0: before any grade) and ``uniform``."""

    n: int
    low: int
    high: int
    regime: str
    graded: int
    uniform: int = 0
    """The grades a uniform random sample needs with the usual fixed-n interval, on the same draws of the pool."""
    uniform_same: int = 0
    """The grades a uniform random sample needs to stop under the same regime, on the same draws of the pool."""

    @property
    def spread(self) -> float:
        """high / low: how far apart the range's ends are (1: a point)."""
        return self.high / max(self.low, 1)


def neyman_grades(
    weights: np.ndarray,
    sds: np.ndarray,
    size: int,
    half_width: float,
    z: float,
    mean: np.ndarray,
    given: np.ndarray | None = None,
) -> np.ndarray:
    """n(S) of the module docstring over leading axes of ``sds`` (..., H), read with the interval the stop
    reads: the Clopper-Pearson interval at the effective size n* = m (1 - m) / V (Korn and Graubard,
    core.stats.intervals), whose half-width at few expected successes is well above the normal one. The least
    n* whose interval is at most ``half_width`` wide (`exact_size`) gives V = m (1 - m) / n*, and the
    stratified variance under Neyman allocation, V = A / n - B / N (Cochran 1977, eq. 5.25, A =
    (sum_h W_h S_h)^2, B = sum_h W_h S_h^2), gives n = A / (V + B / N). ``mean``: the pool's mean m (...,);
    ``z`` the normal quantile of the interval's level. ``given``: the grades each stratum holds already
    (..., H), which no allocation of the grades to come takes back (`least_grades`); None: none. At least 1,
    at most N."""
    b = np.sum(weights * sds**2, axis=-1)
    m = np.clip(mean, *EXACT_MEANS)
    variance = m * (1 - m) / exact_size(m, half_width, float(2 * stats.norm.cdf(z) - 1))
    if given is None:
        a = np.maximum(np.sum(weights * sds, axis=-1) ** 2, 1e-12)  # all spreads 0: one grade, without 0 / 0
        return np.clip(np.ceil(a / (variance + b / size)), 1, size)
    return np.clip(np.ceil(least_grades(weights * sds, given, variance + b / size)), 1, size)


def least_grades(c: np.ndarray, given: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """The fewest grades n = sum_h n_h with sum_h c_h^2 / n_h <= ``bound`` and n_h >= k_h (``given``), c_h =
    W_h S_h (..., H): the stratified variance V = sum_h W_h^2 S_h^2 / n_h - B / N at most the stop's, when the
    k_h grades each stratum holds already stay in it. By the Lagrange conditions (Cochran 1977, section 5.5, with
    the bounds of a second phase), n_h = max(k_h, c_h / r): the strata whose c_h / k_h exceed r take grades in
    proportion to c_h (Neyman's), the others keep their k_h; with F the first set, r = (bound - sum_{h not in F}
    c_h^2 / k_h) / sum_{h in F} c_h and n = (sum_F c_h)^2 / (bound - sum_{not F} c_h^2 / k_h) + sum_{not F}
    k_h. F is found among the strata sorted by c_h / k_h, the first j of them for the j whose r falls between
    the j-th ratio and the next. Without grades given it is Neyman's n = A / bound. Assuming every grade
    Neyman's put the stop among the grades given where they sat far from Neyman's shares: after 64 grades
    of 200 it said 65 where the stop needed 88 (a manager's review)."""
    c = np.broadcast_to(c, np.broadcast_shapes(c.shape, given.shape))
    k = np.broadcast_to(np.asarray(given, dtype=float), c.shape)
    bound = np.asarray(bound, dtype=float)[..., None]
    spread = c > 0  # a stratum of no spread needs no grade
    ratio = np.where(k > 0, c / np.maximum(k, 1e-300), np.where(spread, np.inf, 0.0))
    order = np.argsort(-ratio, axis=-1)
    c, k, ratio = (np.take_along_axis(x, order, axis=-1) for x in (c, k, ratio))
    kept = np.where(k > 0, c**2 / np.maximum(k, 1e-300), np.where(c > 0, np.inf, 0.0))  # no grades: in F
    zero = np.zeros(c.shape[:-1] + (1,))
    outside = np.concatenate([np.cumsum(kept[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)  # (..., H + 1): j
    held = np.concatenate([np.cumsum(k[..., ::-1], axis=-1)[..., ::-1], zero], axis=-1)
    inside = np.concatenate([zero, np.cumsum(c, axis=-1)], axis=-1)
    room = bound - outside
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((room > 0) & (inside > 0), room / inside, np.nan)
        below = np.concatenate([ratio, zero], axis=-1)  # the next stratum's ratio, 0 past the last
        above = np.concatenate([np.full(zero.shape, np.inf), ratio], axis=-1)
        fits = (r > 0) & (above > r) & (below <= r)
        n = inside**2 / room + held
    fits[..., 0] = room[..., 0] >= 0  # the grades given already suffice
    n[..., 0] = held[..., 0]
    j = np.argmax(fits, axis=-1)[..., None]
    found = np.take_along_axis(fits, j, axis=-1)[..., 0]
    return np.where(found, np.take_along_axis(n, j, axis=-1)[..., 0], np.inf)


EXACT_MEANS = (1e-4, 1 - 1e-4)
"""The means `exact_size` is tabulated over (a pool's drawn mean is clipped to them)."""

_EXACT_GRID = 241
"""Means in `exact_size`'s table, evenly spaced on the logit scale."""


def exact_size(mean: np.ndarray, half_width: float | np.ndarray, level: float) -> np.ndarray:
    """The least effective size n* at which the Clopper-Pearson interval (core.stats.intervals.beta_interval)
    of x = m n* successes is at most ``half_width`` wide on each side on average, (high - low) / 2 <= h, for
    the means ``mean``: interpolated, on the logit scale, in a table solved once per half-width and level
    (``half_width`` may vary over ``mean``'s leading axes, as the anytime regime's per-project ratio does)."""
    mean = np.asarray(mean, dtype=float)
    halves = np.broadcast_to(np.asarray(half_width, dtype=float), mean.shape)
    out = np.empty(mean.shape)
    for half in np.unique(halves):
        at = halves == half
        grid, sizes = _exact_table(float(half), float(level))
        out[at] = np.exp(np.interp(special.logit(mean[at]), grid, np.log(sizes)))
    return out


@functools.lru_cache(maxsize=16)
def _exact_table(half_width: float, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(logit m, n*) at _EXACT_GRID means: the least n* per mean, by bisection on log n* (the half-width falls
    as n* grows)."""
    grid = np.linspace(*special.logit(EXACT_MEANS), _EXACT_GRID)
    m = special.expit(grid)
    low, high = np.zeros_like(m), np.full_like(m, np.log(1e8))
    for _ in range(50):
        mid = (low + high) / 2
        lo, hi = beta_interval(m, np.exp(mid), level)
        narrow = (hi - lo) / 2 <= half_width
        high, low = np.where(narrow, mid, high), np.where(narrow, low, mid)
    return grid, np.exp(high)


def surrogate_mean(design: Design) -> float:
    """The surrogate's own prediction of the pool's mean grade: its raw predictions (the design's smoothed
    proxy unshrunk) averaged over the pool."""
    raw = np.clip(0.5 + (design.proxy - 0.5) / max(design.shrink, 1e-9), 0.02, 0.98)
    return float(raw.mean())


def _prior_logits(design: Design, expected: float | None) -> tuple[np.ndarray, float, float]:
    """The surrogate's raw stratum predictions on the logit scale (the design's smoothed proxy unshrunk), the
    logit of the pool's prior mean (the surrogate's own, or the manager's ``expected`` score) and sigma."""
    raw = np.clip(0.5 + (design.proxy - 0.5) / max(design.shrink, 1e-9), 0.02, 0.98)
    prior = np.clip(np.bincount(design.stratum, weights=raw, minlength=design.H) / design.sizes, 0.02, 0.98)
    pool = float(design.weights @ prior) if expected is None else float(np.clip(expected, 0.005, 0.995))
    return special.logit(prior), float(special.logit(pool)), SIGMA_SURROGATE if expected is None else SIGMA_EXPECTED


def _at_pool_mean(weights: np.ndarray, shape: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Stratum means expit(shape_h + delta) (..., H) whose pool mean sum_h W_h expit(shape_h + delta) is ``pool``
    (..., 1): delta by bisection, the sum increasing in it. Adding the shape to the level's logit instead moved
    the pool's mean away from the level (a convex expit below 1/2: for an expected 0.1, draws of median 0.165,
    and uniform's size beside the forecast 52% too high: a manager's review)."""
    target = np.clip(pool, 1e-6, 1 - 1e-6)
    low = np.full(np.broadcast_shapes(shape.shape[:-1] + (1,), target.shape), -30.0)
    high = -low
    for _ in range(40):  # 60 / 2^40: far below any figure read from the means
        mid = (low + high) / 2
        below = special.expit(shape + mid) @ weights < target[..., 0]
        low, high = np.where(below[..., None], mid, low), np.where(below[..., None], high, mid)
    return special.expit(shape + (low + high) / 2)


def forecast_batch(
    design: Design,
    positions: np.ndarray,
    grades: np.ndarray,
    target: float,
    regime: str,
    *,
    n0: int | None = None,
    expected: float | None = None,
    width_ratio: np.ndarray | float | None = None,
    levels: tuple[float, ...] | None = BINARY_LEVELS,
    seed: int = 0,
) -> np.ndarray:
    """(R, 5): low, median and high of grades to stop over the weighted draws (module docstring), and the
    grades uniform random sampling needs on the same draws (the median over their ratio, draw by draw) with
    its usual fixed-n interval and under the same ``regime``, for R replications of grades, (R, n) in grading
    order (n = 0: before any grade). ``n0`` the budget of the ``fixed`` regime; ``width_ratio`` r for ``anytime``
    (default ANYTIME_WIDTH_RATIO); ``levels``: the grading scale's grade values (None: any value in [0, 1]);
    for correct/incorrect (BINARY_LEVELS) rho = 1, else rho is drawn over SHARE_PRIOR_RANGE until the grades
    show it (`_variance_share`), and no stratum's variance falls below `lattice_floor`."""
    check_regime(regime)
    positions = np.atleast_2d(np.asarray(positions, dtype=np.int64))
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    reps = positions.shape[0]
    if regime == FIXED:
        budget = float(n0 if n0 is not None else design.N)
        return np.full((reps, 5), budget)
    counts, sums, sumsq = stratum_moments(design, positions, y)
    graded = counts.sum(axis=1)[:, None]
    ybar = sums.sum(axis=1)[:, None] / np.maximum(graded, 1.0)
    rng = np.random.default_rng(seed)
    centre, strength, weight = _strata_prior(design, counts, sums, expected, rng)
    a = strength * centre + sums[:, None, :]
    b = strength * (1 - centre) + (counts - sums)[:, None, :]
    means = rng.beta(a, b)
    spread = a * b / ((a + b) ** 2 * (a + b + 1))  # the variance the grades will show: E[m (1 - m)] + Var(m)
    rho = np.broadcast_to(_variance_share(counts, sums, sumsq)[:, None, None], (reps, DRAWS, 1))
    zero_one = rho == 1.0  # grades all 0 or 1 (so far): their variance is a function of their means
    excess = np.full((reps, 1, 1), np.nan)  # kappa - 1 of a finer scale's grades; NaN: the Bernoulli formula
    binary = levels is not None and set(levels) <= set(BINARY_LEVELS)
    bernoulli = means * (1 - means) + spread
    least = lattice_floor(means, levels)
    if not binary:  # before a scale finer than 0/1 shows its spread, rho is unknown: drawn (SHARE_PRIOR_RANGE)
        share_rng = np.random.default_rng([seed, 1])
        lowest = np.clip((least @ design.weights) / (bernoulli @ design.weights), *SHARE_PRIOR_RANGE)[..., None]
        drawn = lowest ** share_rng.uniform(0.0, 1.0, (reps, DRAWS, 1))  # log-uniform over [lowest, 1]
        excess = _excess_kurtosis(design, positions, y, counts, sums)[:, None, None]
        # the grades' share (or the draw's where they show none): the floor's
        share = np.where(_shows_share(counts, sums)[:, None, None], rho, drawn)
        zero_one = share == 1.0
        rho = np.where(np.isfinite(excess), _held_share(rho, ybar, means @ design.weights), share)
    z = look_plan().constants[-1] if regime == LOOKS else stats.norm.ppf(0.975)
    width = ANYTIME_WIDTH_RATIO if width_ratio is None else np.asarray(width_ratio, dtype=float).reshape(-1, 1)
    half = target * (width if regime == ANYTIME else 1.0)
    stop = functools.partial(
        _stop_grades, design, rho=rho, zero_one=zero_one, levels=levels, half=half, z=z, given=counts[:, None, :]
    )
    n, sds = stop(means, spread)
    known = _known(design, sds, counts, n) * zero_one  # 0/1 grades: the stop reads them, and those to come
    observed = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0)[:, None, :]
    read = known * observed + (1 - known) * means
    n, read_sds = stop(read, spread * (1 - known) ** 2)
    spread_noise = _spread_noise(design, read, read_sds, n, rho)
    shown = _shown(counts).astype(float)[:, None]  # k: the grades rho is read from
    kurtosis_noise = np.sqrt(
        np.where(np.isfinite(excess[..., 0]), excess[..., 0], 0.0)
        * np.maximum(n - shown, 0.0)
        / (n * np.maximum(shown, 1.0))
    )
    noise = np.minimum(np.where(np.isfinite(excess[..., 0]), kurtosis_noise, spread_noise), 1.0)
    centre = np.where(np.isfinite(excess[..., 0]), noise**2 / 2, 0.0)  # the spread's posterior median, not s^2
    apart = _strata_read_apart(design, read, read_sds, n)  # at the stop n(S) says
    pooled = binary & ~apart
    n = np.clip(n * np.exp(centre + rng.normal(0.0, 1.0, n.shape) * noise), 1, design.N)
    if binary:  # 0/1 grades read as one sample: the stop is the first passage of their count (`_passage`)
        passage = _passage(design.N, means @ design.weights, graded, sums.sum(axis=1)[:, None], half, z, rng)
        n = np.where(pooled, passage, n)
    if not binary:  # the stop reads max(V_hat, the share floor): it comes once both are small enough
        future = rng.normal(0.0, 1.0, n.shape)  # where the mean of the grades to come falls (`_share_floor_grades`)
        n = np.maximum(n, _share_floor_grades(design, means, sds, n, share[..., 0], graded, ybar, half, z, future))
    # the grades given have not stopped it (once the rule says done, the stop is shown, not forecast): the next
    # grade at the soonest; a range of the grades given alone missed every stop it was shown for
    soonest = np.minimum(graded + (graded > 0), design.N)
    n = np.maximum(n, np.maximum(soonest, np.minimum(design.floor, design.sizes).sum()))
    truth = means @ design.weights
    s2 = sds**2 @ design.weights + ((means - truth[..., None]) ** 2) @ design.weights
    ranged = _weighted_quantiles(n, weight, [RANGE[0], 0.5, RANGE[1]])

    def paired(uniform: np.ndarray) -> np.ndarray:  # uniform's grades at the median, by the ratio draw by draw
        ratio = _weighted_quantiles(n / np.maximum(uniform, 1.0), weight, [0.5])[:, 0]
        return ranged[:, 1] / np.maximum(ratio, 1e-9)

    fixed = uniform_grades(s2, truth, design.N, target, FIXED)
    # where the stop reads the strata as one sample, it is uniform's own: the same grades to stop (a design of one
    # stratum, plain uniform sampling, showed a saving of 11% against itself when uniform's were computed apart)
    same = np.where(apart, uniform_grades(s2, truth, design.N, target, regime, width if regime == ANYTIME else None), n)
    return np.column_stack([ranged, paired(fixed), paired(same)])


def _stop_grades(
    design: Design,
    means: np.ndarray,
    spread: np.ndarray,
    *,
    rho: np.ndarray,
    zero_one: np.ndarray,
    levels: tuple[float, ...] | None,
    half: float | np.ndarray,
    z: float,
    given: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """n(S) (module docstring) at stratum means ``means`` (..., H), and the S_h: S_h^2 = rho (m_h (1 - m_h) +
    ``spread``), at least `lattice_floor`; for 0/1 grades (``zero_one``) with the floor of a sample whose grades
    all agree (core.stats.intervals.all_equal_floor) where the stop's n grades may all agree: at rare means
    the first grades may see no success, and the floor, not m (1 - m), sets the width. Until the strata
    differ the variance pools them (core.stats.collapse), so the floor is the whole sample's. Where the draw's
    strata are read apart at its stop (`_strata_read_apart`), the ``given`` grades (..., H) stay in their
    strata and the grades to come are allocated around them (`least_grades`); read as one, the queue allocates
    proportionally and the variance pools the strata, so where the grades sit costs nothing."""
    sds = np.sqrt(np.maximum(rho * (means * (1 - means) + spread), lattice_floor(means, levels)))
    pool = means @ design.weights
    apart = _strata_read_apart(design, means, sds, neyman_grades(design.weights, sds, design.N, half, z, pool))
    given = np.where(apart[..., None], given, 0.0)

    def needed(per: np.ndarray) -> np.ndarray:  # n(S) with the floor that ``per`` grades give
        per = per[..., None]
        equal = ((1 - pool[..., None]) ** per + pool[..., None] ** per) * zero_one
        centre = 0.5 / (per + 1)
        floored = np.sqrt(np.maximum(sds**2, (1 - equal) * sds**2 + equal * centre * (1 - centre)))
        return neyman_grades(design.weights, floored, design.N, half, z, pool, given)

    return first_stop(needed, neyman_grades(design.weights, sds, design.N, half, z, pool, given), design.N), sds


def first_stop(needed: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: int) -> np.ndarray:
    """The least n in [low, high] with needed(n) <= n, elementwise: the first n at which the grades the stop
    needs, read with a floor that n grades give, are in hand (needed(low) itself where it is at most low).

    ``needed`` falls as n grows (a floor eases with more grades), so the iteration n <- needed(n) swings about
    that n rather than settle on it: a skewed pool's floor read at 20 grades asked for 47, read at 47 asked
    for 13, and three rounds said 47 where the stop came at 28. Bisection on the integers finds it between
    low and needed(low), which allows the stop where needed falls (else ``high``: n(S) is at most the pool)."""
    low = np.maximum(np.floor(np.asarray(low, dtype=float)), 1.0)
    at_low = needed(low)
    done = at_low <= low
    hi = np.where(done, low, at_low)  # needed(needed(low)) <= needed(low) where needed falls
    hi = np.where(needed(hi) <= hi, hi, float(high))
    lo = low
    while np.any(~done & (hi - lo > 1)):
        mid = np.floor((lo + hi) / 2)
        ok = needed(mid) <= mid
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    return np.where(done, at_low, hi)


def _share_floor_grades(
    design: Design,
    means: np.ndarray,
    sds: np.ndarray,
    n: np.ndarray,
    rho: np.ndarray,
    graded: np.ndarray,
    ybar: np.ndarray,
    half: float | np.ndarray,
    z: float,
    future: np.ndarray,
) -> np.ndarray:
    """(R, DRAWS) the least n at which the floor of a finer scale's variance alone lets the stop come. The stop
    reads max(V_hat, floor) (core.stats.intervals.bounded_variance), and both fall with n, so it comes at the
    later of the two stops, and the floor's does not carry the spread's noise. The floor is
    core.stats.intervals.share_variance while the strata are read as one (`_strata_read_apart` at the draw's
    n; once they differ, no bound here): ``rho`` (the share the grades show, or the draw's before they show
    it) times the Bernoulli variance at the whole sample's Jeffreys-smoothed mean (n l + 1/2) / (n + 1), l the
    mean the stop will read: the ``graded`` grades given (mean ``ybar``) and, for the n - k to come, the
    draw's pool mean m plus their mean's sampling noise, ``future`` sqrt(rho m (1 - m) / (n - k)) (``future``
    a standard normal per draw). At a rare mean the floor, not the spread, sets the stop: without it the
    projection after 20 grades of a skewed mean of 0.02 said the stop was now (20 to 20) while the rule waited
    for a few more, and held 0.11 of those stops (0.29-0.34 with it, the range centred on them); with the
    mean to come at the pool's own, the stop the floor allows was a point (22 to 22) where a few more grades
    of a slightly higher mean let it come sooner or later (0.48 of those stops; 0.59 with the noise, 300
    replications). The stop is the least n whose floor allows it (`first_stop`)."""
    apart = _strata_read_apart(design, means, sds, n)
    pool = means @ design.weights

    def needed(per: np.ndarray) -> np.ndarray:  # the floor's stop at the smoothed mean ``per`` grades give
        per = np.maximum(per, graded)
        rest = per - graded
        drawn = np.clip(pool + future * np.sqrt(rho * pool * (1 - pool) / np.maximum(rest, 1.0)), 0.0, 1.0)
        level = (graded * ybar + rest * drawn) / per  # the grades given, then the draw's mean
        smooth = jeffreys_mean(per, per * level)
        sd = np.sqrt(rho * smooth * (1 - smooth))[..., None] * np.ones(design.H)
        return neyman_grades(design.weights, sd, design.N, half, z, level)

    return np.where(apart, 1.0, first_stop(needed, np.broadcast_to(graded, n.shape), design.N))


PASSAGE_GRID = 64
"""Grade counts, evenly spaced on the log scale from 1 to N, at which `_passage` follows a sample's count."""

PASSAGE_ROWS = 50
"""Replications `_passage` follows at once (its arrays are rows x DRAWS x PASSAGE_GRID)."""


def _passage(
    size: int,
    mean: np.ndarray,
    graded: np.ndarray,
    positives: np.ndarray,
    half: float | np.ndarray,
    z: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """(R, DRAWS) the stop of 0/1 grades read as one sample (core.stats.collapse), given the ``positives`` among
    the ``graded`` grades so far and the draw's mean m (``mean``). Such a sample's stop reads the mean its
    grades show then, x_n / n, so it comes at the first n with n >= U(x_n / n), U(p) the grades a sample of
    mean p needs: its interval reads the effective size (n - 1) / (1 - n / N) (the spread pooled over the
    strata, core.stats.collapse, and the finite-population correction), so U(p) = (n* + 1) / (1 + n* / N),
    n* = `exact_size`; where every grade so far is 0 it reads n* = n (core.stats.intervals), so U(0) = n*.
    x_n is the positives so far plus Binomial(n - k, m): a first passage, followed at PASSAGE_GRID counts
    and read at U itself between two of them (at least the next grade).

    At a rare mean U(x / n) steps with each success (for +-0.05, 36 grades at none, about 60 at one), so the
    stop is set by how soon the first few successes come. Read instead as n(S) at the draw's mean times the
    log-normal noise of a variance estimate (`_spread_noise`, a first-order approximation for many successes),
    the projection after 20 grades of a mean of 0.02 held 0.96-1.00 of the stops with a high over its low of
    4.9 to 6.6 at 30% of the stop; as this passage, 0.93-0.96 and 1.8 to 2.4 (benchmarks/stopping.md)."""
    level = float(2 * stats.norm.cdf(z) - 1)
    half = np.broadcast_to(np.asarray(half, dtype=float).reshape(-1, 1, 1), (mean.shape[0], 1, 1))
    grid = np.unique(np.round(np.geomspace(1, size, PASSAGE_GRID)))

    out = np.empty(mean.shape)
    for start in range(0, mean.shape[0], PASSAGE_ROWS):
        rows = slice(start, start + PASSAGE_ROWS)
        k, m = graded[rows][..., None], mean[rows][..., None]
        ahead = np.maximum(grid - k, 0.0)  # (r, 1, G) grades to come by each count
        steps = np.diff(ahead, prepend=0.0, axis=-1).astype(np.int64)
        count = positives[rows][..., None] + np.cumsum(rng.binomial(steps, m), axis=-1)
        star = exact_size(np.clip(count / grid, *EXACT_MEANS), np.broadcast_to(half[rows], count.shape), level)
        inside = (count > 0) & (count < grid)  # else every grade is 0 (or 1): the interval reads n* = n
        need = np.where(inside, (star + 1) / (1 + star / size), star)  # U at the mean shown at each count
        crossed = (grid >= need) & (grid > k)
        i = np.where(crossed.any(axis=-1), crossed.argmax(axis=-1), grid.size - 1)
        previous = np.where(i > 0, grid[np.maximum(i - 1, 0)], 0.0)
        at_need = np.ceil(np.take_along_axis(need, i[..., None], axis=-1)[..., 0])
        out[rows] = np.clip(at_need, np.maximum(previous, k[..., 0] + 1), grid[i])
    return out


def _strata_read_apart(design: Design, means: np.ndarray, sds: np.ndarray, n: np.ndarray) -> np.ndarray:
    """(...) bool: whether the strata's grades will differ after n grades, as core.stats.collapse reads them: the
    expected F statistic of equal stratum means, 1 + n sum_h W_h (m_h - m)^2 / ((H - 1) sum_h W_h S_h^2), above
    its critical value at HETEROGENEITY_LEVEL."""
    groups = design.H
    if groups < 2:
        return np.zeros(n.shape, dtype=bool)
    pool = means @ design.weights
    between = ((means - pool[..., None]) ** 2) @ design.weights
    within = np.maximum((sds**2) @ design.weights, 1e-12)
    statistic = 1 + n * between / ((groups - 1) * within)
    return statistic > special.fdtri(groups - 1, np.maximum(n - groups, 1.0), 1 - HETEROGENEITY_LEVEL)


def _known(design: Design, sds: np.ndarray, counts: np.ndarray, n: np.ndarray) -> np.ndarray:
    """(R, DRAWS, H) k_h / n_h: the share of each stratum's grades at a stop after n grades that are given
    already, n_h its Neyman share of n, at least the k_h given."""
    given = counts[:, None, :]
    return np.where(given > 0, given / np.maximum(n[..., None] * _neyman_shares(design, sds), given), 0.0)


def _spread_noise(design: Design, means: np.ndarray, sds: np.ndarray, n: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The relative standard deviation of the variance V = sum_h t_h, t_h = W_h^2 S_h^2 / n_h, the stop reads
    after n grades, n_h the stratum's Neyman share of n: sqrt(sum_h t_h^2 r_h) / V, r_h the relative variance
    of s_h^2 from n_h Bernoulli grades of mean m_h, (1 - 2 m_h)^2 / (n_h m_h (1 - m_h)) (Cramer 1946, 27.7.1
    with the Bernoulli kurtosis), at most 1 (a stratum of few expected successes is read at its floor, not
    at this first-order noise), times rho for a finer scale. Per stratum: a stratum of a rare mean reads its
    spread from few successes, which the pool's mean hides."""
    per = np.maximum(n[..., None] * _neyman_shares(design, sds), 1.0)
    terms = design.weights**2 * sds**2 / per
    relative = np.minimum((1 - 2 * means) ** 2 / (per * np.maximum(means * (1 - means), 1e-9)), 1.0) * rho
    return np.sqrt(np.sum(terms**2 * relative, axis=-1)) / np.maximum(terms.sum(axis=-1), 1e-300)


def _neyman_shares(design: Design, sds: np.ndarray) -> np.ndarray:
    """n_h / n under Neyman allocation, W_h S_h / sum_h W_h S_h, (..., H)."""
    return design.weights * sds / np.maximum(np.sum(design.weights * sds, axis=-1, keepdims=True), 1e-12)


def _weighted_quantiles(values: np.ndarray, weight: np.ndarray, q) -> np.ndarray:
    """(R, len(q)) quantiles of each row of ``values`` (R, D) under the row's ``weight`` (summing to 1)."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cum = np.cumsum(np.take_along_axis(weight, order, axis=1), axis=1)
    idx = np.stack([np.argmax(cum >= x - 1e-12, axis=1) for x in q], axis=1)
    return np.take_along_axis(v, idx, axis=1)


def _strata_prior(
    design: Design, counts: np.ndarray, sums: np.ndarray, expected: float | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draws of the strata's prior (module docstring): centres c_h (R, DRAWS, H), strength k (R, DRAWS, 1),
    and each draw's weight (R, DRAWS), summing to 1 over a replication's draws.

    The level l and its shift delta as the module docstring says; the shape, b and k, drawn from their priors
    and weighted by the likelihood of the grades' split over the strata: the beta-binomial's,
    prod_h B(k c'_h + s_h, k (1 - c'_h) + n_h - s_h) / B(k c'_h, k (1 - c'_h)), at the centres c'_h the draw's
    shape gives at the level l itself (so the level, already read from the grades, is not read again)."""
    logits, pool_logit, sigma = _prior_logits(design, expected)
    reps = counts.shape[0]
    prior_grades = POOL_PRIOR_GRADES if expected is None else EXPECTED_PRIOR_GRADES
    graded, total = counts.sum(axis=1), sums.sum(axis=1)
    level = special.logit((prior_grades * special.expit(pool_logit) + total + 0.5) / (prior_grades + graded + 1))
    narrowing = np.sqrt(prior_grades / (prior_grades + graded))[:, None, None]
    shift = rng.normal(0.0, sigma, (reps, DRAWS, 1)) * narrowing
    slope = rng.uniform(-1.0, 1.0, (reps, DRAWS, 1))
    strength = np.exp(rng.uniform(*np.log(STRENGTH_RANGE), (reps, DRAWS, 1)))
    shape = slope * (logits - design.weights @ logits)
    at_level = _at_pool_mean(design.weights, shape, special.expit(level)[:, None, None])
    a0, b0 = strength * at_level, strength * (1 - at_level)
    likelihood = np.sum(
        special.betaln(a0 + sums[:, None, :], b0 + (counts - sums)[:, None, :]) - special.betaln(a0, b0), axis=-1
    )
    weight = np.exp(likelihood - likelihood.max(axis=1, keepdims=True))
    centres = _at_pool_mean(design.weights, shape, special.expit(level[:, None, None] + shift))
    return centres, strength, weight / weight.sum(axis=1, keepdims=True)


def lattice_floor(means: np.ndarray, levels: tuple[float, ...] | None) -> np.ndarray:
    """The least variance of a grade with mean m on a scale of the grade values ``levels``, elementwise:
    (m - a)(b - m), a the largest value at most m and b the smallest at least m. Var y = E (y - a)(y - b) +
    (m - a)(b - m), and (y - a)(y - b) >= 0 for every y on the scale, since none lies strictly between a and
    b; equality for the two-point distribution on a and b. 0 where ``levels`` is None (any value in [0, 1])."""
    means = np.asarray(means, dtype=float)
    if levels is None:
        return np.zeros_like(means)
    values = np.unique(np.asarray(levels, dtype=float))
    m = np.clip(means, values[0], values[-1])
    above = values[np.clip(np.searchsorted(values, m, side="left"), 0, values.size - 1)]
    below = values[np.clip(np.searchsorted(values, m, side="right") - 1, 0, values.size - 1)]
    return np.maximum((m - below) * (above - m), 0.0)


def _excess_kurtosis(
    design: Design, positions: np.ndarray, grades: np.ndarray, counts: np.ndarray, sums: np.ndarray
) -> np.ndarray:
    """(R,) kappa - 1 of the grades about their stratum means, kappa = mu4 / sigma^4 read from the graded items
    of strata with 2 grades or more; NaN where fewer than MIN_KURTOSIS_GRADES show a spread, or where every grade
    is 0 or 1. The relative variance of a variance estimated from n grades is (kappa - 1) / n (the variance of
    s^2, Cramer 1946, 27.7.1, to first order), which for 0/1 grades of mean m is (1 - 2 m)^2 / (m (1 - m)): the
    Bernoulli formula the stop's noise uses for them.

    Deviations about a mean read from the same few grades understate the fourth moment: in a stratum of n_h
    grades E sum (y - ybar_h)^4 = a(n_h) mu4 + b(n_h) sigma^4, a(n) = (n - 1)(n^2 - 3 n + 3) / n^2, b(n) =
    3 (n - 1)(2 n - 3) / n^2 (the expectation of a sample's fourth central moment, Cramer 1946, 27.4), so at
    4 grades a stratum the plain ratio reads kappa = 1.7 (a uniform 5-point scale) as 1.26 and the stop's noise
    at a third of its size. With sigma^2 the pooled within-stratum variance s_w^2, mu4 is solved from the sum
    over the strata (a common kappa: method of moments)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    strata = design.stratum[positions]
    centred = grades - np.take_along_axis(means, strata, axis=1)
    used = np.take_along_axis(counts > 1, strata, axis=1)
    m2 = np.sum(np.where(used, centred**2, 0.0), axis=1)
    m4 = np.sum(np.where(used, centred**4, 0.0), axis=1)
    n_h = np.where(counts > 1, counts, 0.0)
    safe = np.maximum(n_h, 1.0)
    a = np.sum(np.where(counts > 1, (n_h - 1) * (n_h**2 - 3 * n_h + 3) / safe**2, 0.0), axis=1)
    b = np.sum(np.where(counts > 1, 3 * (n_h - 1) * (2 * n_h - 3) / safe**2, 0.0), axis=1)
    graded = _shown(counts)
    df = graded - (counts > 1).sum(axis=1)  # each stratum's mean is read from its own grades
    with np.errstate(invalid="ignore", divide="ignore"):
        sigma4 = (m2 / df) ** 2
        kappa = (m4 - b * sigma4) / (a * sigma4)
    zero_one = np.all((grades == 0.0) | (grades == 1.0), axis=1)  # the Bernoulli formula, at each draw's mean
    read = (graded >= MIN_KURTOSIS_GRADES) & (m2 > 0) & ~zero_one
    return np.where(read, np.maximum(kappa - 1, 0.0), np.nan)


def _held_share(rho: np.ndarray, ybar: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """(R, DRAWS, 1) rho for the draws of a finer scale whose grades show their spread (the kurtosis is read):
    the share the grades show, rescaled so that each draw's pooled variance at its own pool mean m (``pool``,
    (R, DRAWS)) is the one the grades show at their mean ``ybar`` (R, 1): rho' m (1 - m) = rho ybar (1 - ybar).
    The spread is read from the grades, and the kurtosis term carries its uncertainty; left to follow the drawn
    means, a draw of a lower mean drew a lower variance too, and the level's uncertainty counted twice (Likert
    grades of mean 0.1: the projection after 20 grades held 0.91-0.98 of the stops). At most 1."""
    ratio = ybar * (1 - ybar) / np.maximum(pool * (1 - pool), 1e-12)
    return np.clip(rho * ratio[..., None], 0.0, 1.0)


def _shows_share(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """(R,) whether some stratum has 2 grades of a mean strictly between 0 and 1, so that `_variance_share`
    reads rho from the grades. Grades that all sit at one end of the scale show none of its spread (the share
    is 0 / 0): `_variance_share` says 1 for them, and read so, Likert grades of a mean of 0.02 whose first 20
    were all 0 were forecast as correct/incorrect ones, 56 to 379 grades where the stops came at 28 to 42."""
    inside = (counts > 1) & (sums > 0) & (sums < counts)
    return inside.any(axis=1)


def _shown(counts: np.ndarray) -> np.ndarray:
    """(R,) the grades of the strata with 2 grades or more: those a spread is read from."""
    return np.where(counts > 1, counts, 0).sum(axis=1)


def _variance_share(counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray) -> np.ndarray:
    """rho: the pooled within-stratum variance of the grades over that of Bernoulli grades of the same means,
    from strata with 2 grades or more, with SHARE_PRIOR_GRADES pseudo-grades at 1 (Bernoulli's, the most a
    grade in [0, 1] can vary): a skewed grade's first few show too little of its spread. 1 for 0/1 grades."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / counts
        within = np.where(counts > 1, sumsq - counts * mean**2, 0.0).sum(axis=1)
        bernoulli = np.where(counts > 1, counts * mean * (1 - mean), 0.0).sum(axis=1)
        graded = _shown(counts)
        share = np.clip(within / np.where(bernoulli > 0, bernoulli, 1), 0.05, 1.0)
    shrunk = (graded * share + SHARE_PRIOR_GRADES) / (graded + SHARE_PRIOR_GRADES)
    return np.where(bernoulli > 0, np.where(share >= 1.0 - 1e-9, 1.0, shrunk), 1.0)


def forecast(
    design: Design,
    positions,
    grades,
    target: float,
    regime: str,
    *,
    n0: int | None = None,
    expected: float | None = None,
    width_ratio: float | None = None,
    levels: tuple[float, ...] | None = BINARY_LEVELS,
) -> Forecast:
    """The forecast for one project's grades so far (in grading order; none before grading): `forecast_batch`."""
    positions = np.asarray(list(positions), dtype=np.int64)
    grades = np.asarray(list(grades), dtype=float)
    low, mid, high, uniform, same = forecast_batch(
        design,
        positions[None],
        grades[None],
        target,
        regime,
        n0=n0,
        expected=expected,
        width_ratio=width_ratio,
        levels=levels,
    )[0]
    return Forecast(
        int(round(mid)),
        int(round(low)),
        int(round(high)),
        regime,
        int(positions.size),
        int(round(uniform)),
        int(round(same)),
    )


def tuned_n0(
    design: Design,
    target: float,
    regime: str,
    *,
    planned: int | None = None,
    expected: float | None = None,
    levels: tuple[float, ...] | None = BINARY_LEVELS,
) -> int:
    """n0, the grades the anytime interval's bets are tuned for (core.stats.confseq: its half-width is least
    near n0). ``planned``, the manager's planned budget, where set; a budget fixed in advance (``fixed``) is
    the planned budget or its default (core.stats.design.planned_budget). Else the median of the forecast
    made before any grade under ``regime`` (`forecast` with no grades: the setup headline's), so that the
    interval is tuned where grading is expected to stop. It reads no grade, so it is fixed before the first,
    as the sequence's validity asks. The default of 10% of the pool was 132 grades on gsm8k where the anytime
    rule stopped at 1,141 for +-0.03; tuned at the forecast, 672 (benchmarks/anytime_n0.md). Kept per design
    object and settings (`_setup_median`): every reading of a project asks it, the API's once per criterion,
    and the forecast takes 9-35 ms."""
    if planned or check_regime(regime) == FIXED:
        return planned_budget(planned, design.N)
    return _setup_median(design, float(target), regime, expected, None if levels is None else tuple(levels))


@functools.lru_cache(maxsize=64)
def _setup_median(
    design: Design, target: float, regime: str, expected: float | None, levels: tuple[float, ...] | None
) -> int:
    """The median of `forecast` with no grades; a design is its own key (core.stats.allocation.Design compares
    by identity), and the readers keep theirs (ui/plan.py, core.api.cards)."""
    return forecast(design, [], [], target, regime, expected=expected, levels=levels).n


def uniform_grades(
    s2: np.ndarray | float,
    mean: np.ndarray | float,
    size: int,
    target: float,
    regime: str,
    width_ratio: np.ndarray | float | None = None,
) -> np.ndarray:
    """Grades a plain uniform random sample of a pool of variance S^2 and mean m needs to stop under
    ``regime``: `known_spread_grades` with one stratum (so the same exact-interval and finite-population terms);
    for ``fixed`` the usual fixed-n size z^2 S^2 / h^2 with the correction (core.stats.stopping.uniform_fixed_n)."""
    sds = np.sqrt(np.maximum(np.asarray(s2, dtype=float), 0.0))[..., None]
    return known_spread_grades(np.ones(1), sds, mean, size, target, regime, width_ratio)


def known_spread_grades(
    weights: np.ndarray,
    sds: np.ndarray,
    mean: np.ndarray | float,
    size: int,
    target: float,
    regime: str,
    width_ratio: np.ndarray | float | None = None,
) -> np.ndarray:
    """Grades a design allocated by Neyman for spreads S_h known exactly (``sds``, (..., H)) needs to stop under
    ``regime``, for a pool of mean m: `neyman_grades` read at the interval the regime's stop reads (the last
    planned look's level for ``looks``; for ``anytime`` the fixed-n interval at r times the target, r =
    ``width_ratio`` or ANYTIME_WIDTH_RATIO); for ``fixed`` the usual fixed-n (Wald) size, n = A / (h^2 / z^2 +
    B / N), A = (sum_h W_h S_h)^2, B = sum_h W_h S_h^2 (Cochran 1977, eq. 5.25; 0 where every S_h is 0)."""
    sds = np.asarray(sds, dtype=float)
    mean = np.asarray(mean, dtype=float)
    if check_regime(regime) == FIXED:
        z = stats.norm.ppf(0.975)
        a, b = np.sum(weights * sds, axis=-1) ** 2, np.sum(weights * sds**2, axis=-1)
        return np.minimum(size, np.ceil(a / (target**2 / z**2 + b / size)))
    z = look_plan().constants[-1] if regime == LOOKS else stats.norm.ppf(0.975)
    ratio = ANYTIME_WIDTH_RATIO if width_ratio is None else np.asarray(width_ratio, dtype=float)
    half = target * (ratio if regime == ANYTIME else 1.0)
    return neyman_grades(weights, sds, size, half, z, mean)


def measured_width_ratio(
    fixed_n: tuple[float, float], sequence: tuple[float, float], graded: int, n0: int
) -> float | None:
    """r, the fixed-n over the anytime half-width, read from the two intervals (low, high) after ``graded``
    grades, at most 1, once it tells the ratio at the stop: from half the ``n0`` the sequence is tuned for on
    (the stop comes near n0, and the ratio moves with n / n0), with neither interval cut at 0 or 1. None
    before (ANYTIME_WIDTH_RATIO): read at the first grade, where both intervals are [0, 1], the ratio was 1,
    and the forecast fell from 441 to 194 grades with that one grade (a manager's review)."""
    halves = [(high - low) / 2 for low, high in (fixed_n, sequence)]
    inside = all(0 < low and high < 1 for low, high in (fixed_n, sequence))
    if graded < n0 / 2 or not inside or min(halves) <= 0:
        return None
    return min(1.0, halves[0] / halves[1])


@dataclass(frozen=True)
class StopSaving:
    """Grades saved at the stop against uniform random sampling, as shares 1 - n / m: ``same_regime``, m its
    grades to stop under the project's regime (``uniform_same``); ``fixed_n``, m the usual fixed-n size for
    the target (``uniform_fixed``). The shares are read at m itself, the sizes given in whole grades
    (`whole_grades`). NaN and None until S^2 is known (every stratum with 2 grades). ``fixed_n_low`` and
    ``fixed_n_high``: before the stop, ``fixed_n`` at the forecast's 80% range of grades to stop, its high and
    its low (`expected_saving`); NaN at the stop, which is known."""

    same_regime: float
    fixed_n: float
    uniform_same: int | None
    uniform_fixed: int | None
    fixed_n_low: float = float("nan")
    fixed_n_high: float = float("nan")


def whole_grades(m: float) -> int | None:
    """A number of grades ``m`` rounded to a whole one (None where it is not finite): a grade count reads as one
    wherever it is shown, in words and in JSON alike."""
    return int(round(m)) if np.isfinite(m) else None


def stop_saving(
    n: int,
    s2: float,
    mean: float,
    size: int,
    target: float,
    regime: str,
    width_ratio: float | None = None,
    apart: bool = True,
    planned_same: float | None = None,
) -> StopSaving:
    """`StopSaving` for a project that stops after ``n`` grades, S^2 and the mean estimated from its grades;
    ``width_ratio`` r for ``anytime`` (`measured_width_ratio`; None: ANYTIME_WIDTH_RATIO). ``apart``: whether
    the stop read the strata apart (core.stats.savings.LiveSaving.apart); where it read them as one sample, its
    stop is uniform sampling's own under the same rule, n itself, as the forecast takes it: the formula's size
    at a low mean showed plain uniform sampling saving 10% against itself (a manager's review).

    ``planned_same``: before the stop, n being the forecast's, uniform's same-rule size on the forecast's own draws
    (`Forecast.uniform_same`), used where the grades read the strata as one now: whether the stop will read them
    apart is the draws' to say, and n itself, the stop's size if it will not, showed +0% under the same rule
    beside +28% against fixed-n, uniform's same-rule size (221) below its fixed-n one (306), from 11 grades of a
    pool whose strata came apart later (a manager's review).

    Where every grade is 0 or every grade is 1 (mean 0 or 1), the usual fixed-n interval has no width at all
    and S^2 is the floor's: uniform's fixed-n size is Wilson's at that mean (core.stats.stopping.
    uniform_fixed_n_wilson, 35 grades at +-0.05), which no sample of equal grades reaches sooner (the floor's S^2
    said 20, and a pool of equal grades a saving of -80%: a manager's review)."""
    if not (np.isfinite(s2) and np.isfinite(mean)):
        return StopSaving(float("nan"), float("nan"), None, None)
    fixed = _uniform_fixed(s2, mean, size, target)
    if apart:
        same = float(uniform_grades(s2, mean, size, target, regime, width_ratio))
    else:
        same = float(n if planned_same is None else planned_same)
    return StopSaving(_share(n, same), _share(n, fixed), whole_grades(same), whole_grades(fixed))


def _uniform_fixed(s2: float, mean: float, size: int, target: float) -> float:
    """Uniform's fixed-n size for `stop_saving`: Wilson's where every grade is equal (mean 0 or 1), else the usual."""
    if mean in (0.0, 1.0):
        return float(uniform_fixed_n_wilson(0.0, mean, size, target))
    return float(uniform_grades(s2, mean, size, target, FIXED))


def _share(n: float, m: float) -> float:
    """1 - n / m, the saving of n grades against uniform's m; NaN where m is 0 (grades of no spread at all need no
    uniform sample to compare)."""
    return 1 - n / m if m > 0 else float("nan")


def expected_saving(
    forecast_: Forecast,
    s2: float,
    mean: float,
    size: int,
    target: float,
    regime: str,
    width_ratio: float | None = None,
    apart: bool = True,
    excess: float = 0.0,
) -> StopSaving:
    """The saving expected at the forecast stop, before the rule says done: `stop_saving` at the forecast's n, with
    uniform's same-rule size the forecast's own where the grades read the strata as one (``planned_same``), and
    the fixed-n share's 80% range. One number read from a dozen grades swung from -92% to +63% over seven runs of
    one pool whose savings had came to +4% to +36% (a manager's review).

    The range has two parts, taken as independent on the log scale: the forecast's 80% range of the stop, n_low
    to n_high about n, and uniform's size m, which is in proportion to S^2 and is read at the stop from all its
    grades, of which the k given now are a part: given those, its relative variance is (kappa - 1)(1 / k - 1 / n)
    (the variance of s^2 to first order, Cramer 1946, 27.7.1; ``excess``, kappa - 1 of the grades:
    `grades_excess_kurtosis`). With sigma_m^2 = log(1 + that) and z = Phi^-1(0.9), the ratio n / m runs from
    n / m exp(-z sqrt(sigma_low^2 + sigma_m^2)) to n / m exp(z sqrt(sigma_high^2 + sigma_m^2)), sigma_low =
    log(n / n_low) / z and sigma_high = log(n_high / n) / z, and the saving is 1 less that; with sigma_m = 0 it is
    the saving at n_high and at n_low. The stop's range alone held the saving shown at the stop in 0.40-0.61 of
    the replications on finer scales (benchmarks/expected_saving.md, before the uniform size's part)."""

    n = forecast_.n
    saving = stop_saving(n, s2, mean, size, target, regime, width_ratio, apart, forecast_.uniform_same or None)
    if not np.isfinite(saving.fixed_n):
        return saving
    fixed = _uniform_fixed(s2, mean, size, target)  # uniform's size does not move with the design's grades
    z = float(stats.norm.ppf(RANGE[1]))
    kappa_less_1 = excess if np.isfinite(excess) and excess > 0 else 0.0
    sigma_m2 = np.log1p(kappa_less_1 * max(1 / max(forecast_.graded, 1) - 1 / max(n, 1), 0.0))
    below = np.log(n / max(min(forecast_.low, n), 1)) / z
    above = np.log(max(forecast_.high, n) / max(n, 1)) / z
    high = n * np.exp(z * np.sqrt(above**2 + sigma_m2))  # the ratio's high end, as grades against uniform's m
    low = n * np.exp(-z * np.sqrt(below**2 + sigma_m2))
    return replace(saving, fixed_n_low=_share(high, fixed), fixed_n_high=_share(low, fixed))


def grades_excess_kurtosis(design: Design, positions, grades) -> float:
    """kappa - 1 of one project's grades (`_excess_kurtosis`), what the relative variance of a variance read from n
    of them is over n; for 0/1 grades, or before MIN_KURTOSIS_GRADES show a spread, the Bernoulli formula
    (1 - 2 m)^2 / (m (1 - m)) at their Jeffreys mean m, as the forecast's stop noise reads them. NaN before any
    grade."""
    positions = np.atleast_2d(np.asarray(list(positions), dtype=np.int64))
    grades = np.atleast_2d(np.asarray(list(grades), dtype=float))
    if grades.size == 0:
        return float("nan")
    counts, sums, _ = stratum_moments(design, positions, grades)
    read = float(_excess_kurtosis(design, positions, grades, counts, sums)[0])
    if np.isfinite(read):
        return read
    m = float(jeffreys_mean(grades.size, grades.sum()))
    return (1 - 2 * m) ** 2 / (m * (1 - m))
