"""The side-by-side card in a real Chromium against a real server: 50 cards graded, every grade stored on the
response that was on that side of the screen, the side recorded, the models' names never on the page."""

from __future__ import annotations

import json

import pytest

from core.inputs.targets import response_column
from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import TIMEOUT_MS

pytestmark = pytest.mark.e2e
MODELS = ("kestrel-secret-7b", "osprey-hidden-13b")
N_ITEMS, N_CARDS = 60, 50


def comparison_pool() -> bytes:
    rows = [
        {
            "id": f"q{i:03d}",
            "model": m,
            "prompt": f"PROMPT-q{i:03d}",
            "response": f"RESP-q{i:03d}-{k}",
            "answer": str(k),
        }
        for i in range(N_ITEMS)
        for k, m in enumerate(MODELS)
    ]
    return "\n".join(json.dumps(r) for r in rows).encode()


def test_fifty_side_by_side_cards_store_each_grade_on_the_side_shown(browser, shared_server):
    store = Store.open(shared_server.db_url)
    pid = create_project(store, "Side by side e2e", ("pool.jsonl", comparison_pool()), start=False)
    store.update_settings(pid, {"min_view_s": 0.0})
    start_preparation(store, pid, wait=True)
    items = store.load_items(pid).set_index("id")
    owner = {str(items.at[i, response_column(m)]): m for i in items.index for m in MODELS}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{shared_server.url}/grade?project={pid}&grader=sbs")
    expected, last = {}, None
    for n in range(N_CARDS):
        responses = page.locator(".sbs-response")
        responses.nth(1).wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function(  # a new card, both sides of it: a rerun redraws the sides one after the other
            "last => { const r = document.querySelectorAll('.sbs-response'); if (r.length != 2) return false; "
            "const [a, b] = [r[0].innerText.trim(), r[1].innerText.trim()]; "
            "return a !== last && a.split('-')[1] === b.split('-')[1]; }",
            arg=last,
            timeout=TIMEOUT_MS,
        )
        body = page.inner_text("body")
        assert not any(m in body for m in MODELS)
        texts = [responses.nth(j).inner_text().strip() for j in range(2)]
        assert [responses.nth(j).get_attribute("data-side") for j in range(2)] == ["0", "1"]
        item = texts[0].split("-")[1]
        labels = ("Correct", "Incorrect") if n % 2 else ("Incorrect", "Correct")
        for j, label in enumerate(labels):
            group = page.get_by_role("radiogroup", name=f"Grade of Response {j + 1}")
            group.get_by_text(label, exact=True).click()
        page.get_by_role("button", name="Submit both grades").click()
        position = int(items.index.get_loc(item))
        expected |= {(position, owner[t]): (j, labels[j]) for j, t in enumerate(texts)}
        last = texts[0]
    page.locator('[data-testid="stCaptionContainer"]', has_text=f"{N_CARDS} of {N_ITEMS} items graded").wait_for(
        timeout=TIMEOUT_MS
    )
    grades = store.target_grades(pid)
    stored = {(int(g.position), g.target): (int(g.side), g.label) for g in grades.itertuples()}
    assert len(grades) == 2 * N_CARDS and stored == expected
    page.close()


CHECKED = "() => document.querySelectorAll('[role=radiogroup] input:checked').length"
FRESH = "() => document.querySelectorAll('[role=radiogroup]').length === 2 && ({checked})() === 0"


