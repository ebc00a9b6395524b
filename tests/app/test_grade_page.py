"""Grade page flows through the grading card (AppTest): what the card is sent, and what a press
naming a shown item does. The browser half of the card is covered by tests/e2e/test_grading_card.py."""

from __future__ import annotations

import pytest

from core.services import grade_actions, grading
from core.services.showings import Showing
from tests.card_press import card_data, press, shown

GRADE = "app_pages/grade.py"
PROJECTS_OWN_MIN_VIEW_S = grading.min_view_s  # the rule itself, before tests/app/conftest.py turns it off


@pytest.fixture
def released_long_ago(monkeypatch):
    """The server released every card an hour ago: the browser's measure is the shorter one."""
    monkeypatch.setattr(Showing, "seconds_since_released", lambda self: 3600.0)


def test_a_grade_is_stored_for_the_shown_item_with_its_comment_and_time(open_app, store, project_id, released_long_ago):
    at = open_app(GRADE, project_id=project_id)
    first = shown(at)
    ack = press(at, "grade", label="Correct", comment="looks right", shown_ms=1234)
    assert ack["status"] == "saved"
    grades = store.grades(project_id)
    assert grades[["position", "label", "grader", "comment"]].values.tolist() == [
        [first["position"], "Correct", "ann", "looks right"]
    ]
    assert grades.loc[0, "seconds"] == 1.234
    assert shown(at)["item_id"] != first["item_id"]
    assert card_data(at)["progress"].startswith("1 of 40 items graded")


