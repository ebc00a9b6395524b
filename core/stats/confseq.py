"""Anytime-valid confidence sequence for the pool's mean grade, built by betting.

Valid at every number of grades at once, under stratified sampling without
replacement and any predictable allocation (the next stratum chosen from past
grades only, as `core.stats.queue.next_item` does): P(exists n: mu not in C_n) <= alpha
(docs/method.md, *The confidence sequence*). It is what a manager who watches the dashboard and stops
when it looks good can rely on; the fixed-n interval of core.stats.estimate is not.

Construction: the stratified intersection betting sequence.

- Per stratum h, without replacement (Waudby-Smith and Ramdas 2024, "Estimating
  means of bounded random variables by betting", JRSS-B, section 6): if the
  stratum's mean is theta_h, the i-th grade x_i drawn from it has conditional
  mean m_i(theta_h) = (N_h theta_h - S_{i-1}) / (N_h - i + 1), S the sum of its
  earlier grades. Two capital processes bet on x_i - m_i:
      K+_h(theta_h) = prod_i (1 - eta+_i + eta+_i x_i / m_i),
      K-_h(theta_h) = prod_i (1 - eta-_i + eta-_i (1 - x_i) / (1 - m_i)),
  i.e. 1 + lambda (x_i - m_i) with the bet lambda = eta / m_i (or
  -eta / (1 - m_i)), eta predictable in [0, TRUNCATION]: the truncation
  lambda <= c / m_i of the reference's betting_cs, here the bet itself. With
  this form each log-capital is a convex function of theta_h (log(a + b/m) is
  convex in m), which makes the search below exact.
- Strata (Spertus and Stark 2022, "Sweeter than SUITE: supermartingale
  stratified union-intersection tests of elections", section 3.2): for a
  candidate mean m the null is the union over stratum-mean vectors theta with
  sum_h W_h theta_h = m. At the true theta the product over strata of the
  per-stratum processes is a test supermartingale whatever the (predictable)
  interleaving of strata, so the wealth of m is
      wealth_n(m) = min over {theta : W.theta = m, theta feasible} of prod_h K_h(theta_h),
  and C_n = {m : wealth_n(m) < 1/alpha}, with alpha split evenly between the
  lower (K+) and upper (K-) sides. Feasible: theta_h in [S_h / N_h,
  (S_h + N_h - n_h) / N_h] (the ungraded items all 0 or all 1); a stratum not
  graded yet ranges over [0, 1], so the sequence stays wide until every
  stratum has grades rather than leaning on a prior.
- The search over theta: sum_h log K_h(theta_h) is separable and convex, so
  its minimum on the hyperplane W.theta = m is found by water-filling: start
  every stratum at its lowest feasible mean and spend the distance to m on the
  segments of smallest slope first. log K_h is kept on a fixed Chebyshev grid
  of GRID values of theta_h (value and derivative, updated in O(GRID) per
  grade) and replaced by the lower envelope of its tangents there, a convex
  piecewise-linear lower bound: the computed wealth never exceeds the true
  one, so the sequence can only be wider than the exact one, never invalid.
  One sort of H GRID slopes per replication and grade gives the whole
  curve m -> log wealth_n(m) and both end points. A stratum graded nearly
  to the end, whose feasible range holds fewer than two grid values, is
  recomputed exactly from its grades at EXACT_POINTS values across that range.
  Cost: benchmarks/estimation.md reports the time per replication and grade.
- Bets tuned for a planned budget n0 (Waudby-Smith and Ramdas 2024, section
  5, the predictable plug-in for a fixed sample size:
  lambda = sqrt(2 log(2/alpha) / (n0 sigma^2))), made stratified: the log
  wealth of a candidate m = mu + delta is, to second order,
  sum_h lambda_h n_h delta_h - ..., linear in the stratum deviations delta_h;
  unless n_h lambda_h is proportional to W_h the search above puts delta where
  the bets are small. So lambda_h,i = Lambda W_h i / n_h(i) (n_h(i) the
  stratum's grades including this one, i the grades in all), whose log wealth
  is Lambda n delta - Lambda^2 n^2 V / 2 with V = sum_h W_h^2 sigma_h^2 / n_h,
  and Lambda = sqrt(2 log(2/alpha) / (n0 (sum_h W_h sigma_h)^2)) minimises the
  half-width at n = n0 under Neyman allocation, V = (sum_h W_h sigma_h)^2 / n0.
  sigma_h: the queue's spreads from the grades before this one
  (`core.stats.spreads`). eta+ = min(c, lambda m^_h), eta- = min(c, lambda (1 - m^_h)),
  m^_h the stratum's running mean with one pseudo-grade at its prior, so the bet
  at m = m^_h is lambda. With one stratum this is the reference's betting CS
  with these bets (tests/test_confseq.py compares them with confseq's betting_cs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import InputError
from core.stats.allocation import Design
from core.stats.estimate import checked_grades
from core.stats.intervals import LEVEL
from core.stats.spreads import adaptive_sd, calibrated_prior_sd

GRID = 65
"""Grid values of each stratum mean at which the log-capital is tracked."""

EXACT_POINTS = 9
"""Values of a stratum mean at which the log-capital is recomputed exactly once its feasible range is thin."""

TRUNCATION = 0.75
"""c: the largest share eta of the wealth put at risk on one grade (Waudby-Smith and Ramdas suggest 1/2 or 3/4)."""

_TOL = 1e-9


def theta_grid(size: int = GRID) -> np.ndarray:
    """Chebyshev points on [0, 1], (1 - cos(pi k / (size - 1))) / 2: dense near pass rates of 0 and 1."""
    return 0.5 * (1.0 - np.cos(np.pi * np.arange(size) / (size - 1)))


@dataclass(frozen=True)
class SequenceBatch:
    """Confidence sequences of R replications.

    steps: (K,) the grade counts k at which the end points were computed;
    low/high: (R, K) C_k there; low_run/high_run: their running intersection
    (valid too, never wider as grades arrive). covered: (R, n) whether the
    true mean was inside C_1, ..., C_k at every k <= n, when the truth was
    given (else None). eta_up, eta_down: (R, n) the bets placed on each grade.
    """

    steps: np.ndarray
    low: np.ndarray
    high: np.ndarray
    eta_up: np.ndarray
    eta_down: np.ndarray
    covered: np.ndarray | None = None

    @property
    def low_run(self) -> np.ndarray:
        return np.maximum.accumulate(self.low, axis=1)

    @property
    def high_run(self) -> np.ndarray:
        return np.minimum.accumulate(self.high, axis=1)

    def at(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Running-intersection end points after k grades, (R,) each (k must be a computed step)."""
        j = int(np.flatnonzero(self.steps == k)[0])
        return self.low_run[:, j], self.high_run[:, j]


