"""Per-stratum spreads S_h as grades arrive: the surrogate's prior, recalibrated and blended.

Two steps, both pure and vectorised over leading (replication) axes:

1. `calibrated_prior_sd`: the surrogate's predicted spreads, with its scale
   recalibrated on all grades so far (a pooled, two-parameter fit: stable
   after a handful of grades).
2. `adaptive_sd`: each stratum's own sample variance blended with that prior.

The queue allocates by the result (adaptive Neyman, docs/method.md, *Allocation*) and
the estimator stabilises its variance with it (core.stats.estimate).
"""

from __future__ import annotations

import numpy as np

from core.stats.allocation import Design
from core.stats.intervals import all_equal_floor


def pooled_sums(design: Design, positions: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, ...]:
    """(n, sum d, sum d^2, sum y, sum d y, sum y^2) over the graded items, d = proxy - mean(proxy); positions (..., n)."""
    positions = np.asarray(positions, dtype=np.int64)
    y = np.asarray(grades, dtype=float)
    d = design.proxy[positions] - design.proxy.mean()
    n = np.full(positions.shape[:-1], positions.shape[-1], dtype=float)
    return n, d.sum(-1), (d * d).sum(-1), y.sum(-1), (d * y).sum(-1), (y * y).sum(-1)


def adaptive_sd(
    prior_sd: np.ndarray, prior_strength: float, counts: np.ndarray, sums: np.ndarray, sumsq: np.ndarray
) -> np.ndarray:
    """Per-stratum spread re-estimated from grades, blended with the surrogate prior.

    S~_h^2 = (k S0_h^2 + (n_h - 1) s_h^2) / (k + n_h - 1), with k = prior_strength
    pseudo-grades at the prior spread S0_h and s_h^2 the sample variance of the
    n_h grades so far (a conjugate-style shrinkage estimate of a variance, as in
    the scaled-inverse-chi-square posterior mean; Gelman et al., Bayesian Data
    Analysis, 3rd ed., section 3.3). With k = 0 it is the sample standard
    deviation, 0 for a stratum with fewer than two grades. Works on batches
    (leading axes).
    """
    counts = np.asarray(counts, dtype=float)
    dev = np.maximum(sumsq - np.where(counts > 0, sums**2 / np.maximum(counts, 1), 0.0), 0.0)
    df = np.maximum(counts - 1.0, 0.0)
    numerator = prior_strength * np.asarray(prior_sd, dtype=float) ** 2 + dev
    denominator = prior_strength + df
    return np.sqrt(
        np.divide(
            numerator, denominator, out=np.zeros(np.broadcast(numerator, denominator).shape), where=denominator > 0
        )
    )


def surrogate_fit(
    design: Design,
    n: np.ndarray,
    sum_d: np.ndarray,
    sum_dd: np.ndarray,
    sum_y: np.ndarray,
    sum_dy: np.ndarray,
    sum_yy: np.ndarray,
    strength: float | None = None,
) -> tuple[np.ndarray, ...]:
    """(intercept, slope, slope_se, rho), each of shape (..., 1), of the grades on the surrogate.

    Fits y ~ a + b d on the graded items, d_i = p_i - pbar the centred smoothed
    proxy, with K = strength (default design.calibration_strength) pseudo-grades at the surrogate's own
    scale (b = 1, a = pbar), each weighted by the pool variance v of p:
    b = (C_dy + K v) / (C_dd + K v), a = (sum y - b sum d + K pbar) / (n + K),
    with C the centred cross-products of the graded items; slope_se =
    sqrt(sigma^2 / (C_dd + K v)), sigma^2 = (C_yy - b C_dy) / max(n - 2, 1) the
    residual variance (the ridge-regression standard error, inf without
    grades; where every grade is equal, sigma^2 is core.stats.intervals.all_equal_floor's
    variance, not 0). rho = 1 - sum y (1 - y) / (n ybar (1 - ybar)), clipped to
    [0.05, 1]: the pooled share of the Bernoulli bound m (1 - m) the grades use
    (Var y = E y - (E y)^2 - E[y (1 - y)]), 1 for binary grades, less for
    Likert or continuous ones, 1 without grades.
    """
    n = np.asarray(n, dtype=float)[..., None]
    sum_d, sum_dd, sum_y, sum_dy, sum_yy = (
        np.asarray(v, dtype=float)[..., None] for v in (sum_d, sum_dd, sum_y, sum_dy, sum_yy)
    )
    pbar = design.proxy.mean()
    k = design.calibration_strength if strength is None else strength
    kv = k * max(design.proxy.var(), 1e-12)
    safe_n = np.maximum(n, 1.0)
    c_dy = sum_dy - sum_d * sum_y / safe_n
    c_dd = np.maximum(sum_dd - sum_d**2 / safe_n, 0.0)
    c_yy = np.maximum(sum_yy - sum_y**2 / safe_n, 0.0)
    slope = (c_dy + kv) / (c_dd + kv)
    intercept = (sum_y - slope * sum_d + k * pbar) / (n + k)
    residual = np.maximum(
        np.maximum(c_yy - slope * c_dy, 0.0) / np.maximum(n - 2.0, 1.0), all_equal_floor(n, sum_y, sum_yy)
    )
    slope_se = np.where(n > 2, np.sqrt(residual / (c_dd + kv)), np.inf)
    ybar = sum_y / safe_n
    bound = np.maximum(n * ybar * (1 - ybar), 1e-12)
    rho = np.where(n > 0, np.clip(1 - (sum_y - sum_yy) / bound, 0.05, 1.0), 1.0)
    return intercept, slope, slope_se, rho


def scenario_means(design: Design, intercept, slope) -> np.ndarray:
    """Stratum means m_h = clip(a + b (prior_mean_h - pbar), 0.01, 0.99) for a surrogate fit (a, b)."""
    return np.clip(intercept + slope * (design.prior_mean - design.proxy.mean()), 0.01, 0.99)


def calibrated_prior_sd(
    design: Design,
    n: np.ndarray,
    sum_d: np.ndarray,
    sum_dd: np.ndarray,
    sum_y: np.ndarray,
    sum_dy: np.ndarray,
    sum_yy: np.ndarray,
) -> np.ndarray:
    """Surrogate spreads recalibrated by the grades so far, shape (..., H) for sums of shape (...).

    S0_h^2 = rho m_h (1 - m_h) with m_h = `scenario_means` of the `surrogate_fit`
    (m_h = prior_mean_h and rho = 1 without grades). A surrogate whose
    predictions do not track the grades (b -> 0) gets flat spreads, i.e.
    proportional allocation. A design with a `spread_share` uses it for rho (per stratum).
    """
    intercept, slope, _, rho = surrogate_fit(design, n, sum_d, sum_dd, sum_y, sum_dy, sum_yy)
    if design.spread_share is not None:
        rho = design.spread_share
    mean = np.where(np.asarray(n)[..., None] > 0, scenario_means(design, intercept, slope), design.prior_mean)
    return np.sqrt(rho * mean * (1.0 - mean))
