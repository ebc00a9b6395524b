"""Projects page: a rubric defined when a project is created, and changed while the project has no grades."""

from __future__ import annotations

import pytest

from core.scales import LIKERT

HELPFUL = {"name": "helpful", "scale": "likert", "required": True}
SAFE = {"name": "safe", "scale": "custom", "labels": "unsafe = 0; borderline = 0.5; safe = 1", "required": False}


@pytest.fixture
def new_form(open_app, uploads, monkeypatch, tmp_path):
    """The Projects page with no project open, its new-project form filled and the rubric chosen."""
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(tmp_path / "nothing"))
    monkeypatch.setenv("ACTIVEGRADE_APP_WORKER", "0")  # the preparation is not what these tests look at
    at = open_app()
    at.text_input(key="new_name").set_value("Rubric")
    pool = uploads["pool.jsonl"]
    at.file_uploader(key="new_pool").set_value((pool[0], pool[1], "application/octet-stream"))
    at.checkbox(key="new_rubric").check().run()
    assert not at.exception, at.exception
    return at


def edit_criteria(at, edited: dict | None = None, added: list | None = None) -> None:
    """Seed the criteria table's edits (AppTest applies no cell edits itself) and run the page."""
    editor = at.data_editor[0]
    at.session_state[editor.key] = {"edited_rows": edited or {}, "added_rows": added or [], "deleted_rows": []}
    at.run()
    assert not at.exception, at.exception


def test_a_project_is_created_with_a_three_criterion_rubric(new_form, store):
    at = new_form
    assert at.data_editor[0].value["name"].tolist() == ["correct"]  # a rubric starts from today's question
    edit_criteria(at, {0: {"guidelines": "Is the final answer right?"}}, [HELPFUL, SAFE])
    assert at.selectbox(key="new_primary").options == ["correct", "helpful", "safe"]
    at.selectbox(key="new_primary").set_value("helpful")
    at.selectbox(key="new_allocate_for").set_value("all")
    at.button(key="create").click().run()
    assert not at.error, [e.value for e in at.error]
    settings = store.project_by_name("Rubric").settings
    assert [c["name"] for c in settings.criteria] == ["correct", "helpful", "safe"]
    assert settings.criteria[0]["guidelines"] == "Is the final answer right?"
    assert settings.criteria[1]["scale"] == LIKERT.to_settings()
    assert settings.criteria[2] == {
        "name": "safe",
        "scale": {"kind": "custom", "labels": [["unsafe", 0.0], ["borderline", 0.5], ["safe", 1.0]]},
        "guidelines": "",
        "required": False,
    }
    assert (settings.primary_criterion, settings.allocate_for) == ("helpful", "all")
    assert settings.rubric.primary == "helpful" and settings.grading_scale.kind == "likert"
    headline = next(c.value for c in at.caption if c.value.startswith("backend"))  # markdown-escaped
    assert all(part in headline for part in ("rubric of 3 criteria", "helpful primary", "allocated for all"))


@pytest.mark.parametrize(
    ("added", "message"),
    [
        ([HELPFUL, {"name": "correct", "scale": "binary"}], "row 3: criterion 'correct' appears twice"),
        ([{**SAFE, "labels": "unsafe = 0; safe = yes"}], "row 2: criterion 'safe', label 2: 'yes' is not a number"),
    ],
)
def test_a_bad_criterion_shows_its_row_and_the_fix_and_stores_nothing(new_form, store, added, message):
    at = new_form
    edit_criteria(at, added=added)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0] and "Fix:" in errors[0]
    assert at.button(key="create").disabled
    assert store.projects() == []


def test_the_questions_change_while_the_project_has_no_grades_and_are_fixed_once_it_has(open_app, store, project_id):
    at = open_app(project_id=project_id)
    key = f"questions-{project_id}"
    assert at.button(key=f"{key}_save").disabled  # one question, as stored: nothing to save
    at.checkbox(key=f"{key}_rubric").check().run()
    edit_criteria(at, added=[HELPFUL])
    at.button(key=f"{key}_save").click().run()
    assert not at.error, [e.value for e in at.error]
    assert [c["name"] for c in store.project(project_id).settings.criteria] == ["correct", "helpful"]

    store.add_grade(project_id, 0, value=1.0, label="Correct", grader="ann")
    at.run()
    assert any("Fixed: the project has 1 item graded (1 grade, keyed by criterion)" in c.value for c in at.caption)
    assert not any(b.key == f"{key}_save" for b in at.button)
    assert not at.data_editor


def test_one_questions_scale_changes_and_a_rubric_turned_off_asks_for_its_scale(open_app, store, project_id):
    at = open_app(project_id=project_id)
    key = f"questions-{project_id}"
    at.radio(key=f"{key}_scale").set_value("likert").run()
    at.button(key=f"{key}_save").click().run()
    assert not at.error, [e.value for e in at.error]
    assert store.project(project_id).settings.scale == LIKERT.to_settings()
    at.checkbox(key=f"{key}_rubric").check().run()
    edit_criteria(at, added=[HELPFUL])
    at.button(key=f"{key}_save").click().run()
    assert store.project(project_id).settings.rubric is not None
    at.checkbox(key=f"{key}_rubric").uncheck().run()
    assert at.radio(key=f"{key}_scale").value == "likert"  # the stored scale, offered again
    at.radio(key=f"{key}_scale").set_value("custom").run()
    at.text_area(key=f"{key}_custom_labels").set_value("No = 0\nYes = 1").run()
    at.button(key=f"{key}_save").click().run()
    settings = store.project(project_id).settings
    assert settings.rubric is None and [label for label, _ in settings.scale["labels"]] == ["No", "Yes"]
