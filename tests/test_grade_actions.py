"""core.services.grade_actions: a press acts on exactly the item it names, for a user the database still allows,
or not at all. The showing tokens that bind a press to its item: tests/test_showings.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.errors import InputError
from core.scales import BINARY
from core.services import account_writes, audit, auth, grade_actions, grading, reservations
from core.stats.allocation import design_from_items
from core.store import accounts

DATA = Path(__file__).parent / "data" / "app"
PASSWORD = "correct horse battery"


@pytest.fixture
def world(prepared_project):
    store, pid = prepared_project
    ann = account_writes.create_account(store, "ann", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, ann.id)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    return store, pid, ann, design


def test_a_grade_goes_to_the_named_item_only(world):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    outcome = grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment=" fine ")
    assert outcome.status == "saved"
    grades = store.grades(pid)
    assert grades[["position", "label", "comment"]].values.tolist() == [[held, "Correct", "fine"]]
    again = grade_actions.grade(store, ann, pid, held, "Incorrect", seconds=1.0)  # a change of her own grade
    assert again.status == "changed" and store.grade_of(pid, held, "ann")["comment"] == "fine"
    assert len(store.grades(pid)) == 1


def test_a_grade_after_the_hold_lapsed_is_saved_unless_another_grader_took_the_item(world):
    """A long read: the card's hold lapses after 10 minutes, and the grade is still the item's while nobody else
    took it (grader's review: it was dropped as 'ignored' and the item came back)."""
    from sqlalchemy import update

    from core.store.models import Reservation, utcnow

    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    with store.session() as s, s.begin():
        s.execute(update(Reservation).values(expires_at=utcnow()))  # lapsed
    assert grade_actions.grade(store, ann, pid, held, "Correct", seconds=700.0).status == "saved"
    other = reservations.claim(store, pid, design, 0, "ann")
    with store.session() as s, s.begin():
        s.execute(update(Reservation).values(expires_at=utcnow()))
    assert reservations.claim(store, pid, design, 0, "bob") == other  # the lapsed item went to bob
    with pytest.raises(grade_actions.Refused, match="another grader"):
        grade_actions.grade(store, ann, pid, other, "Correct", seconds=700.0)
    assert store.grades(pid)["position"].tolist() == [held]


def test_too_fast_and_held_by_another_are_not_stored(world, caplog):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    early = grade_actions.grade(store, ann, pid, held, "Correct", seconds=0.1)
    assert early.status == "too_fast" and "minimum viewing time of 0.3 s" in early.message  # what to wait for
    theirs = reservations.claim(store, pid, design, 0, "bob")
    with caplog.at_level(logging.INFO, logger="core.services.grade_actions"):
        with pytest.raises(grade_actions.Refused, match="another grader"):
            grade_actions.grade(store, ann, pid, theirs, "Correct", seconds=1.0)
    assert f"project {pid}: grade refused for ann: another grader has this item now" in caplog.text
    with caplog.at_level(logging.INFO, logger="core.services.grade_actions"):
        with pytest.raises(
            grade_actions.Refused, match="not a grade of this project: use one of 'Correct', 'Incorrect'"
        ):
            grade_actions.grade(store, ann, pid, held, "Maybe", seconds=1.0)
    assert store.grades(pid).empty
    # the log names the field refused, never the grade sent (the docs say no grade is logged)
    assert f"project {pid}: grade refused for ann: the label sent was not taken" in caplog.text
    assert "Maybe" not in caplog.text


def test_a_skip_sooner_than_the_minimum_viewing_time_is_not_carried_out(world):
    """A skip pressed just after a grade, meant for the card before, would pass over an item never seen."""
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    early = grade_actions.skip(store, ann, pid, held, seconds=0.05)
    assert early.status == "too_fast" and "press again" in early.message
    assert held not in store.skipped_positions(pid)
    assert grade_actions.skip(store, ann, pid, held, seconds=1.0).status == "skipped"
    assert held in store.skipped_positions(pid)


def test_a_change_to_the_grade_already_stored_writes_nothing(world):
    """Back, then the same grade sent again: "unchanged", no retracted row and no audit event of a change."""
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    assert grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment="ok").status == "saved"
    rows = len(store.grades(pid))
    for comment in ("", "ok"):  # none keeps the comment; the same one is the same card
        same = grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment=comment)
        assert same.status == "unchanged" and same.message == "unchanged: Correct, as it was"
    assert grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment="new").status == "changed"
    assert len(store.grades(pid)) == rows and store.grade_of(pid, held, "ann")["comment"] == "new"