def checkpoints(n: int, extra=(), per_decade: int = 12) -> np.ndarray:
    """Grade counts at which a simulation computes the end points: about `per_decade` per factor of 10, plus `extra`."""
    geometric = np.geomspace(1, max(n, 1), num=max(2, int(np.ceil(per_decade * np.log10(max(n, 10))))))
    return np.unique(np.concatenate([np.round(geometric), np.asarray(list(extra), dtype=float), [n]]).astype(int))


def _bets(design: Design, n0: float, alpha: float, step: int, h, counts, sums, sumsq, pooled) -> tuple:
    """Predictable eta+ and eta- for grade number step + 1, shape (R,) (see the module docstring)."""
    rows = np.arange(h.size)
    sds = adaptive_sd(calibrated_prior_sd(design, *pooled), design.prior_strength, counts, sums, sumsq)
    spread = np.maximum(sds @ design.weights, 1e-3)
    scale = np.sqrt(2 * np.log(2 / alpha) / (n0 * spread**2))
    k = counts[rows, h]
    lam = scale * design.weights[h] * (step + 1) / (k + 1)
    mean = np.clip((sums[rows, h] + design.prior_mean[h]) / (k + 1), 0.0, 1.0)
    return np.minimum(TRUNCATION, lam * mean), np.minimum(TRUNCATION, lam * (1 - mean))


def _log_factor(x, m, eta, dm) -> tuple[np.ndarray, np.ndarray]:
    """log(1 - eta + eta x / m), the log of 1 + (eta / m)(x - m), and its derivative in theta (dm = dm/dtheta).

    At m = 0 the factor is 1 - eta when x = 0 (the only grade possible there) and infinite otherwise.
    """
    top = (1 - eta) * m + eta * x
    value = np.divide(top, m, out=np.where(x > 0, np.inf, 1 - eta + 0 * m), where=m > 0)
    inner = np.divide(1 - eta, top, out=np.zeros_like(value), where=top > 0)
    slope = (inner - np.divide(1.0, m, out=np.zeros_like(value), where=m > 0)) * dm
    return np.log(np.maximum(value, 1e-300)), slope


