"""Review and the record browser in a rubric project: an item comes to review once whichever criteria its
grades disagree on, the reviewer sets the criteria's final grades in one submit, each criterion's estimate,
validation sample and agreement read its own final grades, and the browser reads one criterion at a time,
counting items."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from core.services import account_writes, audit, auth, browser, review
from core.services.browser import RecordFilter
from core.services.outcome import Refused
from core.store import accounts
from core.store import reviews as review_rows

PASSWORD = "correct horse battery"
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]


@pytest.fixture
def world(prepared_project):
    """A rubric project (primary: helpful) with graders ann and bob, reviewer rita and viewer val."""
    store, pid = prepared_project
    store.update_settings(pid, {"criteria": CRITERIA, "primary_criterion": "helpful", "overlap": 1.0})
    people = {}
    for name, role in (("ann", auth.GRADER), ("bob", auth.GRADER), ("rita", auth.REVIEWER), ("val", auth.VIEWER)):
        people[name] = account_writes.create_account(store, name, role, password=PASSWORD)
        accounts.assign(store, pid, people[name].id)
    return store, pid, people


def card(store, pid, position, grader, comment="", **labels):
    """One grader's rubric card of the item, stored as the grading card stores it (one transaction)."""
    rubric = store.project(pid).settings.rubric
    store.add_rubric_grades(pid, position, rubric.card_values(labels), grader=grader, comment=comment)


def test_a_disagreement_on_one_criterion_queues_the_item_once_and_its_final_grade_is_that_criterions(world):
    store, pid, people = world
    rita = people["rita"]
    card(store, pid, 0, "ann", "fine", correct="Correct", helpful="4", tone="3")
    card(store, pid, 0, "bob", "meh", correct="Correct", helpful="2", tone="3")  # helpful only disagrees
    card(store, pid, 1, "ann", correct="Correct", helpful="5")
    card(store, pid, 1, "bob", correct="Correct", helpful="5")  # agreement: not queued
    assert [(e.position, e.reasons) for e in review.queue(store, rita, pid)] == [(0, (review.DISAGREEMENT,))]
    shown = review.item(store, rita, pid, 0)
    assert shown.disagree == ("helpful",) and shown.review is None
    table = shown.by_grader(store.project(pid).settings.rubric.names)
    assert table.values.tolist() == [["ann", "Correct", "4", "3", "fine"], ["bob", "Correct", "2", "3", "meh"]]
    assert store.graded_positions(pid)[0] == 0.5  # the primary (helpful): the mean of 0.75 and 0.25 until reviewed

    outcome = review.settle_rubric(store, rita, pid, 0, {"helpful": "3", "correct": None}, note="middling")
    assert outcome.status == "reviewed" and outcome.message == "final grades: helpful 3"
    assert store.reviewed_grades(pid, "helpful") == {0: 0.5} and store.reviewed_grades(pid, "correct") == {}
    assert store.graded_positions(pid, "helpful") == {0: 0.5, 1: 1.0}
    assert store.graded_positions(pid, "correct") == {0: 1.0, 1: 1.0}
    assert review.queue(store, rita, pid) == []
    events = audit.trail(store, pid)
    detail = events[events["action"] == audit.REVIEWED]["detail"].tolist()
    assert [(d["criterion"], d["before"], d["after"]) for d in detail] == [("helpful", None, "3")]


