"""The fast grading page (core/api/fast.py) on a rubric project, in Chromium on the served app: the card asks
every criterion, the keys answer the criterion in focus and move on, Enter saves the whole card once every
required criterion is answered, a card not saved comes back with its answers, and the card's grades land on
the item shown, one per criterion."""

from __future__ import annotations

import pytest

from core.testing.appserver import TIMEOUT_MS
from tests.e2e.test_fast_grading import CARD_READY, CARD_SETTLED, _fast_page, _grades_call, _refuse_grades

pytestmark = pytest.mark.e2e
CRITERIA = [
    {"name": "correct", "scale": {"kind": "binary"}, "guidelines": "Is the answer right?"},
    {"name": "helpful", "scale": {"kind": "likert"}},
    {"name": "tone", "scale": {"kind": "likert"}, "required": False},
]
STATE = """() => ({focus: [...document.querySelectorAll('#labels .criterion')].findIndex((b) =>
  b.classList.contains('focused')), answers: [...document.querySelectorAll('#labels .criterion')].map((b) =>
  b.dataset.answer), notice: document.getElementById('notice').textContent})"""


def test_a_rubric_card_is_answered_by_keys_and_saved_by_enter(browser, shared_signed_in_server):
    store, pid, page = _fast_page(browser, shared_signed_in_server, "fast-rubric-grader")
    store.update_settings(pid, {"criteria": CRITERIA})
    page.reload()  # the card as a rubric project hands it out
    page.wait_for_function(CARD_READY, arg="", timeout=TIMEOUT_MS)
    shown = page.get_attribute("#card", "data-item")
    names = page.eval_on_selector_all("#labels .criterion", "(bs) => bs.map((b) => b.dataset.criterion)")
    assert names == ["correct", "helpful", "tone"]
    assert "Is the answer right?" in page.text_content("#labels") and "tone (optional)" in page.text_content("#labels")
    assert page.evaluate(STATE)["focus"] == 0
    page.keyboard.press("2")  # correct: Incorrect; the focus moves on to helpful
    assert page.evaluate(STATE) == {"focus": 1, "answers": ["Incorrect", "", ""], "notice": ""}
    page.keyboard.press("Enter")  # helpful is required and unanswered: nothing is sent
    state = page.evaluate(STATE)
    assert state["focus"] == 1 and state["notice"] == "Enter not taken: answer helpful first"
    page.keyboard.press("4")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("1")  # correct changed to Correct; the focus goes to tone, the one unanswered
    assert page.evaluate(STATE)["answers"] == ["Correct", "4", ""] and page.evaluate(STATE)["focus"] == 2
    page.keyboard.press("9")
    assert page.evaluate(STATE)["notice"] == "9 not taken: not an answer to tone (1 to 5)"
    assert page.get_attribute("#card", "data-sent") is None and store.rubric_grades(pid).empty
    _refuse_grades(page)
    page.keyboard.press("Enter")  # not saved: the card comes back with its answers
    page.wait_for_function(CARD_SETTLED, arg=1, timeout=TIMEOUT_MS)
    assert page.get_attribute("#card", "data-item") == shown
    assert page.evaluate(STATE)["answers"] == ["Correct", "4", ""] and store.rubric_grades(pid).empty
    page.unroute(_grades_call)
    page.keyboard.press("Enter")
    page.wait_for_function(CARD_READY, arg=shown, timeout=TIMEOUT_MS)
    assert page.evaluate(STATE)["answers"] == ["", "", ""]  # a fresh card
    grades = store.rubric_grades(pid)
    items = store.load_items(pid)["id"].astype(str).to_numpy()
    assert {items[p] for p in grades["position"]} == {shown}
    assert grades[["criterion", "label"]].values.tolist() == [["correct", "Correct"], ["helpful", "4"]]