@pytest.mark.parametrize(("min_view_s", "seconds", "status"), [(0.0, 0.05, "saved"), (1.0, 0.5, "too_fast")])
def test_the_minimum_viewing_time_is_the_projects(world, min_view_s, seconds, status):
    store, pid, ann, design = world
    store.update_settings(pid, {"min_view_s": min_view_s})
    held = reservations.claim(store, pid, design, 0, "ann")
    assert grade_actions.grade(store, ann, pid, held, "Correct", seconds=seconds).status == status
    assert len(store.grades(pid)) == (status == "saved")


@pytest.mark.parametrize(
    "take_away",
    [
        lambda store, pid, ann: accounts.set_active(store, "ann", False),
        lambda store, pid, ann: accounts.unassign(store, pid, ann.id),
        lambda store, pid, ann: account_writes.set_role(store, "ann", auth.VIEWER),
    ],
    ids=["disabled", "unassigned", "demoted"],
)
def test_access_taken_away_is_checked_at_every_press(world, take_away):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    take_away(store, pid, ann)
    with pytest.raises(grade_actions.Refused):
        grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    with pytest.raises(grade_actions.Refused):
        grade_actions.skip(store, ann, pid, held, seconds=1.0)
    with pytest.raises(grade_actions.Refused):
        grade_actions.acting_grader(store, None, pid)
    assert store.grades(pid).empty


def test_a_comment_on_a_graded_item_keeps_the_grade_and_is_audited(world):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    with pytest.raises(grade_actions.Refused, match="grade the item first"):
        grade_actions.comment(store, ann, pid, held, "early")
    grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    grade_actions.comment(store, ann, pid, held, "second thoughts")
    grades = store.grades(pid, include_retracted=True)
    assert grades[["label", "comment"]].values.tolist() == [["Correct", "second thoughts"]]  # no new grade row
    trail = accounts.events(store, pid)
    assert trail["action"].tolist() == [grade_actions.COMMENTED]
    assert trail.iloc[0]["detail"] == {"position": held, "before": "", "after": "second thoughts"}


def test_skip_undo_and_reopening_a_skipped_item(world):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, held, seconds=1.0)
    assert store.skipped_by(pid, "ann") == [held]
    assert grade_actions.reopen(store, ann, pid, held).status == "reopened"
    assert accounts.held(store, pid, "ann").position == held
    grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    assert store.skipped_by(pid, "ann") == []
    assert grade_actions.reopen(store, ann, pid, held).status == "review"
    assert grade_actions.undo(store, ann, pid).position == held
    assert store.grades(pid).empty and accounts.held(store, pid, "ann").position == held


def test_a_skipped_item_goes_to_another_grader_never_back_to_its_skipper(world):
    """The skipper of one of the last items got it back at their next card, so a bot that skips what it cannot
    grade looped on it while every other grader was told to wait for its hold (an integrator's review)."""
    store, pid, ann, design = world
    skipped = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, skipped, seconds=1.0)
    while (position := reservations.claim(store, pid, design, 0, "ann")) is not None:
        assert position != skipped
        grade_actions.grade(store, ann, pid, position, "Correct", seconds=1.0)
    assert len(store.grades(pid)) == design.N - 1  # every item but the one she skipped
    bob = account_writes.create_account(store, "bob", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, bob.id)
    assert reservations.claim(store, pid, design, 0, "bob") == skipped