def test_an_item_waits_until_every_disagreeing_criterion_is_settled_and_one_submit_is_one_transaction(world):
    store, pid, people = world
    rita = people["rita"]
    card(store, pid, 2, "ann", correct="Correct", helpful="4")
    card(store, pid, 2, "bob", correct="Incorrect", helpful="2")
    assert review.item(store, rita, pid, 2).disagree == ("correct", "helpful")
    with pytest.raises(Refused, match="'9' is not a grade of criterion 'helpful'"):
        review.settle_rubric(store, rita, pid, 2, {"correct": "Correct", "helpful": "9"})
    assert review_rows.reviews(store, pid).empty  # neither final grade stored
    review.settle_rubric(store, rita, pid, 2, {"correct": "Correct"})
    assert [e.position for e in review.queue(store, rita, pid)] == [2]  # helpful still disagrees
    review.settle_rubric(store, rita, pid, 2, {"helpful": "3", "correct": "Incorrect"})
    assert review.queue(store, rita, pid) == []
    assert store.reviewed_grades(pid, "correct") == {2: 0.0} and store.reviewed_grades(pid, "helpful") == {2: 0.5}
    finals = review.item(store, rita, pid, 2).reviews
    assert sorted(zip(finals["criterion"], finals["label"])) == [("correct", "Incorrect"), ("helpful", "3")]


def test_flagged_and_audited_items_come_once_and_an_audit_waits_for_every_graded_criterion(world):
    store, pid, people = world
    rita = people["rita"]
    store.update_settings(pid, {"audit_share": 1.0})
    card(store, pid, 3, "ann", correct="Correct", helpful="4", tone="5")
    review_rows.add_flag(store, pid, 3, "ann", "unsure")
    assert [(e.position, e.reasons) for e in review.queue(store, rita, pid)] == [(3, (review.FLAGGED, review.AUDIT))]
    review.settle_rubric(store, rita, pid, 3, {"helpful": "4"})
    assert [(e.position, e.reasons) for e in review.queue(store, rita, pid)] == [(3, (review.AUDIT,))]
    review.settle_rubric(store, rita, pid, 3, {"correct": "Correct", "tone": "5"})
    assert review.queue(store, rita, pid) == []
    # each criterion's validation sample holds the audited item once its own final grade is set
    assert review.validation_finals(store, pid, "tone") == {3: 1.0}
    assert review.validation_finals(store, pid) == {3: 0.75}  # the primary, helpful


def test_settling_a_rubric_refuses_what_a_one_question_review_refuses_and_more(world):
    store, pid, people = world
    rita, ann = people["rita"], people["ann"]
    card(store, pid, 4, "ann", correct="Correct", helpful="4")
    card(store, pid, 4, "bob", correct="Correct", helpful="2")
    for labels, match in [
        ({}, "choose the grade of at least one criterion"),
        ({"style": "1"}, "'style' is not a criterion"),
        ({"tone": "3"}, "'tone' has no grade of this item"),
    ]:
        with pytest.raises(Refused, match=match):
            review.settle_rubric(store, rita, pid, 4, labels)
    with pytest.raises(Refused, match="no grade yet"):
        review.settle_rubric(store, rita, pid, 5, {"helpful": "3"})
    card(store, pid, 6, "rita", correct="Correct", helpful="4")
    with pytest.raises(Refused, match="graded this item yourself"):
        review.settle_rubric(store, rita, pid, 6, {"helpful": "4"})
    with pytest.raises(Refused, match="grades a rubric"):
        review.settle(store, rita, pid, 4, "3")
    with pytest.raises(Refused):
        review.settle_rubric(store, ann, pid, 4, {"helpful": "3"})  # a grader may not review
    assert review_rows.reviews(store, pid).empty


def test_agreement_and_disagreements_per_criterion_primary_first(world):
    store, pid, people = world
    for position, bob_helpful in ((0, "4"), (1, "2"), (2, "5")):
        card(store, pid, position, "ann", correct="Correct", helpful="4")
        card(store, pid, position, "bob", correct="Correct" if position else "Incorrect", helpful=bob_helpful)
    review.settle_rubric(store, people["rita"], pid, 1, {"helpful": "3"})
    rows = review.agreement_by_criterion(store, people["rita"], pid)
    assert [r.criterion for r in rows] == ["helpful", "correct", "tone"]
    helpful, correct, tone = rows
    assert (helpful.agreement.items, helpful.disagreements, helpful.settled) == (3, 2, 1)
    assert helpful.agreement.level == "ordinal" and correct.agreement.level == "nominal"
    assert (correct.agreement.items, correct.disagreements, correct.settled) == (3, 1, 0)
    assert correct.agreement.observed == pytest.approx(2 / 3)
    assert (tone.agreement.items, tone.disagreements) == (0, 0)


