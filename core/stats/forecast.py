"""How many grades the project will need before it may stop, with an 80% range: the one forecast.

The setup headline, the dashboard's projection, the Simulate page, the report
and the simulator's stopping mode all call `forecast`.

Grades to stop. Under Neyman allocation a stratified design reaches a
fixed-n half-width h at level 1 - a after (Cochran 1977, eq. 5.25)

    n(S) = (sum_h W_h S_h)^2 / ((h / z)^2 + sum_h W_h S_h^2 / N),

z = the normal quantile of the interval the regime reads at its stop: the
last planned look's (core.stats.looks) for ``looks``, 1.96 at n0 for
``fixed`` (whose stop is n0 itself), and for ``anytime`` the fixed-n
projection at the half-width r h, r = the fixed-n over the anytime
half-width (measured on the grades once the sequence is known, else
ANYTIME_WIDTH_RATIO). S_h = sqrt(rho m_h (1 - m_h)), m_h the stratum's mean
grade and rho the share of the Bernoulli variance the grades use (1 for
correct/incorrect grades; estimated from the grades for finer scales). On a scale
of a few grade values (0, 1/2, 1, say) a stratum's variance is never below
(m_h - a)(b - m_h), a and b the scale's values either side of m_h: the least
a distribution on those values with mean m_h can vary (`lattice_floor`).

The range. The stratum means are unknown, so n(S) is a random variable;
the forecast is its median and 10% and 90% quantiles over DRAWS draws of

    logit c_h = logit(l) + delta + b (logit p_h - mean logit p),  then
    m_h ~ Beta(k c_h + s_h, k (1 - c_h) + n_h - s_h),

where l is the pool's level: the surrogate's (or the manager's) predicted
mean p updated by the grades so far as K pseudo-grades would be,
l = (K p + s + 1/2) / (K + n + 1) (K = POOL_PRIOR_GRADES, or
EXPECTED_PRIOR_GRADES for the manager's score); delta ~ Normal(0, sigma^2
K / (K + n)) how far that level may be off (sigma = SIGMA_SURROGATE or
SIGMA_EXPECTED); b ~ Uniform(0, 1) the unknown calibration slope of the
surrogate's stratum predictions p_h (0: no signal, 1: at face value);
k = PRIOR_GRADES pseudo-grades per stratum and s_h, n_h the stratum's grades
so far. Before any grade the range is the prior's; the grades move its
level at once and its strata as they accumulate. The prior stratum mean p_h is the
surrogate's raw prediction (the design's smoothed proxy unshrunk), shifted
on the logit scale so that the pool's mean is the manager's expected score
where one is given. A draw's stop then varies by the sampling noise of the
variance estimate that triggers it (the Chow-Robbins stop is the first n with
z^2 V_hat(n) <= h^2): for binary grades the relative standard deviation of
m (1 - m) estimated from n grades, |1 - 2m| / sqrt(n m (1 - m)), enters as a
log-normal factor. For a finer scale it is the spread's own noise: the
variance the stop reads after n grades is the one the k grades so far show,
weighted k / n, and that of the n - k still to come, so given the k grades
its relative standard deviation is sqrt((kappa - 1) (n - k) / (n k)), kappa
the grades' kurtosis about their stratum means (`_excess_kurtosis`; (kappa - 1)
/ n is the relative variance of a variance estimated from n grades, which
for 0/1 grades is the Bernoulli formula above).

Before any grade the forecast is only as good as the surrogate's (or the
manager's) idea of the mean, and its range says so: sigma is wide; and a
surrogate that cannot tell strata apart leaves the slope of the strata's
means unknown, which the per-stratum Beta draws carry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from core.stats.allocation import Design, stratum_moments
from core.stats.looks import look_plan
from core.stats.stopping import ANYTIME, FIXED, LOOKS, check_regime

RANGE = (0.1, 0.9)
"""Quantiles of the forecast's range: an 80% range."""

DRAWS = 400
"""Draws of the stratum means per forecast."""

SIGMA_SURROGATE = 0.6
"""sd, on the logit scale, of how far the pool's mean may lie from the surrogate's prediction of it."""

SIGMA_EXPECTED = 0.35
"""sd, on the logit scale, of how far the pool's mean may lie from a score the manager expects."""

