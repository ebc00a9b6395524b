"""The Grade page of a rubric project (AppTest): the card is sent every criterion, one press stores a grade
per criterion of the shown item, a card missing a required criterion or malformed is refused with the reason,
and an earlier card comes back filled in with the grader's answers. The browser half (keys, focus, Enter) is
tests/e2e/test_rubric_card.py."""

from __future__ import annotations

import pytest

from tests.card_press import card_data, press, shown

GRADE = "app_pages/grade.py"
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the **answer** right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "safe", "scale": {"kind": "custom", "labels": [["unsafe", 0], ["borderline", 0.5], ["safe", 1]]}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]
ANSWERS = {"correct": "Correct", "helpful": "4", "safe": "borderline"}


@pytest.fixture
def rubric_project(store, project_id) -> int:
    store.update_settings(project_id, {"criteria": CRITERIA})
    return project_id


def test_the_card_asks_every_criterion_and_one_press_stores_them_all(open_app, store, rubric_project):
    at = open_app(GRADE, project_id=rubric_project)
    data = card_data(at)
    assert data["choices"] is None
    guidelines = " ".join(h.proto.body for h in at.sidebar.get("html"))
    assert "each criterion's are on the card" in guidelines  # the project has none of its own, 'correct' has
    assert [(c["name"], c["required"]) for c in data["criteria"]] == [
        ("correct", True),
        ("helpful", True),
        ("safe", True),
        ("tone", False),
    ]
    assert data["criteria"][2]["choices"] == [
        {"label": "unsafe", "key": "1"},
        {"label": "borderline", "key": "2"},
        {"label": "safe", "key": "3"},
    ]
    assert "<strong>answer</strong>" in data["criteria"][0]["guidelines_html"]
    first = shown(at)
    ack = press(at, "grade", labels=ANSWERS, comment="fine")
    assert ack["status"] == "saved"  # naming the item: the answer is shown beside the next item's id
    assert ack["message"] == f"saved: correct Correct, helpful 4, safe borderline, item {first['item_id']}"
    grades = store.rubric_grades(rubric_project)
    assert grades[["position", "criterion", "label", "comment"]].values.tolist() == [
        [first["position"], name, label, "fine"] for name, label in ANSWERS.items()
    ]
    assert grades["created_at"].nunique() == 1  # one transaction
    assert shown(at)["item_id"] != first["item_id"]


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        ({"correct": "Correct", "helpful": "4"}, "criterion 'safe' has no grade"),
        ({**ANSWERS, "helpful": "Correct"}, "'Correct' is not a grade of criterion 'helpful'"),
        (None, "the card's answers are not one label per criterion"),
        ({"correct": ["Correct"]}, "the card's answers are not one label per criterion"),
    ],
)
def test_a_card_missing_or_malformed_is_refused_with_the_reason(open_app, store, rubric_project, labels, reason):
    at = open_app(GRADE, project_id=rubric_project)
    first = shown(at)
    ack = press(at, "grade", labels=labels)
    assert ack["status"] == "error" and reason in ack["message"], ack
    assert store.rubric_grades(rubric_project).empty and shown(at)["token"] == first["token"]


def test_an_earlier_card_comes_back_with_its_answers_and_changes_whole(open_app, store, rubric_project):
    at = open_app(GRADE, project_id=rubric_project)
    first = shown(at)
    press(at, "grade", labels={**ANSWERS, "tone": "2"})
    assert press(at, "back")["status"] == "review"
    again = shown(at)
    assert again["item_id"] == first["item_id"] and again["reviewing"]
    assert again["previous_labels"] == {**ANSWERS, "tone": "2"}
    same = press(at, "grade", labels={**ANSWERS, "tone": "2"})  # sent back as it was: no change to record
    assert same["status"] == "unchanged" and not shown(at)["reviewing"]
    assert press(at, "back")["status"] == "review"
    assert press(at, "grade", labels={**ANSWERS, "correct": "Incorrect"})["status"] == "changed"
    grades = store.rubric_grades(rubric_project).set_index("criterion")
    assert grades["label"].to_dict() == {**ANSWERS, "correct": "Incorrect"}  # tone, left out, is withdrawn
    assert not shown(at)["reviewing"]
