"""Reservations: exclusive items, expiry back to the queue, double grading, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import event

from core.scales import BINARY
from core.services import account_writes, auth, grade_actions, reservations
from core.store import accounts
from core.testing.workload import synthetic_project

from .conftest import BACKENDS

on_both = pytest.mark.parametrize("db_url", BACKENDS, indirect=True)


@on_both
def test_two_graders_never_hold_the_same_item_and_a_reload_keeps_it(store):
    pid, design = synthetic_project(store, 30)
    ann = reservations.claim(store, pid, design, 3, "ann")
    bob = reservations.claim(store, pid, design, 3, "bob")
    assert ann is not None and bob is not None and ann != bob
    assert reservations.claim(store, pid, design, 3, "ann") == ann  # reload: same item
    assert accounts.reserved(store, pid) == {ann: "ann", bob: "bob"}


@on_both
def test_held_is_the_graders_own_live_reservation_among_everyone_elses(store):
    pid, design = synthetic_project(store, 30)
    mine = {g: reservations.claim(store, pid, design, 3, g) for g in ("ann", "bob", "cy")}
    reservations.claim(store, pid, design, 3, "dee", ttl=LAPSED)  # expired at once
    assert {g: accounts.held(store, pid, g).position for g in mine} == mine
    assert accounts.held(store, pid, "dee") is None and accounts.held(store, pid, "eve") is None


@on_both
def test_grade_and_skip_free_the_reservation(store):
    pid, design = synthetic_project(store, 30)
    first = reservations.claim(store, pid, design, 3, "ann")
    reservations.record_grade(store, pid, first, BINARY, "Correct", "ann")
    assert accounts.reserved(store, pid) == {}
    second = reservations.claim(store, pid, design, 3, "ann")
    assert second != first
    reservations.skip(store, pid, second, "ann")
    assert accounts.held(store, pid, "ann") is None
    assert second in store.skipped_positions(pid)


@on_both
@pytest.mark.parametrize(
    "record",
    [
        lambda store, pid, p: reservations.record_grade(store, pid, p, BINARY, "Correct", "ann"),
        lambda store, pid, p: reservations.record_card(store, pid, p, [("a", 1.0, "Correct"), ("b", 0.0, "No")], "ann"),
    ],
    ids=["grade", "card"],
)
def test_a_grade_and_the_end_of_its_hold_commit_in_one_transaction(store, record):
    pid, design = synthetic_project(store, 30)
    position = reservations.claim(store, pid, design, 3, "ann")
    commits = []
    event.listen(store.engine, "commit", lambda _connection: commits.append(1))
    record(store, pid, position)
    assert len(commits) == 1 and accounts.reserved(store, pid) == {}
    assert store.grade_of(pid, position, "ann") is not None


@on_both
def test_an_abandoned_reservation_returns_to_the_queue(store):
    pid, design = synthetic_project(store, 30)
    gone = reservations.claim(store, pid, design, 3, "ann", ttl=timedelta(seconds=-1))  # expired at once
    assert accounts.held(store, pid, "ann") is None
    assert reservations.claim(store, pid, design, 3, "bob") == gone  # the queue's next item again


@on_both
def test_every_item_is_handed_out_once_then_none(store):
    pid, design = synthetic_project(store, 12)
    seen = []
    for turn in range(12):
        grader = ("ann", "bob", "cy")[turn % 3]
        position = reservations.claim(store, pid, design, 3, grader)
        seen.append(position)
        reservations.record_grade(store, pid, position, BINARY, "Correct", grader)
    assert sorted(seen) == list(range(12))
    assert reservations.claim(store, pid, design, 3, "ann") is None


@on_both
def test_a_fixed_budget_hands_out_n0_items_counting_those_held_and_second_grades_go_on(store):
    pid, design = synthetic_project(store, 20)
    ann = reservations.claim(store, pid, design, 3, "ann", budget=3)
    bob = reservations.claim(store, pid, design, 3, "bob", budget=3)
    reservations.record_grade(store, pid, ann, BINARY, "Correct", "ann")
    cy = reservations.claim(store, pid, design, 3, "cy", budget=3)  # 1 graded + bob's held: the third item
    assert len({ann, bob, cy}) == 3
    assert reservations.claim(store, pid, design, 3, "ann", budget=3) is None  # 1 graded + 2 held reach 3
    reservations.record_grade(store, pid, cy, BINARY, "Correct", "cy")
    assert reservations.claim(store, pid, design, 3, "cy", budget=3) is None
    assert reservations.claim(store, pid, design, 3, "bob", budget=3) == bob  # a held item is still graded
    reservations.record_grade(store, pid, bob, BINARY, "Correct", "bob")
    assert reservations.claim(store, pid, design, 3, "ann", budget=3) is None
    assert reservations.claim(store, pid, design, 3, "ann", budget=4) is not None  # n0 raised: grading resumes
    held = reservations.claim(store, pid, design, 3, "eve", budget=None)  # the budget not fixed for a while
    assert reservations.claim(store, pid, design, 3, "eve", budget=4) is None  # fixed again, and reached
    assert accounts.held(store, pid, "eve") is None and held not in accounts.reserved(store, pid)
    # with every item chosen for double grading, a graded item still gets its second grade past the budget
    assert reservations.claim(store, pid, design, 3, "dee", overlap=1.0, budget=3) in {ann, bob, cy}


@on_both
def test_double_graded_items_go_to_a_second_different_grader(store):
    pid, design = synthetic_project(store, 20)
    double = reservations.overlap_positions(20, 0.25, 3)
    assert len(double) == 5
    graded_by: dict[int, list[str]] = {}
    for turn in range(60):
        grader = ("ann", "bob")[turn % 2]
        position = reservations.claim(store, pid, design, 3, grader, overlap=0.25)
        if position is None:
            continue
        assert grader not in graded_by.get(position, [])
        graded_by.setdefault(position, []).append(grader)
        reservations.record_grade(store, pid, position, BINARY, "Incorrect" if turn % 3 else "Correct", grader)
    assert set(graded_by) == set(range(20))
    assert {p for p, g in graded_by.items() if len(g) == 2} == double
    assert all(len(g) == 1 for p, g in graded_by.items() if p not in double)
    grades = store.grades(pid)
    means = grades.groupby("position")["value"].mean().to_dict()
    assert store.graded_positions(pid) == pytest.approx(means)  # the documented rule: their mean


@on_both
def test_a_second_grader_may_hold_a_double_graded_item_the_first_one_holds_again(store):
    pid, design = synthetic_project(store, 10)
    everything = 1.0
    first = reservations.claim(store, pid, design, 3, "ann", overlap=everything)
    reservations.record_grade(store, pid, first, BINARY, "Correct", "ann")
    assert reservations.claim(store, pid, design, 3, "bob", overlap=everything) == first  # second grade
    assert reservations.claim(store, pid, design, 3, "cy", overlap=everything) != first  # no third holder
    store.retract_last_grade(pid, "ann")  # ann undoes: the item needs its first grade again
    assert reservations.hold(store, pid, first, "ann")
    assert accounts.reserved(store, pid, slot=0)[first] == "ann"


def test_overlap_fraction_is_checked():
    with pytest.raises(ValueError, match="not in"):
        reservations.overlap_positions(10, 1.5, 0)


LAPSED = timedelta(seconds=-1)  # a reservation that has expired at once: its grader walked away


def _team(store, settings=None):
    """A ready 10-item project with graders ann and bob assigned, as the grade page acts for them."""
    pid, design = synthetic_project(store, 10, settings=settings)
    users = {}
    for name in ("ann", "bob"):
        users[name] = account_writes.create_account(store, name, auth.GRADER, password="a long enough password")
        accounts.assign(store, pid, users[name].id)
    return pid, design, users


def _press(store, user, pid, position, label="Correct"):
    return grade_actions.grade(store, user, pid, position, label, seconds=1.0)


@on_both
def test_a_late_grade_of_an_item_another_grader_holds_is_refused_and_theirs_counts(store):
    pid, design, users = _team(store)
    slow = reservations.claim(store, pid, design, 3, "ann", ttl=LAPSED)  # ann walks away
    assert reservations.claim(store, pid, design, 3, "bob") == slow  # the item went back to the queue
    with pytest.raises(grade_actions.Refused) as refused:
        _press(store, users["ann"], pid, slow)  # ann comes back and grades it while bob has it
    assert str(refused.value) == reservations.LATE and "not saved" in str(refused.value)
    assert _press(store, users["bob"], pid, slow, "Incorrect").status == "saved"
    assert store.grades(pid)[["position", "grader"]].values.tolist() == [[slow, "bob"]]
    assert reservations.claim(store, pid, design, 3, "ann") not in (None, slow)  # ann goes on with the next item


@on_both
def test_a_late_grade_of_an_item_another_grader_graded_is_refused(store):
    pid, design, users = _team(store)
    slow = reservations.claim(store, pid, design, 3, "ann", ttl=LAPSED)
    assert reservations.claim(store, pid, design, 3, "bob") == slow
    _press(store, users["bob"], pid, slow)
    with pytest.raises(grade_actions.Refused, match="another grader has this item now"):
        _press(store, users["ann"], pid, slow)
    assert store.grades(pid)["grader"].tolist() == ["bob"]


@on_both
def test_a_late_grade_nobody_else_took_is_kept(store):
    pid, design, users = _team(store)
    slow = reservations.claim(store, pid, design, 3, "ann", ttl=LAPSED)
    assert accounts.held(store, pid, "ann") is None  # lapsed: anyone could take it now, nobody did
    assert _press(store, users["ann"], pid, slow).status == "saved"
    assert store.grades(pid)["grader"].tolist() == ["ann"] and accounts.reserved(store, pid) == {}


@on_both
def test_a_late_grade_of_a_double_graded_item_becomes_its_planned_second_grade(store):
    pid, design, users = _team(store, settings={"overlap": 1.0})  # every item is chosen for double grading
    slow = reservations.claim(store, pid, design, 3, "ann", overlap=1.0, ttl=LAPSED)
    assert reservations.claim(store, pid, design, 3, "bob", overlap=1.0) == slow
    _press(store, users["bob"], pid, slow)
    assert _press(store, users["ann"], pid, slow, "Incorrect").status == "saved"  # the second grade it needed
    assert sorted(store.grades(pid)["grader"]) == ["ann", "bob"]
    assert store.graded_positions(pid)[slow] == pytest.approx(0.5)  # both enter as their mean