def test_undo_after_a_skip_brings_the_skipped_item_back_and_the_next_undo_the_grade_before(world):
    """Undo undoes the last thing the grader did: S then U is the skipped item back (it undid the grade before
    the skip); U again withdraws that grade."""
    store, pid, ann, design = world
    first = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.grade(store, ann, pid, first, "Correct", seconds=1.0)
    second = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, second, seconds=1.0)
    third = reservations.claim(store, pid, design, 0, "ann")  # the next card, as the page shows it
    assert third not in (first, second)
    undone = grade_actions.undo(store, ann, pid)
    assert (undone.position, undone.message) == (second, "undone: the skipped item is back")
    assert accounts.held(store, pid, "ann").position == second and store.grade_of(pid, first, "ann") is not None
    last = accounts.events(store, pid).iloc[-1]  # an undo is a change in the trail, whatever it undid
    assert (last["action"], last["detail"]) == (audit.UNDO, {"position": second, "undid": "skip"})
    # an undone skip is no skip: it neither holds the stopping rule's bound nor sits in the grader's list
    assert second not in store.skipped_positions(pid) and store.skipped_by(pid, "ann") == []
    again = grade_actions.undo(store, ann, pid)
    assert again.position == first and store.grade_of(pid, first, "ann") is None
    assert accounts.held(store, pid, "ann").position == first


def test_each_undo_after_skips_takes_back_one_more_skip(world):
    """S on A, S on B, U, U: B comes back, then A (an undo stack), and neither counts as skipped any more."""
    store, pid, ann, design = world
    a = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, a, seconds=1.0)
    b = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, b, seconds=1.0)
    reservations.claim(store, pid, design, 0, "ann")
    assert store.skipped_positions(pid) == {a, b}
    assert grade_actions.undo(store, ann, pid).position == b
    assert grade_actions.undo(store, ann, pid).position == a
    assert accounts.held(store, pid, "ann").position == a and store.skipped_positions(pid) == set()
    with pytest.raises(grade_actions.Refused, match="no grade or skip to take back"):
        grade_actions.undo(store, ann, pid)


def test_a_skip_is_placed_in_the_grading_order_by_the_grades_given_before_it(world):
    """Store.skip_steps: each skipped item -> the items graded when it was first skipped, whoever grades it
    later (the reading dates a stop the skips held by it); an undone skip is gone from it."""
    store, pid, ann, design = world
    for _ in range(3):
        grade_actions.grade(store, ann, pid, reservations.claim(store, pid, design, 0, "ann"), "Correct", seconds=1.0)
    skipped = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, skipped, seconds=1.0)
    grade_actions.grade(store, ann, pid, reservations.claim(store, pid, design, 0, "ann"), "Correct", seconds=1.0)
    assert store.skip_steps(pid) == {skipped: 3}
    assert grade_actions.reopen(store, ann, pid, skipped).status == "reopened"
    grade_actions.grade(store, ann, pid, skipped, "Incorrect", seconds=1.0)
    assert store.skip_steps(pid) == {skipped: 3} and skipped not in store.skipped_positions(pid)
    other = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.skip(store, ann, pid, other, seconds=1.0)
    reservations.claim(store, pid, design, 0, "ann")
    grade_actions.undo(store, ann, pid)
    assert store.skip_steps(pid) == {skipped: 3}