def keys_page(browser, server, name: str, grader: str):
    """A prepared comparison of N_ITEMS items (no minimum viewing time) and ``grader``'s Grade page on it, its
    first card drawn with no grade: (store, project id, page)."""
    store = Store.open(server.db_url)
    pid = create_project(store, name, ("pool.jsonl", comparison_pool()), start=False)
    store.update_settings(pid, {"min_view_s": 0.0})
    start_preparation(store, pid, wait=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{server.url}/grade?project={pid}&grader={grader}")
    page.locator('[data-testid="stCaptionContainer"]', has_text=f"0 of {N_ITEMS} items graded").wait_for(
        timeout=TIMEOUT_MS
    )
    page.wait_for_function(FRESH.format(checked=CHECKED), timeout=TIMEOUT_MS)
    return store, pid, page


def test_the_keys_grade_each_response_in_turn_and_enter_submits(browser, shared_server):
    """Y and N grade the first response without a grade, then the next; Enter submits the card, S skips it, U
    undoes the skip and then the last card, every side of it (it took the mouse only, and had neither:
    evaluation lead's review), and B goes back to the card before."""
    store, pid, page = keys_page(browser, shared_server, "Side by side keys", "keys")
    checked, fresh = CHECKED, FRESH
    page.locator("body").press("b")  # nothing graded yet: the key says so rather than nothing
    page.get_by_text("B: no earlier card to go back to").wait_for(timeout=TIMEOUT_MS)
    note = page.locator("#ag-sbs-note")
    for close in ("?", "Escape"):  # the list of keys stays up until ? or Esc takes it down (it went after 4 s)
        page.locator("body").press("?")
        note.filter(has_text="Keys:").wait_for(timeout=TIMEOUT_MS)
        page.locator("body").press(close)
        assert note.count() == 0, close
    link = page.locator('[data-testid="stSidebar"] a').first
    link.focus()  # a letter on the sidebar's link is the link's (it graded the first response)
    page.keyboard.press("y")
    assert page.evaluate(checked) == 0
    page.keyboard.press("Escape")  # the focus back on the page, where the keys act
    assert page.evaluate("() => !document.activeElement.closest('[data-testid=stSidebar]')")
    for n in range(3):
        page.locator('[data-testid="stCaptionContainer"]', has_text=f"{n} of {N_ITEMS} items graded").wait_for(
            timeout=TIMEOUT_MS
        )
        page.wait_for_function(fresh.format(checked=checked), timeout=TIMEOUT_MS)  # the new card, both sides drawn
        page.locator("body").press("y")
        page.wait_for_function(f"() => ({checked})() === 1", timeout=TIMEOUT_MS)
        page.locator("body").press("n")
        page.wait_for_function(f"() => ({checked})() === 2", timeout=TIMEOUT_MS)
        page.keyboard.press("Enter")
    page.locator('[data-testid="stCaptionContainer"]', has_text=f"3 of {N_ITEMS} items graded").wait_for(
        timeout=TIMEOUT_MS
    )
    # what was saved and the item now on screen, read out from a region that outlives the reruns (a screen reader
    # heard nothing of either: an accessibility review)
    page.wait_for_function(
        "() => /^saved.*\\. Now item .+, 3 of \\d+ items graded\\.$/.test(document.getElementById('ag-sbs-live')?.textContent)",
        timeout=TIMEOUT_MS,
    )
    assert page.locator('#ag-sbs-live[role="status"]').count() == 1
    grades = store.target_grades(pid).sort_values(["position", "side"])
    assert grades.groupby("position")["label"].agg(list).tolist() == [["Correct", "Incorrect"]] * 3
    page.locator("body").press("s")
    page.get_by_test_id("stAlertContentSuccess").get_by_text("skipped: the item went back to the queue").wait_for(
        timeout=TIMEOUT_MS
    )
    assert len(store.skipped_positions(pid)) == 1 and len(store.target_grades(pid)) == 6
    page.locator("body").press("u")  # the skip taken back, then the last card: both its sides at once
    page.get_by_test_id("stAlertContentSuccess").get_by_text("undone: the skipped item is back").wait_for(
        timeout=TIMEOUT_MS
    )
    assert not store.skipped_positions(pid)
    page.locator("body").press("u")
    page.get_by_test_id("stAlertContentSuccess").get_by_text("undone: the item is back, ungraded").wait_for(
        timeout=TIMEOUT_MS
    )
    assert len(store.target_grades(pid)) == 4
    page.locator("body").press("b")  # back to the last card graded, its two grades shown to change
    page.get_by_text("Your earlier card, with the grades you gave").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({checked})() === 2", timeout=TIMEOUT_MS)
    # a slow rerun can leave the queue card's Undo button on the page, stale, under the earlier card: the key does
    # not press it (CI caught a U that clicked it, and nothing was said)
    page.evaluate(
        """() => {
        const stale = document.createElement("div");
        stale.setAttribute("data-testid", "stElementContainer");
        stale.setAttribute("data-stale", "true");
        stale.innerHTML = "<button>Undo my last card or skip</button>";
        stale.firstChild.addEventListener("click", () => { window.agStaleClicked = true; });
        document.querySelector('[data-testid="stMain"]').appendChild(stale);
    }"""
    )
    page.locator("body").press("u")  # no undo on an earlier card: said so
    page.get_by_text("U: on an earlier card, submit it or return to the queue (Q) first").wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate("() => window.agStaleClicked") is None
    page.evaluate("() => document.querySelector('[data-stale=\"true\"]').remove()")
    page.locator("body").press("q")
    page.get_by_text("Your earlier card, with the grades you gave").wait_for(state="detached", timeout=TIMEOUT_MS)
    # the keys change one grade of a card graded through: Left / Right choose the response the next key grades
    page.locator("body").press("b")
    page.get_by_text("Your earlier card, with the grades you gave").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({checked})() === 2", timeout=TIMEOUT_MS)
    page.locator("body").press("y")  # every response graded: the key says how to choose one
    page.get_by_text("every response has its grade; Left / Right choose one to change").wait_for(timeout=TIMEOUT_MS)
    page.locator("body").press("ArrowRight")  # none chosen yet: the first response
    first_label = "() => document.querySelectorAll('[role=radiogroup]')[0].querySelector('input:checked')"
    page.locator("body").press("ArrowRight")
    page.locator("body").press("ArrowLeft")  # back to the first
    page.locator("body").press("n")
    page.wait_for_function(
        f"() => ({first_label})()?.closest('label')?.innerText.trim() === 'Incorrect'", timeout=TIMEOUT_MS
    )
    page.keyboard.press("Enter")
    page.get_by_text("Your earlier card, with the grades you gave").wait_for(state="detached", timeout=TIMEOUT_MS)
    grades = store.target_grades(pid)
    last = grades.sort_values("created_at")["position"].iloc[-1]
    changed = grades[grades["position"] == last].sort_values("side")
    assert changed["label"].tolist() == ["Incorrect", "Incorrect"]
    page.wait_for_function(fresh.format(checked=checked), timeout=TIMEOUT_MS)
    page.locator("[role=radiogroup]").nth(1).locator("input").first.focus()  # on a grade: its arrows are its own
    page.keyboard.press("ArrowRight")
    outlined = "() => [...document.querySelectorAll('[data-testid=stRadio]')].filter((r) => r.style.outline).length"
    assert page.evaluate(outlined) == 0  # the card's choice of response did not move too
    # Esc leaves the comment for the card, whose next key then acts (F was typed into the comment: a review)
    comment = page.get_by_label("Comment (optional): saved with the grades, or sent to a reviewer with a flag")
    comment.click()
    comment.press_sequentially("the reference looks wrong")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement?.tagName !== 'TEXTAREA'", timeout=TIMEOUT_MS)
    page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')", timeout=TIMEOUT_MS)
    page.keyboard.press("f")
    page.get_by_test_id("stAlertContentSuccess").get_by_text("flagged for review").wait_for(timeout=TIMEOUT_MS)
    assert comment.input_value() in ("", "the reference looks wrong")  # no "f" typed into it


def test_a_key_typed_ahead_of_the_next_card_is_not_taken_and_says_so(browser, shared_server):
    """Typed ahead (N, Y, Enter, N, Y, Enter), half the presses went to the card just submitted, and the key said
    "every response has its grade" (a grader's review): until the next card is drawn, a key that grades is not
    taken, and says so, as on the one-response card."""
    store, pid, page = keys_page(browser, shared_server, "Side by side ahead", "ahead")
    checked = CHECKED
    page.locator("body").press("y")
    page.wait_for_function(f"() => ({checked})() === 1", timeout=TIMEOUT_MS)
    page.locator("body").press("n")
    page.wait_for_function(f"() => ({checked})() === 2", timeout=TIMEOUT_MS)
    page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')", timeout=TIMEOUT_MS)
    # Enter, then Y before the next card is on screen: both in one task of the page, so no answer of the server can
    # come between them (pressed one by one, the next card was sometimes drawn before Y on a busy machine)
    page.evaluate(
        "() => ['Enter', 'y'].forEach((key) => document.body.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true})))"
    )
    page.get_by_text("Y: not taken: the last press is not answered yet").wait_for(timeout=TIMEOUT_MS)
    page.locator('[data-testid="stCaptionContainer"]', has_text=f"1 of {N_ITEMS} items graded").wait_for(
        timeout=TIMEOUT_MS
    )
    grades = store.target_grades(pid).sort_values("side")
    assert grades["label"].tolist() == ["Correct", "Incorrect"]  # the first card's, as pressed, and nothing more
    page.close()


def test_ctrl_enter_on_a_chosen_grade_sets_a_comparisons_final_grades(browser, shared_server):
    """On the review form, a grade chosen from the keyboard leaves the focus on its radio button, where the
    advertised Ctrl+Enter did nothing and said nothing (a reviewer's review)."""
    from core.services import reservations
    from core.store import reviews as review_rows
    from core.testing.appserver import script_idle
    from core.testing.waiting import until

    store = Store.open(shared_server.db_url)
    pid = create_project(store, "Review keys", ("pool.jsonl", comparison_pool()), start=False)
    start_preparation(store, pid, wait=True)
    targets = store.project(pid).settings.targets
    for grader, labels in (("ann", ("Correct", "Correct")), ("bob", ("Correct", "Incorrect"))):
        card = [(t, 1.0 if label == "Correct" else 0.0, label) for t, label in zip(targets, labels)]
        reservations.record_card(store, pid, 0, card, grader, seconds=3.0)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{shared_server.url}/review?project={pid}&grader=rita")
    page.get_by_role("button", name="Set the final grades").wait_for(timeout=TIMEOUT_MS)
    script_idle(page)
    choice = page.get_by_role("radiogroup").first.get_by_role("radio").first
    choice.focus()
    page.keyboard.press("Space")  # the first response's first grade, chosen from the keyboard
    page.wait_for_function("() => document.activeElement?.type === 'radio'", timeout=TIMEOUT_MS)
    page.keyboard.press("Control+Enter")
    until(lambda: not review_rows.reviews(store, pid, [0]).empty, timeout=TIMEOUT_MS / 1000, what="the review")
    assert review_rows.reviews(store, pid, [0])["label"].tolist() == ["Correct"]