POOL_PRIOR_GRADES = 4.0
"""Pseudo-grades behind the surrogate's prediction of the pool's mean: the grades move the forecast's level
to theirs within a few dozen (a surrogate's agreement is a ranking, not a calibrated probability)."""

EXPECTED_PRIOR_GRADES = 20.0
"""Pseudo-grades behind a score the manager expects."""

PRIOR_GRADES = 4.0
"""k: pseudo-grades behind each stratum's prior mean (enough to keep an ungraded stratum finite; few enough
that a stratum's own grades take over within a dozen)."""

SHARE_PRIOR_GRADES = 2.0
"""Pseudo-grades at rho = 1 behind the variance share the grades show (`_variance_share`)."""

FLOOR_ROUNDS = 3
"""Fixed-point rounds for the floor of a sample whose grades all agree (core.stats.intervals.all_equal_floor):
at rare means the first grades may see no success, and the floor, not m (1 - m), sets the width. Until the
strata differ the variance pools them (core.stats.collapse), so the floor is the whole sample's."""

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

    @property
    def spread(self) -> float:
        """high / low: how far apart the range's ends are (1: a point)."""
        return self.high / max(self.low, 1)


def neyman_grades(
    weights: np.ndarray, sds: np.ndarray, size: int, half_width: float, z: float, mean: np.ndarray
) -> np.ndarray:
    """n(S) of the module docstring over leading axes of ``sds`` (..., H), with the exact interval's own
    width: the Clopper-Pearson interval at the effective size n* = m (1 - m) / V is wider than the normal one
    by about 1 / (2 n*) (its continuity correction), so the stop solves z sqrt(A / n) + A / (2 n m (1 - m)) = h,
    A = (sum_h W_h S_h)^2, before the finite-population correction n / (1 + n B / (A N)),
    B = sum_h W_h S_h^2 (Cochran 1977, eq. 5.25). ``mean``: the pool's mean m (...,). At least 1, at most N."""
    a = np.maximum(np.sum(weights * sds, axis=-1) ** 2, 1e-12)  # all spreads 0: one grade, without 0 / 0
    b = np.sum(weights * sds**2, axis=-1)
    spread = np.maximum(mean * (1 - mean), 1e-6)
    quad = a / (2 * spread)
    root = (-z * np.sqrt(a) + np.sqrt(z**2 * a + 4 * quad * half_width)) / (2 * quad)
    n = 1.0 / np.maximum(root, 1e-12) ** 2
    n = n / (1 + n * b / np.maximum(a * size, 1e-300))
    return np.clip(np.ceil(n), 1, size)


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


