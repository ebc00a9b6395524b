"""Crash: a grading worker process killed with SIGKILL mid-grading, then restarted.

Every grade the worker had seen committed is in the database, nothing is
half-saved, and the restarted worker resumes the queue (its reservation from
before the kill is still its own) and finishes the project with every item
graded exactly once.
"""

from __future__ import annotations

import os
import signal

import pytest

from core.store import accounts
from core.testing.workload import acknowledged, start_worker, synthetic_project, true_label

from .conftest import BACKENDS

N_ITEMS = 40
KILL_AFTER = 12


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_sigkill_mid_grading_loses_nothing_and_the_queue_resumes(db_url, store):
    pid, _design = synthetic_project(store, N_ITEMS)
    worker = start_worker(db_url, pid, "ann")
    lines = []
    for line in worker.stdout:  # grade lines as each commit returns
        lines.append(line)
        if len(acknowledged("".join(lines))) == KILL_AFTER:
            os.kill(worker.pid, signal.SIGKILL)  # while it is already claiming or grading the next item
            break
    worker.wait(timeout=60)
    assert worker.returncode == -signal.SIGKILL
    lines.append(worker.stdout.read())  # what it printed between our last read and the kill
    before = acknowledged("".join(lines))
    assert len(before) >= KILL_AFTER

    rows = store.grades(pid, include_retracted=True)
    assert set(before) <= set(zip(rows["id"], rows["position"]))  # every acknowledged grade survived
    assert len(rows) - len(before) <= 1  # at most the one being committed at the kill, whole or not at all
    assert (rows["label"] == rows["position"].map(true_label)).all() and rows["retracted_at"].isna().all()
    held = accounts.held(store, pid, "ann")
    graded = set(rows["position"])

    again = start_worker(db_url, pid, "ann")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-2000:]
    after = acknowledged(out)
    if held is not None and held.position not in graded:
        assert after[0][1] == held.position  # resumed on the item it was shown when it died

    rows = store.grades(pid, include_retracted=True)
    assert set(before) | set(after) <= set(zip(rows["id"], rows["position"]))
    assert sorted(rows["position"]) == list(range(N_ITEMS))  # each item exactly once
    assert rows["retracted_at"].isna().all()