def _log_wealth_curve(
    points: np.ndarray, f: np.ndarray, s: np.ndarray, ok: np.ndarray, lo, hi, weights
) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (m, log wealth) of m -> min over W.theta = m of sum_h envelope_h(theta_h), shape (R, K).

    points: (R, H, G) increasing values of theta_h; f, s: (R, H, G) log-capital
    and slope there; ok: points still feasible (a contiguous, non-empty run per
    stratum); lo, hi: (R, H) feasible range.
    """
    f, s = np.where(ok, f, 0.0), np.where(ok, s, 0.0)
    g0, g1 = points[..., :-1], points[..., 1:]
    both = ok[..., :-1] & ok[..., 1:]
    ds = s[..., :-1] - s[..., 1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = (f[..., 1:] - f[..., :-1] + s[..., :-1] * g0 - s[..., 1:] * g1) / ds
    cross = np.where(both & (ds < 0), np.clip(cross, g0, g1), (g0 + g1) / 2)
    left = np.concatenate([lo[..., None], np.where(both, cross, lo[..., None])], axis=-1)
    right = np.concatenate([np.where(both, cross, hi[..., None]), hi[..., None]], axis=-1)
    left = np.maximum(left, lo[..., None])
    right = np.minimum(right, hi[..., None])
    length = np.where(ok, np.maximum(right - left, 0.0), 0.0)
    first = np.argmax(ok, axis=-1)[..., None]
    at_lo = np.take_along_axis(f, first, -1)[..., 0] + np.take_along_axis(s, first, -1)[..., 0] * (
        lo - np.take_along_axis(points, first, -1)[..., 0]
    )
    base = at_lo.sum(axis=-1)
    slope = np.where(ok, s, 0.0)
    w = weights[:, None]
    length_m = (length * w).reshape(lo.shape[0], -1)
    slope_m = (slope / w).reshape(lo.shape[0], -1)
    order = np.argsort(slope_m, axis=1)
    length_m = np.take_along_axis(length_m, order, 1)
    rise = np.take_along_axis(slope_m, order, 1) * length_m
    m_lo = lo @ weights
    m = np.concatenate([m_lo[:, None], m_lo[:, None] + np.cumsum(length_m, axis=1)], axis=1)
    value = np.concatenate([base[:, None], base[:, None] + np.cumsum(rise, axis=1)], axis=1)
    return m, value


def _crossing(m: np.ndarray, value: np.ndarray, threshold: float, falling: bool) -> np.ndarray:
    """Where a monotone piecewise-linear curve crosses the threshold: the lowest m with value < threshold
    (falling curve, the lower end point) or the highest (rising curve, the upper end point)."""
    above = value >= threshold
    if falling:
        j = np.argmin(above, axis=1)  # first breakpoint below
        none = above.all(axis=1)
    else:
        j = np.argmax(above, axis=1)  # first breakpoint at or above
        none = ~above.any(axis=1)
    rows = np.arange(m.shape[0])
    j0 = np.maximum(j - 1, 0)
    v0, v1, m0, m1 = value[rows, j0], value[rows, j], m[rows, j0], m[rows, j]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(v1 != v0, (threshold - v0) / (v1 - v0), 0.0)
    point = np.where(j == 0, m[:, 0], m0 + np.clip(t, 0, 1) * (m1 - m0))
    return np.where(none, m[:, -1], point)


def _exact_points(design: Design, history: dict, r: np.ndarray, h: np.ndarray, upto: int, theta: np.ndarray):
    """Log-capital of stratum h[i] of replication r[i] and its slope at theta[i] (M, P), summed over its grades
    up to step `upto` from the history (strata, grades, bets, count and sum of the stratum before each grade):
    for a stratum whose feasible range has narrowed between two grid values. Returns f, s of shape (2, M, P)."""
    span = slice(0, upto + 1)
    mine = (history["strata"][r, span] == h[:, None])[..., None]
    size = design.sizes[h].astype(float)[:, None, None]
    k, total = history["count"][r, span][..., None], history["sum"][r, span][..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.clip((size * theta[:, None, :] - total) / (size - k), 0.0, 1.0)
        dm = size / (size - k)
        x = history["grades"][r, span][..., None]
        up, up_slope = _log_factor(x, m, history["bets"][0][r, span][..., None], dm)
        down, down_slope = _log_factor(1 - x, 1 - m, history["bets"][1][r, span][..., None], -dm)
    total_of = lambda v: np.where(mine, v, 0.0).sum(axis=1)  # noqa: E731
    return np.stack([total_of(up), total_of(down)]), np.stack([total_of(up_slope), total_of(down_slope)])


@dataclass
class _Wealth:
    """What sequence_batch carries from grade to grade, for R replications and H strata.

    points: (R, H, G + 1) the grid values of each stratum mean, the last column its true mean (0 without a
    truth); f, s: (2, R, H, G + 1) log K+ and log K- at the points and their slopes; ok: (R, H, G + 1) the
    points still feasible. counts, sums, sumsq: (R, H) each stratum's grades so far; pooled: (6, R) n, sum d,
    sum d^2, sum y, sum d y, sum y^2 (core.stats.spreads.pooled_sums); sizes: (H,) N_h as floats; d: (N,) the
    proxy less its mean.
    history: strata, grades, bets, count and sum of the stratum before each grade (see _exact_points).
    exact_theta, exact_f, exact_s, exact_ok: (R, H, G) the EXACT_POINTS values of a thin stratum and its
    log-capital there (the rest of the row repeats the last one); current: (R, H) whether they are up to date.
    """

    points: np.ndarray
    f: np.ndarray
    s: np.ndarray
    ok: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    sumsq: np.ndarray
    pooled: np.ndarray
    sizes: np.ndarray
    d: np.ndarray
    history: dict
    exact_theta: np.ndarray
    exact_f: np.ndarray
    exact_s: np.ndarray
    exact_ok: np.ndarray
    current: np.ndarray

    @classmethod
    def start(cls, design: Design, positions: np.ndarray, y: np.ndarray, truth, grid_size: int) -> _Wealth:
        """The state before the first grade: every point feasible, every log-capital 0."""
        reps, n = positions.shape
        H = design.H  # noqa: N806
        points = np.broadcast_to(np.concatenate([theta_grid(grid_size), [0.0]]), (reps, H, grid_size + 1)).copy()
        if truth is not None:  # the last column of every stratum: its true mean
            points[..., -1] = np.asarray(truth, dtype=float)
        exact_ok = np.zeros((reps, H, grid_size), dtype=bool)
        exact_ok[..., :EXACT_POINTS] = True
        history = {
            "strata": design.stratum[positions],
            "grades": y,
            "bets": np.empty((2, reps, n)),
            "count": np.empty((reps, n)),
            "sum": np.empty((reps, n)),
        }
        return cls(
            points=points,
            f=np.zeros((2, reps, H, grid_size + 1)),
            s=np.zeros((2, reps, H, grid_size + 1)),
            ok=np.ones((reps, H, grid_size + 1), dtype=bool),
            counts=np.zeros((reps, H)),
            sums=np.zeros((reps, H)),
            sumsq=np.zeros((reps, H)),
            pooled=np.zeros((6, reps)),
            sizes=design.sizes.astype(float),
            d=design.proxy - design.proxy.mean(),
            history=history,
            exact_theta=np.zeros((reps, H, grid_size)),
            exact_f=np.zeros((2, reps, H, grid_size)),
            exact_s=np.zeros((2, reps, H, grid_size)),
            exact_ok=exact_ok,
            current=np.zeros((reps, H), dtype=bool),
        )

    @property
    def grid_size(self) -> int:
        """G, the number of grid values of each stratum mean."""
        return self.exact_theta.shape[-1]

    def feasible(self) -> tuple[np.ndarray, np.ndarray]:
        """(R, H) each stratum mean's feasible range: its ungraded items all 0, or all 1."""
        return self.sums / self.sizes, (self.sums + self.sizes - self.counts) / self.sizes


