"""The live view of a project: the estimate now and its path against the number of grades."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from core.stats.allocation import Design
from core.stats.confseq import AnytimeInterval
from core.stats.estimate import Estimate, estimate
from core.stats.intervals import LEVEL

PATH_NOTE = (
    "Line: the estimate. Blue band: its fixed-n interval at each number of grades. Dotted blue lines: the "
    "anytime-valid interval, valid whenever grading stops (drawn unless the budget is fixed in advance; the "
    "default rule reads it between its planned looks, and stops at a look); each grade only narrows it, each one "
    "cut to where it overlaps every earlier one, so an end may stay put for many grades while the estimate moves "
    "(a reviewer's final grade rereads the grades, and may widen it). Grey "
    "band between dashed lines: "
    "the fixed-n interval uniform random sampling would give at the same number, drawn once every stratum has "
    "2 grades."
)
"""How to read `estimate_path`'s chart (dashboard, presenter, report): the two bands are fixed-n intervals, so
they compare like with like; the dotted lines are the interval valid at any grade, the one to report between
the planned looks (core.services.reading: ``now``)."""
PATH_LEGEND = (
    "Line: the estimate · blue band: its fixed-n interval · grey dashed lines: uniform random sampling's at the "
    "same number of grades · dotted: the interval valid whenever grading stops, the one quoted above until the "
    "rule says done."
)
"""PATH_NOTE in one line, for an audience that cannot hover a ? (the presenter view: a new user's review)."""


def estimate_path(
    design: Design,
    positions: list[int],
    grades: list[float],
    *,
    points: int = 40,
    method: str = "default",
    level: float = LEVEL,
    anytime: AnytimeInterval | None = None,
) -> pd.DataFrame:
    """Estimate and interval after the first k grades, for up to ``points`` values of k.

    Columns: ``grades`` (k), ``estimate``, ``ci_low``, ``ci_high``, and
    ``uniform_low``/``uniform_high``: the interval uniform random sampling
    would have at the same k, i.e. the estimate +- z sqrt(V / deff) with
    V / deff = (1 - k/N) S^2 / k (docs/method.md, *Savings*), centred on the
    estimate so the two widths compare directly; ``anytime_low``/``anytime_high``:
    ``anytime``'s confidence sequence after k grades (its path; NaN without it), the
    interval valid whenever grading stops. Prefixes that leave a stratum
    without a grade have no estimate and no row.
    """
    n = len(positions)
    columns = ["grades", "estimate", "ci_low", "ci_high", "uniform_low", "uniform_high", "anytime_low", "anytime_high"]
    sequence = None if anytime is None else anytime.path.set_index("grades")
    if n == 0:
        return pd.DataFrame(columns=columns)
    ks = np.unique(np.linspace(1, n, num=min(points, n)).round().astype(int))
    z = stats.norm.ppf(0.5 + level / 2)
    rows = []
    for k in ks:
        e = estimate(design, positions[:k], grades[:k], method=method, level=level)
        if e.missing:
            continue
        uniform_half = z * e.se / np.sqrt(e.deff) if e.deff and np.isfinite(e.deff) and e.deff > 0 else np.nan
        rows.append(
            {
                "grades": int(k),
                "estimate": e.value,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "uniform_low": max(e.value - uniform_half, 0.0),
                "uniform_high": min(e.value + uniform_half, 1.0),
                "anytime_low": np.nan if sequence is None else float(sequence.at[k, "low"]),
                "anytime_high": np.nan if sequence is None else float(sequence.at[k, "high"]),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def current_estimate(design: Design, graded: dict[int, float], method: str = "default") -> Estimate:
    """The estimate from ``graded`` (position -> grade, in grading order)."""
    return estimate(design, list(graded), list(graded.values()), method=method)
