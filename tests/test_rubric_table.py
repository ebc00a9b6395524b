"""core.rubric_table: a rubric's table rows <-> the criteria settings, a criteria file, and the questions
fixed once a project has grades."""

from __future__ import annotations

import json
import math

import pytest

from core.errors import InputError
from core.rubric import ALL, rubric_from_settings
from core.rubric_table import check_questions_change, rubric_from_file, rubric_settings, table_rows
from core.scales import BINARY, LIKERT
from core.settings import ProjectSettings

ROWS = [
    {"name": "correct", "scale": "binary", "labels": "", "guidelines": "Is it right?", "required": True},
    {"name": "helpful", "scale": "likert", "labels": None, "guidelines": None, "required": True},
    {"name": "safe", "scale": "custom", "labels": "unsafe = 0; borderline = 0.5; safe = 1", "required": False},
]


def test_rows_become_the_criteria_settings_core_rubric_reads():
    settings = rubric_settings(ROWS, "helpful", ALL)
    assert settings["primary_criterion"] == "helpful" and settings["allocate_for"] == ALL
    correct, helpful, safe = settings["criteria"]
    assert correct == {"name": "correct", "scale": BINARY.to_settings(), "guidelines": "Is it right?", "required": True}
    assert helpful["scale"] == LIKERT.to_settings() and helpful["guidelines"] == ""
    assert safe["scale"] == {"kind": "custom", "labels": [["unsafe", 0.0], ["borderline", 0.5], ["safe", 1.0]]}
    assert safe["required"] is False
    rubric = ProjectSettings(**settings).rubric
    assert rubric.names == ("correct", "helpful", "safe") and rubric.primary == "helpful"


def test_stored_criteria_come_back_as_the_same_rows():
    criteria = rubric_settings(ROWS)["criteria"]
    rows = table_rows(criteria)
    assert [r["labels"] for r in rows] == ["", "", "unsafe = 0; borderline = 0.5; safe = 1"]
    assert rubric_settings(rows)["criteria"] == criteria
    assert table_rows([]) == []


def test_empty_cells_of_an_added_row_read_as_defaults():
    (criterion,) = rubric_settings([{"name": " tone ", "scale": math.nan, "labels": math.nan, "required": None}])[
        "criteria"
    ]
    assert criterion == {"name": "tone", "scale": BINARY.to_settings(), "guidelines": "", "required": True}


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({"name": "", "scale": "binary"}, "row 2: a criterion has no name"),
        ({"name": "x", "scale": "stars"}, "row 2: criterion 'x' has the scale 'stars'. Fix: use one of binary"),
        ({"name": "x", "scale": "custom"}, "row 2: criterion 'x' has the custom scale but no labels"),
        ({"name": "x", "scale": "likert", "labels": "a = 0; b = 1"}, "row 2: criterion 'x' has labels but the likert"),
        (
            {"name": "x", "scale": "custom", "labels": "a = 0; b = 2"},
            r"row 2: criterion 'x', label 2: value 2.0 .* \[0, 1\]",
        ),
        ({"name": "x", "scale": "custom", "labels": "a = 0; b"}, "row 2: criterion 'x', label 2: 'b' has no '='"),
        ({"name": "x", "scale": "custom", "labels": "a = 0"}, "row 2: criterion 'x', .*needs 2 to 9 labels"),
        ({"name": "correct", "scale": "likert"}, "row 2: criterion 'correct' appears twice"),
        ({"name": "x", "required": "maybe"}, "row 2: required = 'maybe' of criterion 'x'"),
    ],
)
def test_a_bad_row_is_named_with_its_fix(row, match):
    with pytest.raises(InputError, match=match) as caught:
        rubric_settings([ROWS[0], row])
    assert caught.value.fix


def test_the_primary_criterion_and_allocation_are_checked_by_core_rubric():
    with pytest.raises(InputError, match="primary criterion 'safe' is optional"):
        rubric_settings(ROWS, "safe")
    with pytest.raises(InputError, match="primary criterion 'nope' is not one of correct, helpful, safe"):
        rubric_settings(ROWS, "nope")
    with pytest.raises(InputError, match="allocate_for"):
        rubric_settings(ROWS, "", "some")
    with pytest.raises(InputError, match="no criterion"):
        rubric_settings([])


def test_a_json_file_holds_the_criteria_as_the_settings_store_them(tmp_path):
    stored = [{"name": "correct", "scale": {"kind": "binary"}}, {"name": "helpful", "scale": {"kind": "likert"}}]
    settings = rubric_from_file("rubric.json", json.dumps(stored), "helpful", ALL)
    assert [c["scale"] for c in settings["criteria"]] == [BINARY.to_settings(), LIKERT.to_settings()]
    assert rubric_from_settings(settings["criteria"], "helpful", ALL).primary == "helpful"
    for text, match in [
        ('[{"name": "a"}, {"name": "a"}]', "rubric.json, row 2: criterion 'a' appears twice"),
        ("{not json", "rubric.json: not JSON"),
        ('{"name": "a"}', "rubric.json: the file does not hold a list of criteria"),
        ('[{"name": "a", "scale": {"kind": "custom"}}]', "rubric.json, row 1: the scale of 'a' is malformed"),
    ]:
        with pytest.raises(InputError, match=match):
            rubric_from_file("rubric.json", text)


def test_a_csv_file_holds_the_table():
    text = "name,scale,labels,required\ncorrect,binary,,\nsafe,custom,unsafe = 0; safe = 1,no\n"
    settings = rubric_from_file("rubric.csv", text)
    assert [c["name"] for c in settings["criteria"]] == ["correct", "safe"]
    assert settings["criteria"][1]["required"] is False
    with pytest.raises(InputError, match="rubric.csv, row 2: criterion 'safe', label 2: 'safe' has no '='"):
        rubric_from_file("rubric.csv", "name,scale,labels\ncorrect,binary,\nsafe,custom,unsafe = 0; safe\n")
    with pytest.raises(InputError, match="rubric.csv: the header names 'colour'"):
        rubric_from_file("rubric.csv", "name,colour\ncorrect,red\n")


def test_the_questions_of_a_project_with_grades_cannot_change():
    before = ProjectSettings(**rubric_settings(ROWS)).to_dict()
    changed = {"criteria": rubric_settings(ROWS[:2])["criteria"]}
    check_questions_change(before, changed, 0)  # no grade yet: any change
    check_questions_change(before, {"criteria": before["criteria"], "guidelines": "new"}, 5)  # nothing asked changed
    with pytest.raises(InputError, match=r"has 5 grades, so its questions \(criteria\) cannot change"):
        check_questions_change(before, changed, 5)
    with pytest.raises(InputError, match=r"questions \(scale\)"):
        check_questions_change(ProjectSettings().to_dict(), {"scale": LIKERT.to_settings()}, 1)
