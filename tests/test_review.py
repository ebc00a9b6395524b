"""core.services.review and the final-grade rule: the queue (disagreements, flags, audit share), settling
an item (permission, own grades, audit trail), final grades everywhere the estimate reads them, and the
validation sample."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.errors import InputError
from core.services import account_writes, audit, auth, grade_actions, reservations, review
from core.services.project import create_project, start_preparation
from core.settings import ProjectSettings
from core.stats.allocation import design_from_items
from core.stats.rater_agreement import final_grades
from core.store import Store, accounts
from core.store import reviews as review_rows

DATA = Path(__file__).parent / "data" / "app"
PASSWORD = "correct horse battery"


@pytest.fixture
def world(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "P", *files, start=False)
    start_preparation(store, pid, wait=True)
    people = {}
    for name, role in (("ann", auth.GRADER), ("bob", auth.GRADER), ("rita", auth.REVIEWER), ("val", auth.VIEWER)):
        people[name] = account_writes.create_account(store, name, role, password=PASSWORD)
        accounts.assign(store, pid, people[name].id)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    return store, pid, people, design


def grade(store, pid, position, grader, label):
    """A grade as the grading card stores it (reserved first, as the expiry rule wants)."""
    assert reservations.hold(store, pid, position, grader) or store.grade_of(pid, position, grader) is not None
    reservations.record_grade(store, pid, position, ProjectSettings().grading_scale, label, grader)


def test_the_final_grade_is_the_review_else_the_mean():
    assert final_grades([3, 1, 3], [1.0, 0.0, 0.0], {}) == {3: 0.5, 1: 0.0}
    assert list(final_grades([3, 1, 3], [1.0, 0.0, 0.0], {})) == [3, 1]  # order of each item's first grade
    assert final_grades([3, 1, 3], [1.0, 0.0, 0.0], {3: 1.0, 9: 0.0}) == {3: 1.0, 1: 0.0}  # 9: never graded


def test_disagreements_and_flags_come_to_review_and_a_review_settles_them(world):
    store, pid, people, _ = world
    store.update_settings(pid, {"overlap": 1.0})
    grade(store, pid, 0, "ann", "Correct")
    grade(store, pid, 0, "bob", "Incorrect")  # a disagreement
    grade(store, pid, 1, "ann", "Correct")
    grade(store, pid, 1, "bob", "Correct")  # agreement: not queued
    grade(store, pid, 2, "ann", "Correct")
    grade_actions.flag(store, people["ann"], pid, 2, "the reference looks wrong")
    entries = review.queue(store, people["rita"], pid)
    assert [(e.position, e.reasons) for e in entries] == [(2, (review.FLAGGED,)), (0, (review.DISAGREEMENT,))]
    shown = review.item(store, people["rita"], pid, 0)
    assert sorted(shown.grades["grader"]) == ["ann", "bob"] and shown.review is None
    assert store.graded_positions(pid)[0] == 0.5  # the mean until reviewed
    outcome = review.settle(store, people["rita"], pid, 0, "Incorrect", note="the answer is 41")
    assert outcome.status == "reviewed"
    assert store.graded_positions(pid)[0] == 0.0  # the reviewed grade is final
    assert [e.position for e in review.queue(store, people["rita"], pid)] == [2]
    assert review.item(store, people["rita"], pid, 0).review["note"] == "the answer is 41"
    review.settle(store, people["rita"], pid, 0, "Correct")  # a changed review replaces the first
    assert store.graded_positions(pid)[0] == 1.0 and len(review_rows.reviews(store, pid, [0])) == 1
    events = audit.trail(store, pid)
    reviewed = events[events["action"] == audit.REVIEWED]["detail"].tolist()
    assert [(d["before"], d["after"]) for d in reviewed] == [(None, "Incorrect"), ("Incorrect", "Correct")]
    assert (events["action"] == audit.FLAGGED).sum() == 1


def test_only_reviewers_and_admins_settle_and_never_their_own_grades(world):
    store, pid, people, _ = world
    grade(store, pid, 0, "ann", "Correct")
    for who in ("ann", "val"):
        with pytest.raises(grade_actions.Refused, match="may not review"):
            review.settle(store, people[who], pid, 0, "Incorrect")
        with pytest.raises(grade_actions.Refused):
            review.queue(store, people[who], pid)
    admin = account_writes.create_account(store, "ada", auth.ADMIN, password=PASSWORD)
    grade(store, pid, 1, "ada", "Correct")
    with pytest.raises(grade_actions.Refused, match="graded this item yourself"):
        review.settle(store, admin, pid, 1, "Incorrect")
    with pytest.raises(grade_actions.Refused, match="no grade yet"):
        review.settle(store, admin, pid, 5, "Incorrect")
    with pytest.raises(grade_actions.Refused, match="not a grade"):
        review.settle(store, admin, pid, 0, "Maybe")
    assert review.settle(store, admin, pid, 0, "Incorrect").status == "reviewed"
    other = store.create_project("other", {}, {"pool": ("pool.jsonl", b"{}\n")})
    with pytest.raises(grade_actions.Refused, match="not assigned"):
        review.queue(store, people["rita"], other)


def test_a_flagged_item_waits_for_review_once_graded(world):
    """Flag then skip left an item counted as waiting, the figures provisional, which the reviewer could not
    settle: "the item has no grade yet" (a grader's and manager's review)."""
    store, pid, people, _ = world
    assert reservations.hold(store, pid, 5, "ann")
    grade_actions.flag(store, people["ann"], pid, 5, "unclear prompt")
    grade_actions.skip(store, people["ann"], pid, 5, seconds=1.0)
    assert [e.position for e in review.waiting(store, pid)] == []
    grade(store, pid, 5, "bob", "Correct")
    assert [(e.position, e.reasons) for e in review.waiting(store, pid)] == [(5, (review.FLAGGED,))]


def test_a_page_of_the_queue_reads_each_item_as_one_item_does(world):
    """GET review reads a page of items at once (the project's grades once, not once an item): each the same as
    the item read alone."""
    store, pid, people, _ = world
    store.update_settings(pid, {"overlap": 1.0})
    for position, labels in ((0, ("Correct", "Incorrect")), (1, ("Correct", "Correct")), (2, ("Incorrect", "Correct"))):
        for grader, label in zip(("ann", "bob"), labels):
            grade(store, pid, position, grader, label)
    review.settle(store, people["rita"], pid, 2, "Correct")
    together = review.items(store, people["rita"], pid, [0, 1, 2])
    for shown in together:
        alone = review.item(store, people["rita"], pid, shown.position)
        assert (shown.position, shown.disagree, shown.item) == (alone.position, alone.disagree, alone.item)
        for frame in ("grades", "flags", "reviews"):
            pd.testing.assert_frame_equal(getattr(shown, frame), getattr(alone, frame), check_dtype=False)
    assert [s.disagree for s in together] == [("",), (), ("",)] and len(together[2].reviews) == 1


def test_a_flag_needs_the_item_on_the_graders_card(world):
    store, pid, people, _ = world
    assert reservations.hold(store, pid, 4, "bob")
    with pytest.raises(grade_actions.Refused, match="another grader"):
        grade_actions.flag(store, people["ann"], pid, 4)
    assert grade_actions.flag(store, people["bob"], pid, 4, "unclear prompt").status == review_rows.FLAGGED
    with pytest.raises(InputError, match="comment"):
        grade_actions.flag(store, people["bob"], pid, 4, "x" * 6000)
    for note in ("second look", "third look"):  # a grader's loop of new notes grew the trail without end (review)
        assert grade_actions.flag(store, people["bob"], pid, 4, note).status == review_rows.FLAGGED
    with pytest.raises(grade_actions.Refused, match="3 times already"):
        grade_actions.flag(store, people["bob"], pid, 4, "fourth look")
    assert len(review_rows.flags(store, pid, [4])) == 3


def test_the_audit_share_is_a_validated_setting_and_queues_graded_items(world):
    store, pid, people, _ = world
    with pytest.raises(InputError, match="audit_share"):
        ProjectSettings().with_changes({"audit_share": 1.5})
    store.update_settings(pid, {"audit_share": 1.0})
    grade(store, pid, 3, "ann", "Correct")
    assert [(e.position, e.reasons) for e in review.queue(store, people["rita"], pid)] == [(3, (review.AUDIT,))]
    assert review.audit_positions(100, 0.2, 0) != reservations.overlap_positions(100, 0.2, 0)
    assert len(review.audit_positions(100, 0.2, 0)) == 20


def test_the_validation_sample_is_the_checked_random_items(world):
    store, pid, people, design = world
    store.update_settings(pid, {"overlap": 1.0})
    for position in range(design.N):
        grade(store, pid, position, "ann", "Correct")
    grade(store, pid, 0, "bob", "Incorrect")
    grade(store, pid, 1, "bob", "Correct")
    grade(store, pid, 2, "bob", "Incorrect")
    assert review.disagreements_settled(store, pid) == (0, 2)  # items 0 and 2 disagree; none settled yet
    review.settle(store, people["rita"], pid, 0, "Incorrect")
    assert review.disagreements_settled(store, pid) == (1, 2)
    again = review.settle(store, people["rita"], pid, 0, "Incorrect")  # set again: a new row and event each time
    assert again.status == "unchanged" and len(review_rows.reviews(store, pid, [0])) == 1
    assert review.settle(store, people["rita"], pid, 0, "Incorrect", note="why").status == "reviewed"  # a new note
    assert review.validation_finals(store, pid) == {0: 0.0, 1: 1.0, 2: 0.5}
    result = review.validated(store, pid, design)
    assert result.validation == 3
    # first grades all 1: the design estimate is 1; the validation says first grades overstate by half
    assert result.correction == pytest.approx(-0.5, abs=0.2) and result.value < 1.0


def test_the_report_states_the_estimand_and_reads_final_grades(world):
    from core.exports.project_export import report_data
    from core.exports.report import ESTIMAND, report_markdown

    store, pid, people, design = world
    store.update_settings(pid, {"overlap": 1.0})
    for position in range(design.N):
        grade(store, pid, position, "ann", "Correct")
    grade(store, pid, 0, "bob", "Incorrect")
    grade(store, pid, 1, "bob", "Incorrect")
    review.settle(store, people["rita"], pid, 0, "Incorrect")
    data = report_data(store, store.project(pid), design)
    assert data["review"]["estimand"] == ESTIMAND and data["review"]["reviewed_items"] == 1
    assert {r["grader"]: r["agree_with_review"] for r in data["review"]["graders_vs_review"]} == {
        "ann": 0.0,
        "bob": 1.0,
    }
    assert data["review"]["validated"]["validation_items"] == 2
    # how far the correction measures graders' errors: item 0 settled, item 1 read at the graders' mean
    assert (data["review"]["validated"]["disagreements_settled"], data["review"]["validated"]["disagreements"]) == (
        1,
        2,
    )
    assert "1 of their 2 disagreements settled by a reviewer" in report_markdown(data)
    # the recomputed stratified estimate uses the final grades: item 0 at 0 (reviewed), item 1 at 0.5 (mean)
    assert data["estimate"]["value"] == pytest.approx(data["recompute"]["value"])
    assert "Estimand: " in report_markdown(data) and "Corrected for graders' errors: **" in report_markdown(data)
    assert data["review"]["waiting_items"] == 1  # item 1's grades disagree, and no reviewer settled it
    assert "1 item waits for a reviewer's final grade" in report_markdown(data)