def _shift_to(weights: np.ndarray, logits: np.ndarray, target: float) -> float:
    """delta with sum_h W_h expit(logit_h + delta) = target (bisection: the sum increases in delta)."""
    low, high = -20.0, 20.0
    for _ in range(60):
        mid = (low + high) / 2
        if weights @ special.expit(logits + mid) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


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
    """(R, 4): low, median and high of grades to stop, and the grades uniform random sampling needs with its
    usual fixed-n interval on the same draws (the median over their ratio, draw by draw), for R replications
    of grades, (R, n) in grading order
    (n = 0: before any grade). ``n0`` the budget of the ``fixed`` regime; ``width_ratio`` r for ``anytime``
    (default ANYTIME_WIDTH_RATIO); ``levels``: the grading scale's grade values (None: any value in [0, 1]);
    for correct/incorrect (BINARY_LEVELS) rho = 1, else rho is drawn over SHARE_PRIOR_RANGE until the grades
    show it (`_variance_share`), and no stratum's variance falls below `lattice_floor`."""
    check_regime(regime)
    positions = np.atleast_2d(np.asarray(positions, dtype=np.int64))
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    reps = positions.shape[0]
    if regime == FIXED:
        budget = float(n0 if n0 is not None else design.N)
        return np.full((reps, 4), budget)
    counts, sums, sumsq = stratum_moments(design, positions, y)
    logits, pool_logit, sigma = _prior_logits(design, expected)
    rng = np.random.default_rng(seed)
    prior_grades = POOL_PRIOR_GRADES if expected is None else EXPECTED_PRIOR_GRADES
    graded, total = counts.sum(axis=1), sums.sum(axis=1)
    level = (prior_grades * special.expit(pool_logit) + total + 0.5) / (prior_grades + graded + 1)
    narrowing = np.sqrt(prior_grades / (prior_grades + graded))[:, None, None]
    shift = rng.normal(0.0, sigma, (reps, DRAWS, 1)) * narrowing
    slope = rng.uniform(0.0, 1.0, (reps, DRAWS, 1))
    offsets = logits - design.weights @ logits
    centre = special.expit(special.logit(level)[:, None, None] + shift + slope * offsets)
    a = PRIOR_GRADES * centre + sums[:, None, :]
    b = PRIOR_GRADES * (1 - centre) + (counts - sums)[:, None, :]
    means = rng.beta(a, b)
    spread = a * b / ((a + b) ** 2 * (a + b + 1))  # the variance the grades will show: E[m (1 - m)] + Var(m)
    rho = np.broadcast_to(_variance_share(counts, sums, sumsq)[:, None, None], (reps, DRAWS, 1))
    excess = np.full((reps, 1, 1), np.nan)  # kappa - 1 of a finer scale's grades; NaN: the Bernoulli formula
    binary = levels is not None and set(levels) <= set(BINARY_LEVELS)
    bernoulli = means * (1 - means) + spread
    least = lattice_floor(means, levels)
    if not binary:  # before a scale finer than 0/1 shows its spread, rho is unknown: drawn (SHARE_PRIOR_RANGE)
        share_rng = np.random.default_rng([seed, 1])
        lowest = np.clip((least @ design.weights) / (bernoulli @ design.weights), *SHARE_PRIOR_RANGE)[..., None]
        drawn = lowest ** share_rng.uniform(0.0, 1.0, (reps, DRAWS, 1))  # log-uniform over [lowest, 1]
        excess = _excess_kurtosis(design, positions, y, counts, sums)[:, None, None]
        rho = np.where(_shows_share(counts)[:, None, None], rho, drawn)
    sds = np.sqrt(np.maximum(rho * bernoulli, least))
    z = look_plan().constants[-1] if regime == LOOKS else stats.norm.ppf(0.975)
    ratio = ANYTIME_WIDTH_RATIO if width_ratio is None else np.asarray(width_ratio, dtype=float).reshape(-1, 1)
    half = target * (ratio if regime == ANYTIME else 1.0)
    pool = means @ design.weights
    n = neyman_grades(design.weights, sds, design.N, half, z, pool)
    for _ in range(FLOOR_ROUNDS):  # the floor of a sample of equal grades, at the grades the stop gives it
        per = np.maximum(n, 1.0)[..., None]
        equal = ((1 - pool[..., None]) ** per + pool[..., None] ** per) * (rho == 1.0)
        centre = 0.5 / (per + 1)
        floored = np.sqrt(np.maximum(sds**2, (1 - equal) * sds**2 + equal * centre * (1 - centre)))
        n = neyman_grades(design.weights, floored, design.N, half, z, pool)
    bernoulli = np.abs(1 - 2 * pool) / np.sqrt(np.maximum(n * pool * (1 - pool), 1e-9)) * np.sqrt(rho[..., 0])
    shown = _shown(counts).astype(float)[:, None]  # k: the grades rho is read from
    read = np.sqrt(
        np.where(np.isfinite(excess[..., 0]), excess[..., 0], 0.0)
        * np.maximum(n - shown, 0.0)
        / (n * np.maximum(shown, 1.0))
    )
    noise = np.minimum(np.where(np.isfinite(excess[..., 0]), read, bernoulli), 1.0)
    n = np.clip(n * np.exp(rng.normal(0.0, 1.0, n.shape) * noise), 1, design.N)
    done = counts.sum(axis=1)[:, None]
    n = np.maximum(n, np.maximum(done, np.minimum(design.floor, design.sizes).sum()))
    between = ((means - pool[..., None]) ** 2) @ design.weights
    uniform = uniform_grades(sds[..., :] ** 2 @ design.weights + between, pool, design.N, target, FIXED)
    ranged = np.quantile(n, [RANGE[0], 0.5, RANGE[1]], axis=1).T
    ratio = np.median(n / np.maximum(uniform, 1.0), axis=1)  # paired draw by draw: the same pool for both
    return np.column_stack([ranged, ranged[:, 1] / np.maximum(ratio, 1e-9)])


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
    """(R,) kappa - 1 of the grades about their stratum means, kappa = m4 / m2^2 from the graded items of
    strata with 2 grades or more (the variance about each stratum's mean on its degrees of freedom); NaN where
    fewer than MIN_KURTOSIS_GRADES show a spread, or where every grade is 0 or 1. The relative
    variance of a variance estimated from n grades is (kappa - 1) / n (the variance of s^2, Cramer 1946,
    27.7.1, to first order), which for 0/1 grades of mean m is (1 - 2 m)^2 / (m (1 - m)): the Bernoulli
    formula the stop's noise uses for them."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    strata = design.stratum[positions]
    centred = grades - np.take_along_axis(means, strata, axis=1)
    used = np.take_along_axis(counts > 1, strata, axis=1)
    m2 = np.sum(np.where(used, centred**2, 0.0), axis=1)
    m4 = np.sum(np.where(used, centred**4, 0.0), axis=1)
    graded = _shown(counts)
    df = graded - (counts > 1).sum(axis=1)  # each stratum's mean is read from its own grades
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (m4 / graded) / (m2 / df) ** 2
    zero_one = np.all((grades == 0.0) | (grades == 1.0), axis=1)  # the Bernoulli formula, at each draw's mean
    read = (graded >= MIN_KURTOSIS_GRADES) & (m2 > 0) & ~zero_one
    return np.where(read, np.maximum(kappa - 1, 0.0), np.nan)


def _shows_share(counts: np.ndarray) -> np.ndarray:
    """(R,) whether some stratum has 2 grades, so that `_variance_share` reads rho from the grades."""
    return _shown(counts) > 0


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
    low, mid, high, uniform = forecast_batch(
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
        int(round(mid)), int(round(low)), int(round(high)), regime, int(positions.size), int(round(uniform))
    )


def uniform_grades(
    s2: np.ndarray | float,
    mean: np.ndarray | float,
    size: int,
    target: float,
    regime: str,
    width_ratio: np.ndarray | float | None = None,
) -> np.ndarray:
    """Grades a plain uniform random sample of a pool of variance S^2 and mean m needs to stop under
    ``regime``: `neyman_grades` with one stratum (so the same exact-interval and finite-population terms); for
    ``fixed`` the usual fixed-n size z^2 S^2 / h^2 with the correction (core.stats.stopping.uniform_fixed_n)."""
    s2 = np.asarray(s2, dtype=float)
    mean = np.asarray(mean, dtype=float)
    if check_regime(regime) == FIXED:
        z = stats.norm.ppf(0.975)
        n0 = z**2 * np.maximum(s2, 0.0) / target**2
        return np.minimum(size, np.ceil(n0 / (1 + n0 / size)))
    z = look_plan().constants[-1] if regime == LOOKS else stats.norm.ppf(0.975)
    ratio = ANYTIME_WIDTH_RATIO if width_ratio is None else np.asarray(width_ratio, dtype=float)
    half = target * (ratio if regime == ANYTIME else 1.0)
    return neyman_grades(np.ones(1), np.sqrt(np.maximum(s2, 0.0))[..., None], size, half, z, mean)


@dataclass(frozen=True)
class StopSaving:
    """Grades saved at the stop against uniform random sampling, as shares 1 - n / m: ``same_regime``, m its
    grades to stop under the project's regime (``uniform_same``); ``fixed_n``, m the usual fixed-n size for
    the target (``uniform_fixed``). NaN until S^2 is known (every stratum with 2 grades)."""

    same_regime: float
    fixed_n: float
    uniform_same: float
    uniform_fixed: float


def stop_saving(n: int, s2: float, mean: float, size: int, target: float, regime: str) -> StopSaving:
    """`StopSaving` for a project that stops after ``n`` grades, S^2 and the mean estimated from its grades."""
    if not (np.isfinite(s2) and np.isfinite(mean)):
        return StopSaving(float("nan"), float("nan"), float("nan"), float("nan"))
    same = float(uniform_grades(s2, mean, size, target, regime))
    fixed = float(uniform_grades(s2, mean, size, target, FIXED))

    def share(m: float) -> float:  # a pool whose grades show no spread at all needs no uniform sample to compare
        return 1 - n / m if m > 0 else float("nan")

    return StopSaving(share(same), share(fixed), same, fixed)