def _check_arguments(alpha: float, n0: float) -> None:
    """InputError unless 0 < alpha < 1 and n0 >= 1."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    if not n0 >= 1:
        raise InputError(f"the planned budget n0 must be at least 1, got {n0}", fix="give the number of grades planned")


def _add_grade(
    state: _Wealth, design: Design, n0: float, alpha: float, step: int, pos: np.ndarray, x: np.ndarray
) -> None:
    """Bet on grade number step + 1 (positions ``pos``, grades ``x``, (R,) each) and add it to ``state``: its bets
    and stratum before it to the history, its factors to the log-capital at every point, its value to the
    stratum's and pooled sums, and the points it makes infeasible."""
    rows = np.arange(pos.size)
    h = state.history["strata"][:, step]
    eta_up, eta_down = _bets(design, n0, alpha, step, h, state.counts, state.sums, state.sumsq, state.pooled)
    size = state.sizes[h][:, None]
    k, total = state.counts[rows, h][:, None], state.sums[rows, h][:, None]
    state.history["bets"][0, :, step], state.history["bets"][1, :, step] = eta_up, eta_down
    state.history["count"][:, step], state.history["sum"][:, step] = k[:, 0], total[:, 0]
    theta = state.points[rows, h]
    m = np.clip((size * theta - total) / (size - k), 0.0, 1.0)
    dm = size / (size - k)
    xs = x[:, None]
    up, up_slope = _log_factor(xs, m, eta_up[:, None], dm)
    down, down_slope = _log_factor(1 - xs, 1 - m, eta_down[:, None], -dm)
    state.f[0, rows, h] += up
    state.f[1, rows, h] += down
    state.s[0, rows, h] += up_slope
    state.s[1, rows, h] += down_slope
    state.counts[rows, h] += 1
    state.sums[rows, h] += x
    state.sumsq[rows, h] += x * x
    d = state.d[pos]
    state.pooled += (np.ones(pos.size), d, d * d, x, d * x, x * x)
    after = total + xs
    state.ok[rows, h] &= (size * theta >= after - _TOL) & (size * theta <= after + size - k - 1 + _TOL)
    # a mean under which this grade could not have been drawn (m = 0 and x > 0, or m = 1 and x < 1): infinite
    # capital, infeasible even where it lies within _TOL of the feasible range (a grade below _TOL at a
    # stratum's mean 0 kept it, and its infinite wealth rejected every m: an empty interval from then on)
    state.ok[rows, h] &= np.isfinite(up) & np.isfinite(down)
    state.current[rows, h] = False


