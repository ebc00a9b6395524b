"""core.services.progress: grades and items counted apart, pace over working time, the stopping rule, the ETA."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.services.progress import (
    IDLE_GAP_S,
    Counts,
    Eta,
    counted,
    counts,
    duration,
    eta,
    grader_pace,
    grades_saved,
    item_pace,
    level_percent,
    percent,
    throughput,
    without_grades,
    working_hours,
)
from core.stats.allocation import make_design

T0 = pd.Timestamp("2026-01-01 09:00", tz="UTC")


def grades_frame(rows: list[tuple[int, str, float, float | None]]) -> pd.DataFrame:
    """rows: (position, grader, seconds after T0, seconds spent)."""
    return pd.DataFrame(
        {
            "position": [r[0] for r in rows],
            "grader": [r[1] for r in rows],
            "value": 1.0,
            "seconds": [r[3] for r in rows],
            "created_at": [T0 + pd.Timedelta(seconds=r[2]) for r in rows],
        }
    )


def test_grades_and_items_are_counted_apart():
    g = grades_frame([(0, "a", 0, 5), (1, "a", 60, 5), (0, "b", 90, 5)])
    assert counts(g) == Counts(3, 2, 2) and counts(g.iloc[:0]) == Counts(0, 0, 0)


def test_working_hours_leave_breaks_out_and_count_each_spell_start():
    # two spells: 0, 60, 120 s; then after a break longer than IDLE_GAP_S, 2 more grades 30 s apart
    later = 120 + IDLE_GAP_S + 1
    g = grades_frame(
        [(0, "a", 0, 10), (1, "a", 60, 10), (2, "a", 120, 10), (3, "a", later, 20), (4, "a", later + 30, 9)]
    )
    assert working_hours(g["created_at"], g["seconds"]) == pytest.approx((60 + 60 + 30 + 10 + 20) / 3600)
    # without seconds spent, a spell's first grade counts as the median kept gap
    assert working_hours(g["created_at"]) == pytest.approx((150 + 2 * 60) / 3600)
    assert throughput(g) == pytest.approx(5 / ((180) / 3600))
    assert np.isnan(throughput(g.iloc[:0]))


def test_item_pace_counts_items_not_second_grades():
    g = grades_frame([(0, "a", 0, 60), (1, "a", 60, 60), (0, "b", 120, 60)])
    assert item_pace(g) == pytest.approx(2 / (180 / 3600)) and throughput(g) == pytest.approx(3 / (180 / 3600))


def test_grader_pace_per_grader():
    g = grades_frame([(0, "a", 0, 30), (1, "a", 30, 30), (2, "b", 0, 60)])
    table = grader_pace(g).set_index("grader")
    assert table.loc["a", "grades"] == 2 and table.loc["a", "grades per hour"] == pytest.approx(2 / (60 / 3600))
    assert np.isnan(table.loc["b", "grades per hour"])  # one grade (its own 60 s) is no pace
    assert list(grader_pace(g.iloc[:0]).columns)[:3] == ["grader", "grades", "hours"]


def test_eta_and_its_words():
    assert eta(100, 40, 30.0) == Eta(60, 30.0, 2.0)
    assert eta(30, 40, 30.0).hours == 0 and np.isnan(eta(50, 40, float("nan")).hours)
    assert duration(2.5) == "2 h 30 min" and duration(0.25) == "15 min"
    assert duration(0.001) == "< 1 min" and duration(float("nan")) == "unknown"


def _design():
    stratum = np.repeat(np.arange(2), 50)
    proxy = np.where(stratum == 0, 0.2, 0.8)
    return make_design(stratum, proxy, np.c_[proxy])


def test_grades_saved_counts_in_words():
    assert grades_saved(41.2) == "41 grades saved" and grades_saved(1.0) == "1 grade saved"
    assert grades_saved(-1.0) == "1 grade more than uniform sampling would need"
    assert grades_saved(-3.4) == "3 grades more than uniform sampling would need"


def test_counts_and_shares_in_words():
    assert counted(1, "skipped item") == "1 skipped item" and counted(1200, "grade") == "1,200 grades"
    assert percent(0.234) == "23%" and percent(-0.08) == "-8%" and percent(-0.001) == "0%"  # never "-0%"
    assert percent(0.234, signed=True) == "+23%" and percent(-0.001, signed=True) == "+0%"
    assert level_percent(0.95) == "95%" and level_percent(0.9500001) == "95%" and level_percent(0.99483) == "99.5%"
    assert without_grades([1]) == "stratum 1 has no grade"
    assert without_grades([0, 2], 0.35) == "strata 0, 2 (35% of the pool) have no grade"