def test_every_path_that_changes_a_grade_is_audited(world):
    """Below the grade page too (the services the load tests use, and the store itself): a changed grade, an undo,
    a comment and a skip each write their audit event with the change; a first grade carries its own trace."""
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    reservations.record_grade(store, pid, held, BINARY, "Correct", "ann")
    reservations.submit(store, pid, held, BINARY, "Incorrect", "ann")
    store.add_grade(pid, held, value=1.0, label="Correct", grader="ann")
    store.set_comment(pid, held, "ann", "checked twice")
    assert store.retract_last_grade(pid, "ann").position == held  # the change taken back: Incorrect stands again
    assert store.grade_of(pid, held, "ann")["label"] == "Incorrect"
    store.add_skip(pid, held, "ann")
    trail = audit.trail(store, pid)
    assert trail[["actor", "action"]].values.tolist() == [
        ["ann", audit.GRADE_CHANGED],
        ["ann", audit.GRADE_CHANGED],
        ["ann", audit.COMMENTED],
        ["ann", audit.UNDO],
        ["ann", audit.SKIP],
    ]
    assert trail["detail"].tolist()[:2] == [
        {"position": held, "before": "Correct", "after": "Incorrect"},
        {"position": held, "before": "Incorrect", "after": "Correct"},
    ]
    assert trail["detail"].tolist()[3] == {"position": held, "restored": 1}


def test_a_grade_action_writes_its_audit_event_once(world):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    grade_actions.grade(store, ann, pid, held, "Incorrect", seconds=1.0)
    grade_actions.comment(store, ann, pid, held, "hm")
    grade_actions.undo(store, ann, pid)
    actions = audit.trail(store, pid)["action"].tolist()
    assert actions == [audit.GRADE_CHANGED, grade_actions.COMMENTED, audit.UNDO]


def test_a_comment_over_the_limit_is_refused_and_nothing_is_stored(world):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    long = "x" * (grading.MAX_COMMENT_CHARS + 1)
    with pytest.raises(InputError, match="the comment has 5,001 characters, more than the 5,000 allowed"):
        grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment=long)
    assert store.grades(pid).empty
    grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0, comment=" " + "y" * 5000 + " ")
    with pytest.raises(InputError, match="the comment has"):
        grade_actions.comment(store, ann, pid, held, long)
    assert store.grade_of(pid, held, "ann")["comment"] == "y" * 5000
    assert not any(long in str(d) for d in accounts.events(store)["detail"])


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), 1e27])
def test_a_viewing_time_that_is_no_measurement_is_refused(world, seconds):
    store, pid, ann, design = world
    held = reservations.claim(store, pid, design, 0, "ann")
    with pytest.raises(InputError, match="the viewing time"):
        grade_actions.grade(store, ann, pid, held, "Correct", seconds=seconds)
    assert store.grades(pid).empty


def test_the_browsers_viewing_time_is_bounded_by_the_servers():
    assert grading.viewing_seconds(4000, 10.0) == 4.0
    assert grading.viewing_seconds(1e8, 2.5) == 2.5  # a forged long view: no longer than since the card was released
    for forged in (float("nan"), float("inf"), -5, 1e30, "1000", None, True):
        with pytest.raises(InputError, match="the viewing time"):
            grading.viewing_seconds(forged, 10.0)


def test_the_page_claims_its_item_through_a_checked_claim(world):
    store, pid, ann, design = world
    position = grade_actions.claim(store, ann, pid, design)
    assert position == reservations.claim(store, pid, design, 0, "ann")  # the same reservation, renewed
    viewer = account_writes.create_account(store, "vic", auth.VIEWER, password=PASSWORD)
    with pytest.raises(grade_actions.Refused):
        grade_actions.claim(store, viewer, pid, design)
    with pytest.raises(grade_actions.Refused, match="signed out"):
        grade_actions.claim(store, None, pid, design)


def test_back_opens_the_card_before_the_one_shown():
    assert grading.card_before([], None) is None
    assert grading.card_before([4, 7, 9], None) == 9  # from the queue's card: the last one graded
    assert grading.card_before([4, 7, 9], 9) == 7 and grading.card_before([4, 7, 9], 4) == 4  # the first stays
    assert grading.card_before([0, 3], 3) == 0  # position 0 is a card like any other