def _near_truth(state: _Wealth, inside: np.ndarray, threshold: float) -> np.ndarray:
    """Replications still covering the truth whose wealth at the true stratum means (an upper bound of the
    minimum) reaches the threshold on either side: only there can the truth have left the sequence."""
    at_truth = state.f[:, :, :, -1].sum(axis=2)  # (2, R) log wealth at the true stratum means
    return np.flatnonzero(inside & (at_truth >= threshold).any(axis=0))


def _refresh_thin(
    state: _Wealth, design: Design, check: np.ndarray, thin: np.ndarray, step: int, lo: np.ndarray, hi: np.ndarray
) -> None:
    """Recompute exactly, at EXACT_POINTS values across its feasible range, the log-capital of every thin stratum
    (fewer than two feasible grid values) of the replications ``check`` whose exact values are out of date;
    lo, hi: (R, H) the feasible ranges (_Wealth.feasible)."""
    stale = np.argwhere(thin & ~state.current[check])
    if not stale.size:
        return
    r, hh = check[stale[:, 0]], stale[:, 1]
    spread = np.linspace(lo[r, hh], hi[r, hh], EXACT_POINTS, axis=-1)
    state.exact_theta[r, hh, :EXACT_POINTS] = spread
    state.exact_theta[r, hh, EXACT_POINTS:] = spread[:, -1:]
    values, slopes = _exact_points(design, state.history, r, hh, step, spread)
    state.exact_f[:, r, hh, :EXACT_POINTS], state.exact_s[:, r, hh, :EXACT_POINTS] = values, slopes
    state.current[r, hh] = True


def _end_points(state: _Wealth, design: Design, check: np.ndarray, step: int, threshold: float) -> list[np.ndarray]:
    """The lower and upper end points of C_k for the replications ``check``, k = step + 1: the crossings of the
    threshold by the minimum log wealth, on the grid or, for a thin stratum, on its exact values."""
    grid_size = state.grid_size
    grid_ok = state.ok[check, :, :grid_size]
    thin = grid_ok.sum(axis=-1) < 2
    lo, hi = state.feasible()
    _refresh_thin(state, design, check, thin, step, lo, hi)
    use = thin[..., None]
    pts = np.where(use, state.exact_theta[check], state.points[check, :, :grid_size])
    usable = np.where(use, state.exact_ok[check], grid_ok)
    ends = []
    for side in (0, 1):
        values = np.where(use, state.exact_f[side][check], state.f[side][check][..., :grid_size])
        slopes = np.where(use, state.exact_s[side][check], state.s[side][check][..., :grid_size])
        curve = _log_wealth_curve(pts, values, slopes, usable, lo[check], hi[check], design.weights)
        ends.append(_crossing(*curve, threshold, falling=side == 0))
    return ends


