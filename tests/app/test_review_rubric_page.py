"""The Review page in a rubric project (AppTest): one entry for an item whose grades disagree on one
criterion, each grader's card shown a row per grader, and one submit that sets the chosen criterion's final
grade; the Records page reading one criterion at a time; the Team page's agreement per criterion."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core import config
from core.services import account_writes, auth, sessions
from tests.app.conftest import APP
from ui import signin

CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}},
    {"name": "helpful", "scale": {"kind": "likert"}},
]


def rubric_project(store, project_id) -> None:
    """Item 0 graded by ann and bob, who agree on correct and differ on helpful."""
    store.update_settings(project_id, {"criteria": CRITERIA})
    rubric = store.project(project_id).settings.rubric
    for grader, helpful in (("ann", "4"), ("bob", "2")):
        card = rubric.card_values({"correct": "Correct", "helpful": helpful})
        store.add_rubric_grades(project_id, 0, card, grader=grader, comment=f"by {grader}")


def test_a_rubric_item_is_reviewed_on_one_card(store, project_id, open_app):
    rubric_project(store, project_id)
    at = open_app("app_pages/review.py", project_id=project_id, grader="rita")
    first = store.item(project_id, 0)["id"]  # the picker names an item by its id
    assert at.selectbox(key=f"review_item_{project_id}").options == [f"{first}: grades disagree"]
    [cards] = [d.value for d in at.dataframe if "grader" in d.value.columns]
    assert cards.values.tolist() == [["ann", "Correct", "4", "by ann"], ["bob", "Correct", "2", "by bob"]]
    assert [r.label for r in at.radio] == ["correct", "helpful (grades disagree)"]
    [counts] = [d.value for d in at.dataframe if "settled" in d.value.columns]
    assert counts.values.tolist() == [["correct", 0, 0], ["helpful", 1, 0]]
    at.radio(key="review_label_0_1").set_value("3")
    at.text_area(key="review_note_0").input("halfway")
    next(b for b in at.button if b.label == "Set the final grades").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert store.reviewed_grades(project_id, "helpful") == {0: 0.5}
    assert store.reviewed_grades(project_id, "correct") == {}
    successes = [s.value.replace("\\", "") for s in at.success]  # the line is escaped markdown
    assert successes[0] == "Item q00: final grades: helpful 3." and "Nothing to review" in successes[1]
    [counts] = [d.value for d in at.dataframe if "settled" in d.value.columns]
    assert counts.values.tolist() == [["correct", 0, 0], ["helpful", 1, 1]]


def test_the_records_page_offers_the_criteria_and_reads_the_one_chosen(store, project_id, open_app):
    rubric_project(store, project_id)
    at = open_app("app_pages/records.py", project_id=project_id)
    choice = at.selectbox(key="records_criterion")
    assert choice.options == ["correct", "helpful"] and choice.value == "correct"
    at.selectbox(key="records_graded").select("yes").run()
    [rows] = [d.value for d in at.dataframe if "graders" in d.value.columns]
    assert rows[["position", "grades", "graders"]].values.tolist() == [[0, 2, "ann: Correct, bob: Correct"]]
    at.selectbox(key="records_criterion").select("helpful").run()
    assert at.selectbox(key="records_label_helpful").options[1:] == ["1", "2", "3", "4", "5"]
    at.selectbox(key="records_label_helpful").select("2").run()
    [rows] = [d.value for d in at.dataframe if "graders" in d.value.columns]
    assert rows["graders"].tolist() == ["ann: 4, bob: 2"]


def test_the_team_page_shows_agreement_per_criterion_primary_first(store, project_id, monkeypatch):
    monkeypatch.delenv(config.OPEN_DEMO)  # the Team page is for signed-in admins
    rubric_project(store, project_id)
    store.update_settings(project_id, {"primary_criterion": "helpful"})
    root = account_writes.create_account(store, "root", auth.ADMIN, password="a long enough password")
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.session_state[signin.TOKEN_KEY] = sessions.start(store, root)
    at.query_params["project"] = str(project_id)
    at.run()
    at.switch_page("app_pages/team.py").run()
    assert not at.exception, at.exception
    [table] = [d.value for d in at.dataframe if "criterion" in d.value.columns]
    assert table[["criterion", "items graded twice", "same grade", "disagreements"]].values.tolist() == [
        ["helpful (primary)", 1, "0%", 1],
        ["correct", 1, "100%", 0],
    ]
    assert not at.metric  # the one-question metrics are not shown


def test_the_records_item_picker_names_each_item_by_position_and_id(store, project_id, open_app):
    at = open_app("app_pages/records.py", project_id=project_id)
    picker = at.selectbox(key="records_item")
    assert picker.options[:2] == ["#0 · q00", "#1 · q01"]  # the picker's search matches the id too
    picker.select_index(1).run()
    assert "**Item q01**" in " ".join(m.value for m in at.markdown)


def test_a_one_question_final_grade_is_confirmed_with_the_item_and_the_grade(store, project_id, open_app):
    for grader, (value, label) in (("ann", (1.0, "Correct")), ("bob", (0.0, "Incorrect"))):
        store.add_grade(project_id, 3, value=value, label=label, grader=grader)
    at = open_app("app_pages/review.py", project_id=project_id, grader="rita")
    at.button(key="settle_3_N").click().run()  # the label's button, the grading card's key N
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.success[0].value.replace("\\", "") == "Item q03: final grade: Incorrect."


def test_the_note_and_grade_set_on_one_item_do_not_carry_to_the_next(store, project_id, open_app):
    for position in (3, 5):
        for grader, (value, label) in (("ann", (1.0, "Correct")), ("bob", (0.0, "Incorrect"))):
            store.add_grade(project_id, position, value=value, label=label, grader=grader)
    at = open_app("app_pages/review.py", project_id=project_id, grader="rita")
    at.text_area(key="review_note_3").input("the sum is 41")
    at.button(key="settle_3_N").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert store.reviewed_grades(project_id) == {3: 0.0}
    assert at.selectbox(key=f"review_item_{project_id}").value == 5
    assert at.text_area(key="review_note_5").value == ""  # not item 3's note


def test_next_and_previous_open_the_items_waiting_and_no_grade_is_set_by_moving(store, project_id, open_app):
    """J and K (the Next and Previous buttons' keys) move through the queue, round its ends; each label is a
    button of its own, so no grade is preselected for a quick submit to set."""
    for position in (3, 5, 8):
        for grader, (value, label) in (("ann", (1.0, "Correct")), ("bob", (0.0, "Incorrect"))):
            store.add_grade(project_id, position, value=value, label=label, grader=grader)
    at = open_app("app_pages/review.py", project_id=project_id, grader="rita")
    chosen = f"review_item_{project_id}"
    moves = {"Next": [5, 8, 3], "Previous": [8]}
    for name, expected in moves.items():
        button = next(b for b in at.button if b.label == name)
        assert button.proto.shortcut.upper() == {"Next": "J", "Previous": "K"}[name]
        for position in expected:
            next(b for b in at.button if b.label == name).click().run()
            assert at.selectbox(key=chosen).value == position
    assert [b.label for b in at.button if b.key and b.key.startswith("settle_8_")] == ["Correct", "Incorrect"]
    assert store.reviewed_grades(project_id) == {}


def test_a_criterion_settled_is_said_so_among_those_that_disagree(store, project_id, open_app):
    """After one of two disagreeing criteria was settled the item said "Grades disagree on: correct, helpful",
    not which still waits (a reviewer's review)."""
    store.update_settings(project_id, {"criteria": CRITERIA})
    rubric = store.project(project_id).settings.rubric
    for grader, correct, helpful in (("ann", "Correct", "4"), ("bob", "Incorrect", "2")):
        card = rubric.card_values({"correct": correct, "helpful": helpful})
        store.add_rubric_grades(project_id, 0, card, grader=grader, comment="")
    at = open_app("app_pages/review.py", project_id=project_id, grader="rita")
    at.radio(key="review_label_0_0").set_value("Correct")
    next(b for b in at.button if b.label == "Set the final grades").click().run()
    assert not at.error, [e.value for e in at.error]
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert "Grades disagree on: correct (settled), helpful." in captions, captions
