"""The planned saving against uniform sampling as a range, before grading or from a pilot of grades.

The saving a stratified design achieves depends on how far apart the
strata's mean grades are (and so their spreads), which is what the surrogate
cannot promise before any grade: a surrogate's agreement is a ranking, not a
calibrated probability. Model the strata's means as a line in the
surrogate's smoothed prediction p (core.stats.spreads.surrogate_fit):

    m_h(b) = clip(a + b (prior_mean_h - pbar), 0.01, 0.99),

and report `core.stats.allocation.planned_saving` at three slopes b:

- no pilot (fewer than MIN_PILOT grades): b = 0 (the surrogate carries no
  signal: every stratum has the pool's mean, a saving of about 0), b = 1 (the
  smoothed prediction at face value, the old single forecast) and
  b = 1 / shrink (the raw agreement taken as a calibrated probability).
  The range is the honest statement that the surrogate's value is unknown.
- with a pilot of graded items: the fitted slope b_hat and b_hat -+ z se(b_hat),
  z the normal quantile of PLAN_LEVEL, se the ridge-regression standard error
  (with PILOT_PRIOR pseudo-grades only),
  the intercept refitted at each slope; rho (the share of the Bernoulli
  variance the grades use) from the pilot too.

Sources: the design effect of stratification (Kish, Survey Sampling 1965,
section 4.4) as a function of the between-strata variance; the range is a
plug-in at the ends of a confidence interval for the calibration slope, not a
confidence interval for the saving.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.stats.allocation import Design, planned_saving
from core.stats.spreads import pooled_sums, scenario_means, surrogate_fit

MIN_PILOT = 10
"""Grades below which the pilot does not set the range (the fit leans on its prior below that)."""

PILOT_PRIOR = 1.0
"""Pseudo-grades at the surrogate's own scale in the pilot's fit: enough to keep a fit on a handful of
grades finite, few enough that the range is the pilot's (the queue's calibration uses many more, for stability)."""

PLAN_LEVEL = 0.8
"""Level of the slope's interval behind a pilot's range."""


@dataclass(frozen=True)
class SavingForecast:
    """Planned saving (share of labels) at the low, middle and high slope; pilot: the grades it used (0: none)."""

    low: float
    mid: float
    high: float
    pilot: int


def planned_saving_range(design: Design, n: int, positions=(), grades=()) -> SavingForecast:
    """The planned saving of a budget of n grades as a range (module docstring), from a pilot where given."""
    positions = np.asarray(list(positions), dtype=np.int64)
    grades = np.asarray(list(grades), dtype=float)
    pbar = design.proxy.mean()
    if positions.size < MIN_PILOT:
        slopes = np.array([0.0, 1.0, 1.0 / max(design.shrink, 1e-9)])
        means = [scenario_means(design, pbar, b) for b in slopes]
        rho = 1.0
    else:
        sums = pooled_sums(design, positions, grades)
        fit = surrogate_fit(design, *sums, strength=PILOT_PRIOR)
        _, slope, se, rho_fit = (float(np.asarray(v).ravel()[0]) for v in fit)
        z = stats.norm.ppf(0.5 + PLAN_LEVEL / 2)
        slopes = np.maximum([slope - z * se, slope, slope + z * se], 0.0)
        k = PILOT_PRIOR
        n_pilot, sum_d, _, sum_y = sums[0], sums[1], sums[2], sums[3]
        means = [scenario_means(design, (sum_y - b * sum_d + k * pbar) / (n_pilot + k), b) for b in slopes]
        rho = rho_fit
    low, mid, high = sorted(planned_saving(design, n, m, rho) for m in means)
    return SavingForecast(low, mid, high, int(positions.size))
