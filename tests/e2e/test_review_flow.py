"""Review in Chromium (open demo): F on the grading card flags the item, and the Review page settles a
disagreement, whose final grade then stands in the store."""

from __future__ import annotations

import pytest

from core.scales import BINARY
from core.services import reservations
from core.store import reviews as review_rows
from core.testing.appserver import TIMEOUT_MS, graded_project_page, script_idle
from core.testing.waiting import until

pytestmark = pytest.mark.e2e


def test_a_flag_from_the_card_and_a_final_grade_from_the_review_page(browser, shared_server, artifacts):
    store, pid, page = graded_project_page(browser, shared_server, "Review flow", "fay")
    flagged = page.locator(".ag-card").get_attribute("data-ag-item")
    page.keyboard.press("c")
    page.keyboard.type("the reference is wrong")
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    page.wait_for_function(
        "() => document.querySelector('.ag-card .ag-status').textContent.includes('flagged for review')",
        timeout=TIMEOUT_MS,
    )
    flags = review_rows.flags(store, pid)
    assert flags[["grader", "note"]].values.tolist() == [["fay", "the reference is wrong"]]
    assert store.item(pid, int(flags["position"].iloc[0]))["id"] == flagged  # the item on the card
    page.keyboard.press("y")  # graded: a flagged item waits for review once it has a grade to settle
    until(lambda: not store.grades(pid).empty, timeout=TIMEOUT_MS / 1000, what="the flagged item's grade")
    for grader, label in (("ann", "Correct"), ("bob", "Incorrect")):  # a disagreement on item 30
        reservations.record_grade(store, pid, 30, BINARY, label, grader)
    page.goto(f"{shared_server.url}/review?project={pid}&grader=rita")
    page.get_by_text("2 items wait for a reviewer's final grade").wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "review-queue.png")
    page.get_by_label("Item to review").click()  # the flagged item comes first; the disagreement after it
    disagreed = store.item(pid, 30)["id"]
    page.get_by_role("option", name=f"{disagreed}: grades disagree").click()  # named by its id
    # the chosen item's own heading: the flagged item's form has an "Incorrect" too, and waiting on that text let
    # a busy machine fill the form before the rerun that replaced it (the choice lost: "no final grade chosen")
    page.get_by_text(f"Item {disagreed}", exact=True).wait_for(timeout=TIMEOUT_MS)
    script_idle(page)  # choosing the item reruns the page: a form filled during the rerun is replaced by a new one
    note = page.get_by_label("Note (why)")
    note.fill("41 is the sum")
    until(lambda: note.input_value() == "41 is the sum", timeout=TIMEOUT_MS / 1000, what="the note typed")
    page.keyboard.press("n")  # in the note: a letter of it, not the grade's key
    assert note.input_value() == "41 is the sumn" and review_rows.reviews(store, pid, [30]).empty
    page.keyboard.press("Backspace")
    page.locator('[data-testid="stSidebar"] a').first.focus()  # a link's key, not the page's (it settled the item)
    page.keyboard.press("n")
    page.keyboard.press("j")
    page.get_by_text(f"Item {disagreed}", exact=True).click()  # out of the note: the keys are the page's again
    script_idle(page)
    assert review_rows.reviews(store, pid, [30]).empty and note.input_value() == "41 is the sum"
    page.keyboard.press("n")  # the grading card's key for Incorrect sets the final grade, with the note typed
    until(lambda: not review_rows.reviews(store, pid, [30]).empty, timeout=TIMEOUT_MS / 1000, what="the review saved")
    page.screenshot(path=artifacts / "review-page.png")
    settled = review_rows.reviews(store, pid, [30])
    assert settled[["reviewer", "label", "note"]].values.tolist() == [["rita", "Incorrect", "41 is the sum"]]
    assert store.graded_positions(pid)[30] == 0.0
