"""Load: 8 graders on one server (threads of this process), 200 grades in all, through the grade page's functions, on SQLite and PostgreSQL.

None lost (every grade a worker saw committed is in the database, as it was
sent), none duplicated (each item graded once, or exactly twice by two
different graders when it was chosen for double grading), and the estimate
the dashboard shows equals one computed independently from the grades.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.services.reservations import overlap_positions
from core.services.tracking import current_estimate
from core.stats.estimate import estimate
from core.store import accounts
from core.testing.workload import expected_grades, run_graders, synthetic_project, true_label

from .conftest import BACKENDS

GRADERS = 8
N_ITEMS = 182
OVERLAP = 0.1  # 18 items double-graded: 200 grades in all
GRADES = 200  # a correctness check; the volume (2,000 grades, and their speed) is benchmarks/reliability.py


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_eight_graders_at_once_lose_and_duplicate_no_grade(db_url, store):
    assert expected_grades(N_ITEMS, OVERLAP) == GRADES
    pid, design = synthetic_project(store, N_ITEMS)
    crew, _seconds = run_graders(store, pid, GRADERS, overlap=OVERLAP)
    acked = {g.name: g.graded for g in crew}

    rows = store.grades(pid, include_retracted=True)
    assert rows["retracted_at"].isna().all()
    sent = {(gid, pos, name) for name, grades in acked.items() for gid, pos in grades}
    stored = set(zip(rows["id"], rows["position"], rows["grader"]))
    assert len(sent) == GRADES and stored == sent  # none lost, none invented
    assert (rows["label"] == rows["position"].map(true_label)).all()

    double = overlap_positions(N_ITEMS, OVERLAP, 3)
    per_item = rows.groupby("position")["grader"].agg(["size", "nunique"])
    assert set(per_item.index) == set(range(N_ITEMS))
    assert (per_item.loc[sorted(double), "nunique"] == 2).all()  # two different graders
    assert (per_item.drop(index=sorted(double))["size"] == 1).all()
    assert sum(len(g) > 0 for g in acked.values()) == GRADERS  # everyone worked
    assert accounts.reserved(store, pid) == {}

    shown = current_estimate(design, store.graded_positions(pid))
    order = list(store.graded_positions(pid))  # grading order, which an estimator may use
    means = rows.groupby("position")["value"].mean().loc[order]  # the raw rows, each item's grades averaged here
    from_rows = estimate(design, means.index.tolist(), means.tolist())
    assert (shown.value, shown.se) == pytest.approx((from_rows.value, from_rows.se), abs=1e-12)
    values = {p: (1.0 if true_label(p) == "Correct" else 0.0) for p in range(N_ITEMS)}
    independent = estimate(design, list(values), list(values.values()))
    assert shown.n == independent.n == N_ITEMS
    assert shown.value == pytest.approx(independent.value, abs=1e-12)
    assert shown.value == pytest.approx(np.mean(list(values.values())), abs=1e-12)  # a census gives the pool mean
