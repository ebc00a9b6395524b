"""Grade page flows: grade, skip, undo, back and change, comment and time recorded."""

from __future__ import annotations

GRADE = "app_pages/grade.py"


def grade_button(at, label: str):
    """The grade button with this label (its key carries the item's position)."""
    return next(b for b in at.button if b.key and b.key.startswith("grade-") and b.label == label)


def shown_prompt(at) -> str:
    texts = [m.value for m in at.markdown]
    return texts[texts.index("**Prompt**") + 1]


def test_grade_records_label_grader_time_and_moves_on(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown_prompt(at)
    at.text_area[0].set_value("looks right")
    grade_button(at, "Correct").click().run()
    grades = store.grades(project_id)
    assert grades[["label", "value", "grader", "comment"]].values.tolist() == [["Correct", 1.0, "ann", "looks right"]]
    assert grades.loc[0, "seconds"] >= 0
    assert shown_prompt(at) != first
    assert "1 of 40 items graded" in at.get("progress")[0].proto.text


def test_skip_returns_item_to_queue_ungraded(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown_prompt(at)
    at.button(key="skip").click().run()
    assert store.grades(project_id).empty
    assert len(store.skipped_positions(project_id)) == 1
    assert shown_prompt(at) != first


def test_undo_brings_back_the_item_ungraded(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown_prompt(at)
    grade_button(at, "Incorrect").click().run()
    at.button(key="undo").click().run()
    assert store.grades(project_id).empty
    assert shown_prompt(at) == first


def test_back_then_change_an_earlier_grade(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown_prompt(at)
    grade_button(at, "Correct").click().run()
    grade_button(at, "Correct").click().run()
    waiting = shown_prompt(at)
    at.button(key="back").click().run()
    at.button(key="back").click().run()
    assert shown_prompt(at) == first and "Reviewing" in at.info[0].value
    grade_button(at, "Incorrect").click().run()
    labels = store.grades(project_id).sort_values("id")["label"].tolist()
    assert labels == ["Correct", "Incorrect"]  # the first item's grade was replaced, not duplicated
    assert len(store.grades(project_id, include_retracted=True)) == 3
    assert "Reviewing" not in " ".join(i.value for i in at.info)  # back to the queue, where the grader left it
    assert shown_prompt(at) == waiting


def test_back_to_the_queue_without_changing(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    grade_button(at, "Correct").click().run()
    waiting = shown_prompt(at)
    at.button(key="back").click().run()
    assert "Reviewing" in at.info[0].value
    at.button(key="resume").click().run()
    assert shown_prompt(at) == waiting and len(store.grades(project_id)) == 1


def test_a_second_session_resumes_where_the_project_stands(open_app, store, project_id):
    first = open_app(GRADE, project_id=project_id)
    grade_button(first, "Correct").click().run()
    now_showing = shown_prompt(first)
    second = open_app(GRADE, project_id=project_id)  # the same grader in another session: the same item
    assert shown_prompt(second) == now_showing
    assert "1 of 40 items graded" in second.get("progress")[0].proto.text
    other = open_app(GRADE, project_id=project_id, grader="bob")  # another grader: never the same item at once
    assert shown_prompt(other) != now_showing


def test_reference_hidden_and_signals_shown_only_when_allowed(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    assert [e.label for e in at.expander].count("Reference answer") == 1
    assert not [c for c in at.caption if "Surrogate signals" in c.value]
    store.update_settings(project_id, {"show_reference": False, "show_signals": True})
    at = open_app(GRADE, project_id=project_id)
    assert "Reference answer" not in [e.label for e in at.expander]
    assert [c for c in at.caption if "Surrogate signals" in c.value]


def test_grading_needs_a_name(open_app, project_id):
    at = open_app(GRADE, project_id=project_id, grader="")
    assert "Type your name" in at.warning[0].value
    assert not [b for b in at.button if b.key and b.key.startswith("grade-")]


def test_a_grade_faster_than_anyone_reads_is_ignored(open_app, store, project_id, monkeypatch):
    monkeypatch.setattr("core.grading.MIN_VIEW_S", 60.0)
    at = open_app(GRADE, project_id=project_id)
    first = shown_prompt(at)
    grade_button(at, "Correct").click().run()
    assert store.grades(project_id).empty and shown_prompt(at) == first
    assert "ignored a grade" in at.get("progress")[0].proto.text


def test_items_held_by_others_are_not_called_all_graded(open_app, store, project_id):
    from core import reservations
    from core.allocation import design_from_items
    from core.scales import BINARY

    design = design_from_items(store.load_items(project_id), stratify_by=None)
    held = reservations.claim(store, project_id, design, 0, "bob")  # bob is on one item
    for position in set(range(design.N)) - {held}:
        reservations.grade(store, project_id, position, BINARY, "Correct", "cy")
    at = open_app(GRADE, project_id=project_id)
    assert "the item left is being graded by others" in at.info[0].value and not at.success
    reservations.grade(store, project_id, held, BINARY, "Correct", "bob")
    at.run()
    assert at.success[0].value.startswith("Every item is graded.")
