"""Skipped items per stratum, and a worst-case bound on what they could change.

The estimator treats a skipped item as never drawn (missing at random). If
graders skip mostly wrong (or mostly right) answers, that biases it: with 30%
of wrong items skipped the audit of issue 13 found a bias of +0.058. No
formula removes a bias that depends on the unseen grades, so we bound it
(Manski's worst-case bounds for missing outcomes, Manski 1989, J. Human
Resources 24): in stratum h, with g_h graded items summing to G_h and k_h
skipped ones (drawn, not graded), the stratum mean had the skipped items been
graded lies in [G_h / (g_h + k_h), (G_h + k_h) / (g_h + k_h)] (all skipped
items 0, or all 1), and the pool's estimate in

    [sum_h W_h G_h / (g_h + k_h),  sum_h W_h (G_h + k_h) / (g_h + k_h)]

over the strata that have been drawn at all. It is a bound on the skips'
effect on the point estimate, not a confidence interval: the sampling
error comes on top.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.stats.allocation import Design, stratum_moments


@dataclass(frozen=True)
class SkipBound:
    """Skips per stratum and the estimate with the skipped items all 0 (low) or all 1 (high).

    table: stratum, graded, skipped, skip_share (skipped / drawn), low_mean, high_mean.
    low, high: NaN while a stratum has been neither graded nor skipped.
    """

    table: pd.DataFrame
    skipped: int
    low: float
    high: float


def stratum_bounds(graded: np.ndarray, total: np.ndarray, skips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each stratum's mean with its skipped items all 0 and all 1: G_h / (g_h + k_h) and (G_h + k_h) / (g_h + k_h)
    (module docstring), arrays of shape (..., H); NaN where the stratum was neither graded nor skipped."""
    graded, total, skips = (np.asarray(a, dtype=float) for a in (graded, total, skips))
    drawn = graded + skips
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(drawn > 0, total / drawn, np.nan), np.where(drawn > 0, (total + skips) / drawn, np.nan)


def skip_widening(weights: np.ndarray, value: np.ndarray, graded, total, skips) -> tuple[np.ndarray, np.ndarray]:
    """How far the skipped items could move the estimate ``value`` (...,) down and up: value - sum_h W_h low_h and
    sum_h W_h high_h - value with `stratum_bounds` (at least 0; 0 where nothing is skipped). What the interval
    the stopping rule reads adds on each side (core.stats.stopping.run_looks, core.services.reading)."""
    low, high = stratum_bounds(graded, total, skips)
    any_skip = np.sum(np.asarray(skips, dtype=float), axis=-1) > 0
    down = np.where(any_skip, np.maximum(value - np.nansum(weights * low, axis=-1), 0.0), 0.0)
    up = np.where(any_skip, np.maximum(np.nansum(weights * high, axis=-1) - value, 0.0), 0.0)
    return down, up


def skip_bound(design: Design, positions, grades, skipped) -> SkipBound:
    """The `SkipBound` of graded `positions` with `grades` and the `skipped` positions (not graded)."""
    positions = np.asarray(list(positions), dtype=np.int64)
    grades = np.asarray(list(grades), dtype=float)
    skipped = np.setdiff1d(np.asarray(list(skipped), dtype=np.int64), positions)
    graded, total, _ = stratum_moments(design, positions, grades)
    graded = graded.astype(np.int64)
    skips = np.bincount(design.stratum[skipped], minlength=design.H)
    low_mean, high_mean = stratum_bounds(graded, total, skips)
    drawn = graded + skips
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(drawn > 0, skips / drawn, np.nan)
    table = pd.DataFrame(
        {
            "stratum": np.arange(design.H),
            "graded": graded,
            "skipped": skips,
            "skip_share": share,
            "low_mean": low_mean,
            "high_mean": high_mean,
        }
    )
    return SkipBound(
        table=table,
        skipped=int(skips.sum()),
        low=float(design.weights @ low_mean),
        high=float(design.weights @ high_mean),
    )