def _walk(
    state: _Wealth,
    design: Design,
    n0: float,
    alpha: float,
    positions: np.ndarray,
    y: np.ndarray,
    steps: np.ndarray,
    mu: float | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Every grade of ``positions``, ``y`` (R, n) in turn added to ``state``: the end points (R, K) at the grade
    counts ``steps``, and with the true mean ``mu`` whether it stayed inside at every k <= n (R, n), else None."""
    reps, n = positions.shape
    threshold = np.log(2 / alpha)
    low, high = np.empty((reps, steps.size)), np.empty((reps, steps.size))
    covered = np.ones((reps, n), dtype=bool) if mu is not None else None
    inside = np.ones(reps, dtype=bool)
    j = 0
    for step in range(n):
        _add_grade(state, design, n0, alpha, step, positions[:, step], y[:, step])
        wanted = j < steps.size and steps[j] == step + 1
        check = _near_truth(state, inside, threshold) if mu is not None and not wanted else np.arange(reps)
        if check.size:
            ends = _end_points(state, design, check, step, threshold)
            if mu is not None:
                inside[check] &= (ends[0] <= mu + _TOL) & (mu - _TOL <= ends[1])
            if wanted:
                low[:, j], high[:, j] = ends
        if mu is not None:
            covered[:, step] = inside
        if wanted:
            j += 1
    return low, high, covered


def sequence_batch(
    design: Design,
    positions: np.ndarray,
    grades: np.ndarray,
    n0: float,
    alpha: float = 0.05,
    *,
    steps=None,
    truth: np.ndarray | None = None,
    grid_size: int = GRID,
) -> SequenceBatch:
    """The stratified intersection betting confidence sequence, for R replications at once.

    positions, grades: (R, n) in grading order (any predictable order: the
    queue's, a random order, strata interleaved at random). n0: the planned
    budget the bets are tuned for. steps: grade counts at which to compute the
    end points (default: every k = 1..n). truth: (H,) the true stratum means
    (simulations only): then `covered` tells, at every k, whether the true mean
    stayed inside; it is checked at every k cheaply, by the wealth at the true
    stratum means (an upper bound of the minimum), and exactly where that
    bound reaches the threshold. A stratum whose feasible range holds fewer
    than two grid values (nearly or wholly graded) gets EXACT_POINTS values
    across its range instead, recomputed from its grades when one arrives.
    """
    _check_arguments(alpha, n0)
    positions = np.atleast_2d(np.asarray(positions, dtype=np.int64))
    y = np.atleast_2d(np.asarray(grades, dtype=float))
    n = positions.shape[1]
    steps = np.arange(1, n + 1) if steps is None else np.unique(np.clip(np.asarray(steps, dtype=int), 1, n))
    state = _Wealth.start(design, positions, y, truth, grid_size)
    mu = None if truth is None else float(design.weights @ truth)
    low, high, covered = _walk(state, design, n0, alpha, positions, y, steps, mu)
    return SequenceBatch(steps, low, high, state.history["bets"][0], state.history["bets"][1], covered)


@dataclass(frozen=True)
class AnytimeInterval:
    """The confidence sequence at the current grades, for the live dashboard and the stopping rule.

    low/high: the running intersection after all n grades (valid whenever the
    grader stops, however the stop was decided); path: one row per grade k with
    columns grades, low, high (the running intersection after k grades).
    n0: the planned budget the bets were tuned for; level = 1 - alpha.
    """

    low: float
    high: float
    n: int
    n0: int
    level: float
    path: pd.DataFrame

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def anytime_interval(design: Design, positions, grades, n0: int, level: float = LEVEL) -> AnytimeInterval:
    """The anytime-valid interval after the grades at `positions` (in grading order), tuned for budget n0.

    With no grade it is [0, 1]. The dashboard's stopping rule reads
    `half_width`; stopping when it is small enough keeps the level.
    """
    positions, grades = checked_grades(design, positions, grades)
    n = int(positions.size)
    if n == 0:
        return AnytimeInterval(0.0, 1.0, 0, int(n0), level, pd.DataFrame(columns=["grades", "low", "high"]))
    batch = sequence_batch(design, positions[None], grades[None], n0, alpha=1 - level)
    low, high = batch.low_run[0], batch.high_run[0]
    path = pd.DataFrame({"grades": np.arange(1, n + 1), "low": low, "high": high})
    return AnytimeInterval(float(low[-1]), float(high[-1]), n, int(n0), level, path)