def test_a_one_question_project_refuses_a_rubric_review_and_has_no_criterion_rows(prepared_project):
    store, pid = prepared_project
    rita = account_writes.create_account(store, "rita", auth.REVIEWER, password=PASSWORD)
    accounts.assign(store, pid, rita.id)
    store.add_grade(pid, 0, value=1.0, label="Correct", grader="ann")
    with pytest.raises(Refused, match="asks one question"):
        review.settle_rubric(store, rita, pid, 0, {"correct": "Correct"})
    assert review.agreement_by_criterion(store, rita, pid) == []


def positions(store, actor, pid, **filters) -> list[int]:
    return browser.page(store, actor, pid, RecordFilter(**filters), size=100).rows["position"].tolist()


def test_the_browser_reads_one_criterion_and_counts_items(world):
    store, pid, people = world
    val = people["val"]
    card(store, pid, 0, "ann", "fine", correct="Correct", helpful="4", tone="3")
    card(store, pid, 0, "bob", correct="Correct", helpful="2")  # helpful disagrees
    card(store, pid, 1, "ann", correct="Incorrect", helpful="4")
    review.settle_rubric(store, people["rita"], pid, 0, {"helpful": "3"})
    n_items = store.item_count(pid)
    everything = browser.page(store, val, pid, RecordFilter(), size=100)
    assert everything.total == n_items == len(everything.rows)  # one row per item, not per grade
    graded = browser.page(store, val, pid, RecordFilter(graded=True), size=100).rows
    assert graded["position"].tolist() == [0, 1]
    # the primary (helpful) by default: two graders of item 0, not five grades
    assert graded["grades"].tolist() == [2, 1] and graded["final"].fillna("").tolist() == ["3", ""]
    assert graded["graders"].tolist() == ["ann: 4, bob: 2", "ann: 4"]
    assert positions(store, val, pid, disagreement=True) == [0]
    assert positions(store, val, pid, disagreement=True, criterion="correct") == []
    assert positions(store, val, pid, label="Correct", criterion="correct") == [0]
    assert positions(store, val, pid, label="Incorrect", criterion="correct") == [1]
    assert positions(store, val, pid, label="4") == [0, 1]
    assert positions(store, val, pid, graded=True, criterion="tone") == [0]
    assert (
        positions(store, val, pid, reviewed=True) == [0]
        and positions(store, val, pid, reviewed=True, criterion="correct") == []
    )
    assert browser.page(store, val, pid, RecordFilter(grader="ann", commented=True), size=100).total == 1
    with pytest.raises(Refused, match="'style' is not a criterion"):
        browser.page(store, val, pid, RecordFilter(criterion="style"))
    # the item view lists every grade with its criterion
    grades = browser.record(store, val, pid, 0).grades
    assert sorted(zip(grades["grader"], grades["criterion"], grades["label"])) == [
        ("ann", "correct", "Correct"),
        ("ann", "helpful", "4"),
        ("ann", "tone", "3"),
        ("bob", "correct", "Correct"),
        ("bob", "helpful", "2"),
    ]
    table = pd.read_csv(io.BytesIO(browser.export_csv(store, val, pid, RecordFilter(graded=True, criterion="correct"))))
    assert table.columns.tolist()[:4] == ["position", "item", "stratum", "criterion"]
    assert table["criterion"].tolist() == ["correct", "correct"] and table["grades"].tolist() == [2, 1]
    events = audit.trail(store, pid)
    exported = events[events["action"] == audit.EXPORTED]["detail"].tolist()
    assert exported[-1]["filters"] == {"graded": True, "criterion": "correct"} and exported[-1]["rows"] == 2
