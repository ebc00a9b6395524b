"""The grading card's keyboard flow in Chromium (open demo): Enter in the name field returns to the
card, C opens the comment box and Esc returns, ? lists every key, and no grading key types into a field."""

from __future__ import annotations

import pytest

from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import MIN_VIEW_S, TIMEOUT_MS, graded_project_page, shown_for

pytestmark = pytest.mark.e2e


def test_keyboard_flow(browser, shared_server, artifacts):
    server = shared_server
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "app"
    store = Store.open(server.db_url)
    pid = create_project(
        store, "Keys", *[(n, (data / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")], start=False
    )
    start_preparation(store, pid, wait=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server.url}/grade?project={pid}")
    name = page.get_by_label("Your name (grader)")
    name.fill("tra")
    name.press("Enter")  # the name is committed and focus goes back to the card
    shown_for(page, MIN_VIEW_S)
    first = page.locator(".ag-card").get_attribute("data-ag-item")
    page.keyboard.press("c")  # the comment box opens, and the key does not type into it
    page.keyboard.type("why y")
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    help_box = page.locator(".ag-help")
    assert help_box.is_visible() and "Q" in help_box.inner_text() and "undo" in help_box.inner_text()
    page.screenshot(path=artifacts / "grade-keys.png")
    page.keyboard.press("Escape")
    assert not help_box.is_visible()
    page.keyboard.press("n")
    page.wait_for_function(
        "(first) => { const c = document.querySelector('.ag-card'); return c.dataset.agItem !== first && c.dataset.agState === 'saved'; }",
        arg=first,
        timeout=TIMEOUT_MS,
    )
    assert name.input_value() == "tra"  # no grading key went into the name field
    assert _contrast(page, ".ag-card .ag-status") >= 4.5  # WCAG AA for text: "saved" was 3.4:1 (grader's review)
    second = page.locator(".ag-card").get_attribute("data-ag-item")
    page.keyboard.press("b")  # back to the earlier grade, to add to its comment
    page.wait_for_function("(first) => document.querySelector('.ag-card').dataset.agItem === first", arg=first)
    page.keyboard.press("c")
    page.keyboard.type(", checked")
    page.keyboard.press("Control+Enter")  # saves the comment, and the keys are the card's again
    page.wait_for_function(
        "() => document.querySelector('.ag-card .ag-status').textContent.includes('comment saved')",
        timeout=TIMEOUT_MS,
    )
    page.keyboard.press("q")  # back to the queue, not a "q" typed into the comment
    page.wait_for_function(
        "(second) => document.querySelector('.ag-card').dataset.agItem === second", arg=second, timeout=TIMEOUT_MS
    )
    grades = store.grades(pid)
    assert grades[["grader", "label", "comment"]].values.tolist() == [["tra", "Incorrect", "why y, checked"]]


SENT = "() => Number(document.querySelector('.ag-host').dataset.agSent || 0)"
ON_CARD = "() => document.activeElement && document.activeElement.classList.contains('ag-card')"


def test_keys_act_on_the_card_alone_and_each_answer_is_read_out(browser, shared_server):
    """An accessibility review: a key typed on a link elsewhere on the page graded the card; the status that said
    "saved" was swapped in with its text (so never read out); the key list took no focus; the error red was 4.1:1."""
    store, pid, page = graded_project_page(browser, shared_server, "Keys on the card", "focused")
    first = page.locator(".ag-card").get_attribute("data-ag-item")
    page.locator('[data-testid="stSidebar"] a').first.focus()  # a link of the page's navigation
    page.keyboard.press("y")
    assert page.evaluate(SENT) == 0 and store.grades(pid).empty  # the link's key, not a grade
    page.keyboard.press("Escape")  # back to the card, where the keys act
    assert page.evaluate(ON_CARD)
    page.get_by_label("Your name (grader)").focus()  # a field of the page: Esc goes back to the card too
    page.keyboard.press("Escape")
    page.wait_for_function(ON_CARD, timeout=TIMEOUT_MS)  # once the name field has let the focus go
    page.keyboard.press("?")  # the key list is a dialog that takes the focus, and gives it back
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "dialog"
    assert page.locator(".ag-help-button").get_attribute("aria-expanded") == "true"
    page.keyboard.press("y")  # over the item: no key grades what it hides, and the key says so (it said nothing)
    page.locator(".ag-notice").filter(has_text="Y not taken: the list of keys is over the item").wait_for(
        timeout=TIMEOUT_MS
    )
    page.keyboard.press("Tab")  # and Tab stays in it
    assert page.evaluate(SENT) == 0 and page.evaluate("() => !!document.activeElement.closest('.ag-help')")
    page.keyboard.press("Escape")
    assert page.evaluate(ON_CARD) and not page.locator(".ag-help").is_visible()
    page.keyboard.press("y")
    page.wait_for_function(
        "(first) => { const c = document.querySelector('.ag-card'); return c.dataset.agItem !== first && c.dataset.agState === 'saved'; }",
        arg=first,
        timeout=TIMEOUT_MS,
    )
    second = page.locator(".ag-card").get_attribute("data-ag-item")
    said = f"saved: Correct, item {first}. Now item {second}, "
    page.wait_for_function("(said) => document.querySelector('.ag-announcer').textContent.startsWith(said)", arg=said)
    assert page.locator('.ag-announcer[role="status"]').count() == 1 and page.evaluate(ON_CARD)
    assert page.locator(".ag-card").get_attribute("aria-label") == f"Item {second}"
    page.evaluate("() => { const c = document.querySelector('.ag-card'); c.dataset.agState = 'error'; }")
    assert _contrast(page, ".ag-card .ag-status") >= 4.5


def test_a_skip_before_any_grade_is_undone_by_u(browser, shared_server):
    """The grader's first action a skip: U takes it back (the item returns to the card and is not skipped any
    more), where the card refused U as 'you have no grade yet'."""
    store, pid, page = graded_project_page(browser, shared_server, "Undo a first skip", "first-skipper")
    skipped = page.locator(".ag-card").get_attribute("data-ag-item")
    page.keyboard.press("s")
    page.wait_for_function(
        "(s) => { const c = document.querySelector('.ag-card'); return c.dataset.agItem && c.dataset.agItem !== s; }",
        arg=skipped,
        timeout=TIMEOUT_MS,
    )
    page.keyboard.press("u")
    page.wait_for_function(
        "(s) => document.querySelector('.ag-card').dataset.agItem === s", arg=skipped, timeout=TIMEOUT_MS
    )
    assert store.skipped_positions(pid) == set() and store.grades(pid).empty


def test_keys_pressed_before_the_first_card_do_not_rename_the_grader(browser, shared_server):
    """Open demo: Y and N pressed right after Enter in the name field, before the first card comes, went into the
    field, and the card taking the focus committed them as the name ("KimYNYNY", its grades under it; grader's
    review). The field gets its name back and nothing is graded with those keys."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "app"
    store = Store.open(shared_server.db_url)
    files = [(n, (data / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Early keys", *files, start=False)
    start_preparation(store, pid, wait=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{shared_server.url}/grade?project={pid}")
    name = page.get_by_label("Your name (grader)")
    name.fill("kim")
    name.press("Enter")
    page.keyboard.type("yny")  # at once: the card is not there yet, the field has the focus
    page.locator(".ag-card").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.classList.contains('ag-card')", timeout=TIMEOUT_MS
    )
    assert name.input_value() == "kim"
    shown_for(page, MIN_VIEW_S)
    page.keyboard.press("n")
    page.wait_for_function("() => document.querySelector('.ag-card').dataset.agState === 'saved'", timeout=TIMEOUT_MS)
    assert store.grades(pid)["grader"].tolist() == ["kim"]
    assert page.evaluate("new URLSearchParams(location.search).get('grader')") == "kim"


def test_a_card_waiting_on_other_graders_holds_takes_an_item_when_one_lapses(browser, shared_server):
    """Every item held by another grader: the card says so, and takes an item by itself once a hold lapses (it
    said "reload to check" and kept saying it; grader's review)."""
    from pathlib import Path

    from sqlalchemy import update

    from core.services import reservations
    from core.stats.design import prepared_design
    from core.store.models import Reservation, utcnow

    data = Path(__file__).resolve().parents[1] / "data" / "app"
    store = Store.open(shared_server.db_url)
    files = [(n, (data / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "All held", *files, start=False)
    start_preparation(store, pid, wait=True)
    design = prepared_design(store.load_items(pid))
    holders = [f"g{k}" for k in range(design.N)]
    held = {reservations.claim(store, pid, design, 0, name) for name in holders}
    assert None not in held and len(held) == design.N
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{shared_server.url}/grade?project={pid}&grader=late")
    page.locator(".ag-empty.ag-held").wait_for(timeout=TIMEOUT_MS)
    with store.session() as s, s.begin():
        s.execute(update(Reservation).where(Reservation.grader == "g0").values(expires_at=utcnow()))
    page.locator('.ag-card:not([data-ag-item=""])').wait_for(timeout=TIMEOUT_MS)  # no reload: it looked again


CONTRAST = """(selector) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 4).map(Number);
  let node = document.querySelector(selector), back = null;
  const fore = rgb(getComputedStyle(node).color);
  for (let n = node; n && !back; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length < 4 || c[3] > 0) back = c;
  }
  return [fore, back || [255, 255, 255]];
}"""
"""The computed colour of the first element ``selector`` matches and of the first opaque background behind it."""


def _contrast(page, selector: str) -> float:
    """WCAG 2's contrast ratio of the element's text on its background: (L1 + 0.05) / (L2 + 0.05)."""

    def luminance(rgb) -> float:
        c = [v / 255 for v in rgb[:3]]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    fore, back = (luminance(c) for c in page.evaluate(CONTRAST, selector))
    return (max(fore, back) + 0.05) / (min(fore, back) + 0.05)