def test_a_late_or_repeated_press_never_moves_to_another_item(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown(at)
    press(at, "grade", label="Correct")
    second = shown(at)
    assert press(at, "grade", card=first, label="Incorrect")["status"] == "ignored"  # the same showing, again
    lost = press(at, "grade", card=first, label="Incorrect", comment="check the units")  # typed in a stale tab
    assert lost["message"].endswith("your current item. Your comment was not saved either: “check the units”")
    forged = {**second, "position": first["position"]}
    assert (
        press(at, "grade", card=forged, label="Incorrect")["status"] == "ignored"
    )  # token of one, position of another
    assert store.grades(project_id)["label"].tolist() == ["Correct"]
    assert shown(at)["token"] == second["token"]  # the card stays on the item still unjudged


def test_a_press_sooner_than_the_minimum_viewing_time_is_not_stored(
    open_app, store, project_id, released_long_ago, monkeypatch
):
    monkeypatch.setattr(grading, "min_view_s", PROJECTS_OWN_MIN_VIEW_S)
    at = open_app(GRADE, project_id=project_id)  # the default: 0.3 s
    first = shown(at)
    assert press(at, "grade", label="Correct", shown_ms=120)["status"] == "too_fast"
    assert store.grades(project_id).empty and shown(at)["token"] == first["token"]
    assert press(at, "grade", label="Correct", shown_ms=400)["status"] == "saved"
    assert press(at, "skip", shown_ms=120)["status"] == "too_fast"  # no item passed over unseen either
    assert not store.skipped_positions(project_id)


def test_the_viewing_time_is_the_servers_when_the_browser_claims_more(open_app, store, project_id, monkeypatch):
    monkeypatch.setattr(grading, "min_view_s", PROJECTS_OWN_MIN_VIEW_S)
    at = open_app(GRADE, project_id=project_id)
    assert press(at, "grade", label="Correct", shown_ms=10**8)["status"] == "too_fast"  # released just now
    assert store.grades(project_id).empty
    monkeypatch.setattr(Showing, "seconds_since_released", lambda self: 2.5)
    assert press(at, "grade", label="Correct", shown_ms=10**8)["status"] == "saved"
    assert store.grades(project_id)["seconds"].tolist() == [2.5]


@pytest.mark.parametrize("shown_ms", [float("nan"), float("inf"), -1000, 1e30, "soon"])
def test_a_forged_viewing_time_is_not_saved(open_app, store, project_id, released_long_ago, shown_ms):
    at = open_app(GRADE, project_id=project_id)
    first = shown(at)
    ack = press(at, "grade", label="Correct", shown_ms=shown_ms)
    assert ack["status"] == "error" and ack["message"].startswith("Not saved: the viewing time")
    assert store.grades(project_id).empty and shown(at)["token"] == first["token"]


def test_a_comment_over_the_limit_is_not_saved_and_the_box_is_bounded(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    assert card_data(at)["max_comment_chars"] == grading.MAX_COMMENT_CHARS == 5000
    ack = press(at, "grade", label="Correct", comment="x" * 20_000)
    assert (
        ack["status"] == "error" and "the comment has 20,000 characters, more than the 5,000 allowed" in ack["message"]
    )
    assert store.grades(project_id).empty
    assert press(at, "grade", label="Correct", comment="x" * 5000)["status"] == "saved"


def test_skip_undo_back_change_and_comment(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    first = shown(at)
    assert press(at, "skip")["status"] == "skipped"
    assert store.grades(project_id).empty and first["position"] in store.skipped_positions(project_id)
    second = shown(at)
    press(at, "grade", label="Correct")
    waiting = shown(at)
    press(at, "undo")
    assert store.grades(project_id).empty and shown(at)["position"] == second["position"]
    press(at, "grade", label="Correct")
    press(at, "back")
    review = shown(at)
    assert review["reviewing"] and review["position"] == second["position"] and review["previous_label"] == "Correct"
    assert press(at, "comment", comment="on reflection")["status"] == "commented"
    assert store.grade_of(project_id, second["position"], "ann")["label"] == "Correct"  # the grade is unchanged
    assert press(at, "grade", label="Incorrect")["status"] == "changed"
    assert store.grades(project_id)["label"].tolist() == ["Incorrect"]
    assert shown(at)["position"] == waiting["position"] and not shown(at)["reviewing"]  # back where the queue was
    press(at, "back")
    back = press(at, "back", comment="needs a second look")  # B with words typed: kept, and nothing failed
    assert back["message"].endswith("Your comment was not saved: “needs a second look”"), back["message"]
    press(at, "queue")
    assert shown(at)["position"] == waiting["position"]


def test_a_second_session_resumes_where_the_project_stands(open_app, store, project_id):
    first = open_app(GRADE, project_id=project_id)
    press(first, "grade", label="Correct")
    now_showing = shown(first)["item_id"]
    second = open_app(GRADE, project_id=project_id)  # the same grader in another session: the same item
    assert shown(second)["item_id"] == now_showing
    other = open_app(GRADE, project_id=project_id, grader="bob")  # another grader: never the same item at once
    assert shown(other)["item_id"] != now_showing


def test_reference_hidden_and_signals_shown_only_when_allowed(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    assert shown(at)["reference_html"] is not None and shown(at)["signals"] is None
    store.update_settings(project_id, {"show_reference": False, "show_signals": True})
    at = open_app(GRADE, project_id=project_id)
    assert shown(at)["reference_html"] is None and "stratum" in shown(at)["signals"]


def test_grading_needs_a_name(open_app, project_id):
    at = open_app(GRADE, project_id=project_id, grader="")
    assert "Type your name" in at.warning[0].value
    assert not at.get("bidi_component") or all(
        e.proto.component_name != "activegrade_grading_card" for e in at.get("bidi_component")
    )


def test_a_name_that_is_not_one_is_refused_and_grades_nothing(open_app, store, project_id):
    """The open demo's name is stored with every grade and exported: a formula or a control character is
    refused in the sidebar, and the card waits for a name."""
    at = open_app(GRADE, project_id=project_id, grader="=HYPERLINK(1)")
    assert "the grader name holds the character '='" in at.sidebar.error[0].value
    assert "Type your name" in at.warning[0].value
    at.sidebar.text_input(key="grader").set_value("Kim").run()
    assert not at.sidebar.error and shown(at)["position"] >= 0
    press(at, "grade", label="Correct")
    assert store.grades(project_id)["grader"].tolist() == ["Kim"]  # its case kept


def test_my_items_lists_graded_and_skipped_and_searches(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    skipped = shown(at)
    press(at, "skip")
    graded = shown(at)
    press(at, "grade", label="Incorrect")
    latest = shown(at)
    press(at, "grade", label="Correct")
    assert not at.dataframe  # not read while the list is closed
    at.session_state[f"mine-open-{project_id}"] = True  # opened on the same page: read then, the grades given since
    at.run()  # included (a new user's review opened it after 14 grades on "0 items")
    table = at.dataframe[0].value  # the skip waiting on the grader, then the grades, the latest first
    assert table["id"].tolist() == [skipped["item_id"], latest["item_id"], graded["item_id"]]
    table = table[table["id"] != latest["item_id"]]
    assert dict(zip(table["id"], table["grade"])) == {skipped["item_id"]: "skipped", graded["item_id"]: "Incorrect"}
    at.text_input(key=f"mine-search-{project_id}").input(graded["item_id"]).run()
    assert at.dataframe[0].value["id"].tolist() == [graded["item_id"]]
    at.text_input(key=f"mine-search-{project_id}").input("").run()
    assert press(at, "grade", label="Correct")["status"] == "saved"  # the card and the open list rerun together
    assert len(at.dataframe[0].value) == 4
    # the table's rows take no key: a keyboard or screen-reader user opens an item by its id (an accessibility review)
    by_id = next(s for s in at.selectbox if s.label == "Open an item by its id")
    assert graded["item_id"] in by_id.options
    by_id.select(graded["item_id"]).run()
    reopened = shown(at)
    assert reopened["item_id"] == graded["item_id"] and reopened["reviewing"]


def test_items_held_by_others_are_not_called_all_graded(open_app, store, project_id):
    from core.scales import BINARY
    from core.services import reservations
    from core.stats.allocation import design_from_items

    store.update_settings(project_id, {"regime": "anytime"})  # a rule that never closes the queue: held, then all
    design = design_from_items(store.load_items(project_id), stratify_by=None)
    held = reservations.claim(store, project_id, design, 0, "bob")  # bob is on one item
    for position in set(range(design.N)) - {held}:
        reservations.record_grade(store, project_id, position, BINARY, "Correct", "cy")
    at = open_app(GRADE, project_id=project_id)
    data = card_data(at)
    assert data["card"] is None and data["empty"]["kind"] == "held"
    assert "the item left is being graded by others" in data["empty"]["text"]
    reservations.record_grade(store, project_id, held, BINARY, "Correct", "bob")
    at.run()
    assert card_data(at)["empty"]["text"].startswith("Every item is graded.")


def test_the_card_says_grading_is_done_when_the_looks_say_so(open_app, store, project_id):
    store.update_settings(project_id, {"regime": "looks", "target_half_width": 0.45, "min_view_s": 0})
    at = open_app(GRADE, project_id=project_id)
    while (data := card_data(at))["card"] is not None:
        assert press(at, "grade", label="Correct")["status"] == "saved"
    assert data["empty"]["kind"] == "done" and data["empty"]["text"].startswith("Grading is done: the stopping rule")
    assert len(store.grades(project_id)) < 40  # the queue closed at the stop, items left ungraded


def test_a_budget_fixed_in_advance_stops_handing_out_items_at_n0(open_app, store, project_id):
    store.update_settings(project_id, {"budget_fixed": True, "planned_budget": 2})
    at = open_app(GRADE, project_id=project_id)
    assert card_data(at)["progress"].startswith("0 of 40 items graded (budget fixed at 2)")
    for _ in range(2):
        assert press(at, "grade", label="Correct")["status"] == "saved"
    data = card_data(at)
    assert data["card"] is None and data["empty"]["kind"] == "done"
    assert data["empty"]["text"].startswith("The budget fixed in advance is graded: 2 items")
    assert len(store.grades(project_id)) == 2
    nothing = {"token": None, "position": None, "item_id": None}  # no card on screen
    assert press(at, "back", card=nothing)["status"] == "review"  # earlier grades stay reachable
    assert shown(at)["reviewing"] and shown(at)["position"] == store.grader_positions(project_id, "ann")[-1]
    press(at, "queue")
    assert card_data(at)["card"] is None
    store.update_settings(project_id, {"budget_fixed": False})
    at.run()
    assert card_data(at)["card"] is not None  # without a fixed budget grading goes on


def test_a_failed_commit_says_not_saved_and_the_next_press_saves(open_app, store, project_id, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from core.store.store import Store

    at = open_app(GRADE, project_id=project_id)
    first = shown(at)
    plain = Store.add_grade

    def disk_full(self, *args, **kwargs):
        raise OperationalError("INSERT INTO grades", {}, Exception("database or disk is full"))

    monkeypatch.setattr(Store, "add_grade", disk_full)
    ack = press(at, "grade", label="Correct")
    assert ack["status"] == "error" and ack["message"].startswith("Not saved, press again")
    assert store.grades(project_id).empty and shown(at)["token"] == first["token"]  # the same item, still live
    monkeypatch.setattr(Store, "add_grade", plain)
    assert press(at, "grade", label="Correct")["status"] == "saved"
    assert store.grades(project_id)["position"].tolist() == [first["position"]]


def test_a_database_that_stops_answering_keeps_the_card_and_says_not_saved(open_app, store, project_id, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from core.store.store import Store

    at = open_app(GRADE, project_id=project_id)
    first = shown(at)

    def down(self, *args, **kwargs):
        raise OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly"))

    for name in ("add_grade", "graded_positions"):  # the write fails, and so do the reads that draw the next card
        monkeypatch.setattr(Store, name, down)
    ack = press(at, "grade", label="Correct")
    assert ack["status"] == "error" and "Not saved, press again" in ack["message"]
    assert shown(at)["token"] == first["token"] and not at.exception


def test_a_database_stopped_for_the_access_guard_too_says_not_saved(open_app, store, project_id, monkeypatch):
    from sqlalchemy.exc import OperationalError

    from core.store.store import Store

    at = open_app(GRADE, project_id=project_id)
    first = shown(at)

    def down(self, *args, **kwargs):
        raise OperationalError("SELECT", {}, Exception("connection refused: is the server running?"))

    for name in ("add_grade", "graded_positions", "has_project", "grades"):  # the guard's read fails as well
        monkeypatch.setattr(Store, name, down)
    ack = press(at, "grade", label="Correct")
    assert not at.exception
    assert ack["status"] == "error" and "Not saved, press again" in ack["message"]
    assert shown(at)["token"] == first["token"]


def test_guidelines_are_rendered_inert_so_a_footnote_pixel_fetches_nothing(open_app, store, project_id):
    pixel = (
        "See the note[^a].\n\n[^a]: ![x](http://host.example/p.png)\n\nAnd ![y](http://host.example/q.png) <img src=x>"
    )
    store.update_settings(project_id, {"guidelines": pixel})
    at = open_app(GRADE, project_id=project_id)
    markdown = [e.value for e in at.sidebar.markdown]
    html = [e.proto.body for e in at.sidebar.get("html")]
    assert not any("host.example" in text for text in markdown)  # Streamlit's renderer never sees the text
    assert html and "See the note" in html[0] and "[image: y]" in html[0]
    assert "<img" not in html[0] and 'src="' not in html[0]  # the footnote is at most a link, nothing loads


def test_an_undo_names_the_item_it_undid_not_the_one_on_screen(open_app, store, project_id):
    at = open_app(GRADE, project_id=project_id)
    assert press(at, "undo")["message"] == f"Not undone: {grade_actions.NOTHING_TO_UNDO}"  # nothing was undone
    first = shown(at)
    press(at, "grade", label="Correct")
    assert shown(at)["item_id"] != first["item_id"]
    ack = press(at, "undo")  # pressed on the next card: the grade of the first is withdrawn
    assert ack["message"] == f"undone: the item is back, ungraded, item {first['item_id']}"
    assert shown(at)["item_id"] == first["item_id"]
    press(at, "grade", label="Correct", comment="the sum is off by one")
    press(at, "undo")  # the grade is taken back, not the words written with it: the card offers them again
    assert shown(at)["item_id"] == first["item_id"] and shown(at)["previous_comment"] == "the sum is off by one"
    press(at, "skip")
    assert shown(at)["item_id"] != first["item_id"]
    ack = press(at, "undo")  # the skipped item is back, and named
    assert ack["message"] == f"undone: the skipped item is back, item {first['item_id']}"
    assert shown(at)["item_id"] == first["item_id"]
