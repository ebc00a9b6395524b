"""Rubrics: a project's criteria in its settings, one card's grades (a grade per criterion) stored in one
transaction on the item shown, and every reader of grades reading one criterion (the primary by default)."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.rubric import ALL, rubric_from_settings
from core.services import account_writes, auth, grade_actions, project_actions, reservations
from core.settings import ProjectSettings
from core.stats.allocation import design_from_items
from core.store import accounts

CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the answer right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "safe", "scale": {"kind": "custom", "labels": [["unsafe", 0], ["borderline", 0.5], ["safe", 1]]}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]


def test_settings_read_a_rubric_and_its_primary_criterion():
    settings = ProjectSettings(criteria=CRITERIA, primary_criterion="helpful", allocate_for=ALL)
    rubric = settings.rubric
    assert rubric.names == ("correct", "helpful", "safe", "tone") and rubric.primary == "helpful"
    assert settings.design_criterion == "helpful" and settings.grading_scale.kind == "likert"
    assert ProjectSettings().rubric is None and ProjectSettings().design_criterion == ""
    assert ProjectSettings(criteria=CRITERIA).design_criterion == "correct"  # the first by default
    assert ProjectSettings.from_dict(settings.to_dict()).rubric == rubric


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"criteria": [{"name": "a"}, {"name": "a"}]}, "appears twice"),
        ({"criteria": [{"name": ""}]}, "has no name"),
        ({"criteria": [{"name": "a", "scale": {"kind": "custom"}}]}, "malformed"),
        ({"criteria": [{"name": "a"}], "primary_criterion": "b"}, "not one of"),
        ({"criteria": CRITERIA, "primary_criterion": "tone"}, "optional"),
        ({"criteria": [{"name": "a"}], "allocate_for": "some"}, "allocate_for"),
        ({"criteria": [{"name": "a"}], "targets": ["x", "y"]}, "rubric of 1 criteria for a pool .* 2 models"),
        ({"primary_criterion": "a"}, "without criteria"),
        # a typo left the criterion required without a word (an integrator's review)
        ({"criteria": [{"name": "a", "requred": False}]}, "unknown key 'requred'.*did you mean 'required'"),
        ({"criteria": [{"name": "a", "guideline": "x"}]}, "unknown key 'guideline'.*did you mean 'guidelines'"),
    ],
)
def test_a_malformed_rubric_is_refused_with_its_fix(changes, match):
    with pytest.raises(InputError, match=match):
        ProjectSettings(**changes)


def test_card_values_check_every_required_criterion_and_each_scale():
    rubric = rubric_from_settings(CRITERIA)
    card = rubric.card_values({"correct": "Correct", "helpful": "4", "safe": "borderline"})
    assert card == [("correct", 1.0, "Correct"), ("helpful", 0.75, "4"), ("safe", 0.5, "borderline")]
    for labels, match in [
        ({"correct": "Correct", "helpful": "4"}, "'safe' has no grade"),
        ({"correct": "Correct", "helpful": "6", "safe": "safe"}, "'6' is not a grade of criterion 'helpful'"),
        ({"correct": "Correct", "helpful": "4", "safe": "safe", "style": "1"}, "'style' is not a criterion"),
    ]:
        with pytest.raises(InputError, match=match):
            rubric.card_values(labels)


@pytest.fixture
def rubric_world(prepared_project):
    store, pid = prepared_project
    store.update_settings(pid, {"criteria": CRITERIA, "seed": 3})
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    design = design_from_items(store.load_items(pid), stratify_by=None)
    return store, pid, ann, design


ANSWERS = {"correct": "Incorrect", "helpful": "2", "safe": "safe"}


def test_a_card_stores_a_grade_per_criterion_on_the_item_shown(rubric_world):
    store, pid, ann, design = rubric_world
    held = reservations.claim(store, pid, design, 3, "ann")
    outcome = grade_actions.grade_rubric(store, ann, pid, held, ANSWERS, seconds=1.0, comment="terse")
    assert outcome.status == "saved"
    grades = store.rubric_grades(pid)
    assert set(grades["position"]) == {held}
    assert grades[["criterion", "label", "value", "comment"]].values.tolist() == [
        ["correct", "Incorrect", 0.0, "terse"],
        ["helpful", "2", 0.25, "terse"],
        ["safe", "safe", 1.0, "terse"],
    ]
    # every reader reads one criterion: the primary's grade by default, another's when asked
    assert store.graded_positions(pid) == {held: 0.0}
    assert store.graded_positions(pid, "helpful") == {held: 0.25}
    assert len(store.grades(pid)) == 1 and store.grader_positions(pid, "ann") == [held]
    assert accounts.grade_count(store, pid, held) == 1  # one grader, three grades
    # the next claim is a new item: the card counts as one graded item
    assert reservations.claim(store, pid, design, 3, "ann") != held


def test_a_changed_card_replaces_every_grade_and_undo_brings_back_the_whole_card_before(rubric_world):
    store, pid, ann, design = rubric_world
    held = reservations.claim(store, pid, design, 3, "ann")
    grade_actions.grade_rubric(store, ann, pid, held, {**ANSWERS, "tone": "5"}, seconds=1.0)
    again = grade_actions.grade_rubric(store, ann, pid, held, {**ANSWERS, "correct": "Correct"}, seconds=1.0)
    assert again.status == "changed" and again.message.endswith("; withdrawn: tone")
    grades = store.rubric_grades(pid)
    assert sorted(grades["criterion"]) == ["correct", "helpful", "safe"]  # the optional one left out: withdrawn
    assert grades.set_index("criterion").at["correct", "label"] == "Correct"
    store.set_comment(pid, held, "ann", "second look")
    assert set(store.rubric_grades(pid)["comment"]) == {"second look"}
    assert grade_actions.undo(store, ann, pid).position == held  # the change taken back: the first card stands
    restored = store.rubric_grades(pid).set_index("criterion")["label"].to_dict()
    assert restored == {**ANSWERS, "tone": "5"}  # the optional answer the change withdrew, back too
    assert grade_actions.undo(store, ann, pid).position == held  # and the card itself, one undo further back
    assert store.rubric_grades(pid).empty


def test_a_bad_card_stores_nothing_and_a_single_label_is_refused(rubric_world):
    store, pid, ann, design = rubric_world
    held = reservations.claim(store, pid, design, 3, "ann")
    with pytest.raises(grade_actions.Refused, match="has no grade"):
        grade_actions.grade_rubric(store, ann, pid, held, {"correct": "Correct"}, seconds=1.0)
    with pytest.raises(grade_actions.Refused, match="rubric"):
        grade_actions.grade(store, ann, pid, held, "Correct", seconds=1.0)
    assert store.rubric_grades(pid).empty


def test_a_one_question_project_refuses_a_rubric_card(prepared_project):
    store, pid = prepared_project
    ann = account_writes.create_account(store, "ann", auth.GRADER, password="correct horse battery")
    accounts.assign(store, pid, ann.id)
    with pytest.raises(grade_actions.Refused, match="one question"):
        grade_actions.grade_rubric(store, ann, pid, 0, ANSWERS, seconds=1.0)


def test_a_graded_project_keeps_its_questions_whoever_asks(rubric_world):
    """project_actions.change_settings, behind the page, the API and the CLI, refuses new questions once a card
    is saved, and saves other settings as before."""
    store, pid, ann, design = rubric_world
    admin = account_writes.create_account(store, "root", auth.ADMIN, password="correct horse battery")
    held = reservations.claim(store, pid, design, 3, "ann")
    grade_actions.grade_rubric(store, ann, pid, held, ANSWERS, seconds=1.0)
    with pytest.raises(InputError, match=r"has 3 grades, so its questions \(criteria\) cannot change"):
        project_actions.change_settings(store, admin, pid, {"criteria": CRITERIA[:2]})
    with pytest.raises(InputError, match="primary_criterion"):
        project_actions.change_settings(store, admin, pid, {"primary_criterion": "helpful"})
    assert project_actions.change_settings(store, admin, pid, {"guidelines": "new words"}).status == "changed"
    assert store.project(pid).settings.criteria == CRITERIA
