"""The setup page's headline: how many items to grade to reach a target half-width, and what uniform needs.

Uniform random sampling of n of N items estimates the mean with variance
(1 - n/N) S^2 / n; for an interval of half-width h at level 1 - alpha it needs
(Cochran 1977, eq. 4.1-4.2)

    n0 = z^2 S^2 / h^2,   M = n0 / (1 + n0 / N)   (rounded up, at most N),

with S^2 = p (1 - p) the variance of correct/incorrect grades at the pool's
mean p: the current estimate once every stratum has a grade, else the
surrogate's smoothed prediction (``Design.proxy``). Grades on a finer scale
vary less, so M is then an upper figure.

The headline's N is ``core.services.progress.items_to_target``: the projection the
dashboard's "items still needed" and ETA use, with the stopping rule's
interval (``core.services.progress.STOPPING_INTERVAL``; the fixed-n interval for a
budget fixed in advance), from the surrogate's spreads before any grade and the
grades' own after. Both counts are for that one interval: the anytime interval
is wider than the fixed-n one by 1 / r (``core.services.progress.width_ratio``),
so M is uniform's count for the half-width r h, as N is the design's. Its range
is M (1 - s) over the range of the planned saving s
(``core.stats.planning.planned_saving_range`` at that budget), widened to hold N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.services.progress import FIXED_BUDGET_INTERVAL, STOPPING_INTERVAL, items_to_target, width_ratio
from core.stats.allocation import Design
from core.stats.confseq import AnytimeInterval
from core.stats.estimate import estimate
from core.stats.intervals import LEVEL
from core.stats.planning import SavingForecast, planned_saving_range


@dataclass(frozen=True)
class TargetPlan:
    """Items to grade for half-width ``target``: ``items`` (middle), ``low``..``high`` (range), ``uniform`` (M)."""

    target: float
    level: float
    items: int
    low: int
    high: int
    uniform: int
    saving: SavingForecast
    interval: str = STOPPING_INTERVAL

    @property
    def saving_range(self) -> tuple[float, float]:
        """The saving against uniform's M that the range low..high means: 1 - high / M to 1 - low / M (the
        middle count's own saving, 1 - items / M, lies within it)."""
        return 1 - self.high / self.uniform, 1 - self.low / self.uniform


def uniform_items(size: int, p: float, target: float, level: float = LEVEL) -> int:
    """M of the module docstring: uniform sampling's items for half-width ``target`` at mean ``p``."""
    z = stats.norm.ppf(0.5 + level / 2)
    n0 = z**2 * p * (1 - p) / target**2
    return int(min(size, math.ceil(n0 / (1 + n0 / size))))


def plan_for_target(
    design: Design,
    target: float,
    positions=(),
    grades=(),
    level: float = LEVEL,
    anytime: AnytimeInterval | None = None,
    budget_fixed: bool = False,
    method: str = "default",
) -> TargetPlan:
    """The headline's numbers (module docstring), from a pilot of grades where given; ``anytime``, the
    stopping rule's interval now (None before it is known: the fixed-n projection, a lower bound), unused
    with a budget fixed in advance, whose interval is the fixed-n one; ``method``, the project's estimator
    (core.stats.estimate.METHODS), as on the dashboard."""
    anytime = None if budget_fixed else anytime
    positions, grades = list(positions), list(grades)
    current = estimate(design, positions, grades, level=level, method=method) if positions else None
    p = current.value if current is not None and not current.missing else float(design.proxy.mean())
    ratio = width_ratio(design, positions, grades, method, anytime)
    uniform = uniform_items(design.N, float(np.clip(p, 0.01, 0.99)), target * ratio, level)
    items = items_to_target(design, positions, grades, target, method, anytime)
    saving = planned_saving_range(design, items, positions, grades)

    def needed(share: float) -> int:
        return int(min(design.N, max(math.ceil(uniform * (1 - share)), design.H)))

    low, high = min(items, needed(saving.high)), max(items, needed(saving.low))
    interval = FIXED_BUDGET_INTERVAL if budget_fixed else STOPPING_INTERVAL
    return TargetPlan(target, level, items, low, high, uniform, saving, interval)
