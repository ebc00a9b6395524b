"""How far a project is, and when it will be done: counts, pace, the stopping rule, an ETA.

Pure functions over the grades as ``Store.grades`` returns them (one row per
active grade: ``position``, ``grader``, ``value``, ``seconds``,
``created_at``) and over a ``core.stats.estimate.Estimate``.

- Grades and graded items are counted apart: with double grading an item
  carries several grades and enters the estimate once (core.stats.rater_agreement.final_grades).
- Pace is measured over working time: the time between consecutive grades
  (of the project, or of one grader) summed with every gap longer than
  IDLE_GAP_S left out, so a lunch break or a night does not lower it. The
  first grade of each working spell adds its own grading time (``seconds``,
  else the median gap) so that one spell of k grades is not k-1 grades.
- The ETA is (items still needed) / (graded items per working hour), the
  items still needed from the project's reading (core.services.reading),
  which decides the stopping rule and the forecast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

IDLE_GAP_S = 15 * 60
"""A pause between two grades longer than this is a break, not grading time."""


@dataclass(frozen=True)
class Counts:
    """grades: active grades (several per double-graded item); items: distinct graded items; graders."""

    grades: int
    items: int
    graders: int


def counts(grades: pd.DataFrame) -> Counts:
    """Grades and graded items counted apart."""
    if grades.empty:
        return Counts(0, 0, 0)
    return Counts(len(grades), int(grades["position"].nunique()), int(grades["grader"].nunique()))


def working_hours(times: pd.Series, seconds: pd.Series | None = None, idle_gap_s: float = IDLE_GAP_S) -> float:
    """Hours of grading behind grades given at ``times``: gaps up to ``idle_gap_s`` summed, plus each spell's
    first grade's own ``seconds`` (else the median kept gap, else 0)."""
    if len(times) == 0:
        return 0.0
    order = np.argsort(pd.to_datetime(times, utc=True).to_numpy())
    stamps = pd.to_datetime(times, utc=True).to_numpy()[order]
    gaps = np.diff(stamps).astype("timedelta64[ms]").astype(float) / 1000.0
    kept = gaps[gaps <= idle_gap_s]
    fallback = float(np.median(kept)) if kept.size else 0.0
    starts = np.concatenate([[True], gaps > idle_gap_s])
    own = np.full(len(stamps), np.nan) if seconds is None else pd.to_numeric(seconds, errors="coerce").to_numpy()[order]
    first = np.where(np.isfinite(own[starts]), own[starts], fallback)
    return float((kept.sum() + first.sum()) / 3600.0)


def throughput(grades: pd.DataFrame) -> float:
    """Grades per working hour of the whole project (NaN before there is any working time)."""
    hours = working_hours(grades.get("created_at", pd.Series(dtype=object)), grades.get("seconds"))
    return len(grades) / hours if hours > 0 else float("nan")


def item_pace(grades: pd.DataFrame) -> float:
    """Distinct graded items per working hour: what the ETA divides by (a double grade adds no item)."""
    hours = working_hours(grades.get("created_at", pd.Series(dtype=object)), grades.get("seconds"))
    return counts(grades).items / hours if hours > 0 else float("nan")


def grader_pace(grades: pd.DataFrame) -> pd.DataFrame:
    """Per grader: grades, working hours, grades per hour (from 2 grades on, as the project's throughput: one
    grade's own seconds are no pace), median seconds per grade, last grade; busiest first."""
    columns = ["grader", "grades", "hours", "grades per hour", "median seconds", "last grade"]
    if grades.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for grader, own in grades.groupby("grader"):
        hours = working_hours(own["created_at"], own["seconds"])
        rows.append(
            {
                "grader": grader,
                "grades": len(own),
                "hours": hours,
                "grades per hour": len(own) / hours if hours > 0 and len(own) > 1 else float("nan"),
                "median seconds": pd.to_numeric(own["seconds"], errors="coerce").median(),
                "last grade": pd.to_datetime(own["created_at"], utc=True).max(),
            }
        )
    return pd.DataFrame(rows, columns=columns).sort_values("grades", ascending=False, kind="stable")


@dataclass(frozen=True)
class Eta:
    """items_left: graded items still needed; pace: items per working hour; hours: items_left / pace (NaN: no pace)."""

    items_left: int
    pace: float
    hours: float


def eta(items_needed: int, items_done: int, pace: float) -> Eta:
    """Working hours to the target at the current pace (0 once enough items are graded)."""
    left = max(int(items_needed) - int(items_done), 0)
    hours = 0.0 if left == 0 else (left / pace if np.isfinite(pace) and pace > 0 else float("nan"))
    return Eta(left, float(pace), float(hours))


def duration(hours: float) -> str:
    """'2 h 10 min', '25 min', '< 1 min'; 'unknown' for NaN (no pace yet)."""
    if not np.isfinite(hours):
        return "unknown"
    minutes = round(hours * 60)
    if minutes < 1:
        return "< 1 min"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def percent(share: float, signed: bool = False) -> str:
    """'23%', '-8%', and '0%' for a share that rounds to zero from below (never '-0%'); ``signed``: '+23%'."""
    return f"{round(share, 2) + 0.0:{'+' if signed else ''}.0%}"


def level_percent(level: float) -> str:
    """An interval's level as people write it: '95%' where it is a whole percent, '99.4%' where a look's level
    is not ('95.0%' beside a target's '95%' read as two levels)."""
    tenths = round(level * 1000)
    return f"{tenths // 10}%" if tenths % 10 == 0 else f"{tenths / 10:.1f}%"


def counted(count: int, noun: str) -> str:
    """'1 item', '2 items', '1,200 grades': a count with its noun in the number it takes."""
    return f"{count:,} {noun}{'' if abs(count) == 1 else 's'}"


def waiting_for_review(count: int) -> str:
    """'3 items wait for a reviewer's final grade': the one wording of the items flagged, disagreeing or audited
    that no reviewer has settled yet, which the dashboards and the reports give, each with what it means there;
    "" when none wait."""
    if not count:
        return ""
    return f"{counted(count, 'item')} {'waits' if count == 1 else 'wait'} for a reviewer's final grade"


def without_grades(strata: Sequence[int], share: float | None = None) -> str:
    """'stratum 1 has no grade', 'strata 0, 2 (35% of the pool) have no grade': the strata an estimate waits for."""
    one = len(strata) == 1
    of_pool = "" if share is None else f" ({percent(share)} of the pool)"
    return (
        f"{'stratum' if one else 'strata'} {', '.join(map(str, strata))}{of_pool} {'has' if one else 'have'} no grade"
    )


def with_working_time(pace: pd.DataFrame) -> pd.DataFrame:
    """`grader_pace`'s table as people read it: its hours as a working time ('< 1 min', '1 h 05 min')."""
    return pace.assign(hours=pace["hours"].map(duration)).rename(columns={"hours": "working time"})


def grades_saved(labels_saved: float) -> str:
    """Grades saved against uniform sampling in words: '41 grades saved', '1 grade saved', or, when the design
    needs more than uniform sampling would, '3 grades more than uniform sampling would need'."""
    count = round(labels_saved)
    grades = counted(abs(count), "grade")
    return f"{grades} saved" if count >= 0 else f"{grades} more than uniform sampling would need"
