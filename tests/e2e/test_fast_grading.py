"""The fast grading route (/grade-fast, core/api/fast.py) in Chromium on the served app with sign-in: the
HttpOnly session cookie is its only credential, each grade asks for the next card in the same round trip,
the item expected next is painted while a press is saved, and every grade is stored on the item the page
showed when its key was pressed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from core.services import auth, sessions, team
from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import TIMEOUT_MS
from core.testing.waiting import until

if TYPE_CHECKING:  # playwright is optional: the e2e tests are skipped without it (tests/conftest.py)
    from playwright.sync_api import Page

pytestmark = pytest.mark.e2e
DATA = Path(__file__).resolve().parents[1] / "data" / "app"
CARD_READY = """(previous) => { const c = document.getElementById('card');
  return c !== null && c.dataset.state === 'ready' && c.dataset.item && c.dataset.item !== previous; }"""


def _fast_page(browser, server, grader: str) -> tuple[Store, int, Page]:
    """A new prepared project (no minimum viewing time) and its /grade-fast page, signed in as ``grader``."""
    store = Store.open(server.db_url)
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, f"Fast grading ({grader})", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, grader, auth.GRADER, password="a long enough password")
    team.assign(store, auth.OPERATOR, pid, grader)
    token = sessions.start(store, auth.sign_in(store, grader, "a long enough password"))
    context = browser.new_context()
    assert context.new_page().goto(f"{server.url}/grade-fast?project={pid}").url.rstrip("/") == server.url  # no cookie
    context.add_cookies([{"name": "activegrade_session", "value": token, "url": server.url, "httpOnly": True}])
    page = context.new_page()
    page.goto(f"{server.url}/grade-fast?project={pid}")
    return store, pid, page


def test_every_fast_grade_lands_on_the_item_shown(browser, shared_signed_in_server):
    store, pid, page = _fast_page(browser, shared_signed_in_server, "fast-grader")
    assert "activegrade_session" not in page.evaluate("document.cookie")  # out of the page's reach
    shown, pressed, previous = [], [], ""
    for n in range(15):
        page.wait_for_function(CARD_READY, arg=previous, timeout=TIMEOUT_MS)
        previous = page.get_attribute("#card", "data-item")
        key = "1" if n % 3 else "2"
        shown.append(previous)
        pressed.append(key)
        page.keyboard.press(key)
    page.wait_for_function(CARD_READY, arg=previous, timeout=TIMEOUT_MS)
    grades = store.grades(pid).sort_values("id")
    items = store.load_items(pid)["id"].astype(str).to_numpy()
    assert [items[p] for p in grades["position"]] == shown
    labels = {"1": "Correct", "2": "Incorrect"}
    assert grades["label"].tolist() == [labels[k] for k in pressed]
    assert set(grades["grader"]) == {"fast-grader"}
    ahead, replaced = (int(page.get_attribute("#card", f"data-{n}") or 0) for n in ("ahead", "replaced"))
    assert ahead == 15 and replaced <= 1  # each press painted the item expected next; the queue kept to it


PRESS_WHILE_SENDING = """() => { const seen = [];
  for (const key of ["1", "2", "s"]) {  // one task: the second and third keys come while the first is in flight
    document.dispatchEvent(new KeyboardEvent("keydown", {key}));
    const c = document.getElementById("card");
    seen.push([c.dataset.item, c.dataset.state, document.getElementById("status").textContent,
               document.getElementById("notice")?.textContent ?? ""]);
  }
  return seen; }"""
CARD_SETTLED = """(sent) => { const c = document.getElementById('card');
  return c.dataset.sent === String(sent) && c.dataset.state === 'ready'; }"""


def test_a_grade_key_pressed_while_saving_is_refused_on_screen_and_a_skip_is_kept(browser, shared_signed_in_server):
    store, pid, page = _fast_page(browser, shared_signed_in_server, "fast-pressing-grader")
    page.wait_for_function(CARD_READY, arg="", timeout=TIMEOUT_MS)
    first = page.get_attribute("#card", "data-item")
    seen = page.evaluate(PRESS_WHILE_SENDING)
    second = seen[0][0]  # painted at once, before the grade is saved, and not yet pressable
    assert second != first and seen[0][1] == "pending" and seen[0][2] == f"Saving Correct for {first}..."
    assert seen[1][3] == "2 not taken: still saving the last grade, press again once the card is ready"
    assert seen[2][3] == "S kept: it is carried out once the last press is answered"
    page.wait_for_function(CARD_SETTLED, arg=2, timeout=TIMEOUT_MS)
    assert page.get_attribute("#card", "data-refused") == "1" and page.get_attribute("#card", "data-kept") == "1"
    assert page.text_content("#status").startswith("skipped")  # the kept skip, on the card it was pressed on
    grades = store.grades(pid)
    items = store.load_items(pid)["id"].astype(str).to_numpy()
    assert [items[p] for p in grades["position"]] == [first] and grades["label"].tolist() == ["Correct"]
    assert [items[p] for p in store.skipped_positions(pid)] == [second]


NOT_SAVED = {"status": "not_saved", "message": "the database failed (OperationalError); send it again"}


def _grades_call(url: str) -> bool:
    return "/grades" in url


PROBE = "() => fetch('grades-probe').then((r) => r.status)"
"""A call the refusal's route answers and the server never sees: the route is in place once it says 503 (a full
run once saw the press reach the server and its grade saved, as if the route were not yet in place)."""


def _refuse_grades(page: Page) -> None:
    """Every /grades call answered 503 "not saved" in the page, from the moment this returns (PROBE)."""
    page.route(_grades_call, lambda route: route.fulfill(status=503, json=NOT_SAVED | {"error": {}}))
    until(lambda: page.evaluate(PROBE) == 503, timeout=TIMEOUT_MS / 1000, what="the refusal to answer a /grades call")


def test_a_grade_not_saved_brings_its_card_back_and_a_press_then_grades_it(browser, shared_signed_in_server):
    """The next card is painted while the grade is saved; the server's refusal puts the graded card back on
    screen, pressable, with the server's words, and a press then grades that card."""
    store, pid, page = _fast_page(browser, shared_signed_in_server, "fast-refused-grader")
    page.wait_for_function(CARD_READY, arg="", timeout=TIMEOUT_MS)
    first = page.get_attribute("#card", "data-item")
    _refuse_grades(page)
    page.keyboard.press("1")
    page.wait_for_function(CARD_SETTLED, arg=1, timeout=TIMEOUT_MS)
    assert page.get_attribute("#card", "data-item") == first and page.get_attribute("#card", "data-ahead") == "1"
    assert page.text_content("#status") == "Not saved: " + NOT_SAVED["message"]
    assert store.grades(pid).empty
    page.unroute(_grades_call)
    page.keyboard.press("2")
    page.wait_for_function(CARD_READY, arg=first, timeout=TIMEOUT_MS)
    grades = store.grades(pid)
    items = store.load_items(pid)["id"].astype(str).to_numpy()
    assert [items[p] for p in grades["position"]] == [first] and grades["label"].tolist() == ["Incorrect"]


def test_the_open_demos_fast_page_grades_under_the_name_in_its_url(browser, shared_server):
    """The open demo has no sessions: the page answers this machine's browser as the demo's user named by
    ``&grader=`` (core.api.http.open_demo_user), and every call it makes carries that name."""
    store = Store.open(shared_server.db_url)
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Fast grading (open demo)", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    page = browser.new_page()
    page.goto(f"{shared_server.url}/grade-fast?project={pid}&grader=fast-demo")
    previous = ""
    for _ in range(3):
        page.wait_for_function(CARD_READY, arg=previous, timeout=TIMEOUT_MS)
        previous = page.get_attribute("#card", "data-item")
        page.keyboard.press("1")
    page.wait_for_function(CARD_READY, arg=previous, timeout=TIMEOUT_MS)
    assert store.grades(pid)["grader"].tolist() == ["fast-demo"] * 3


def test_undo_on_the_fast_page_brings_back_the_last_skip_then_the_last_grade(browser, shared_signed_in_server):
    """U undoes the grader's last skip or grade (the API's undo) and shows the item it brought back; every
    answer names its item, and the card shows the reference answer the project shows graders."""
    store, pid, page = _fast_page(browser, shared_signed_in_server, "fast-undoing-grader")
    items = store.load_items(pid).set_index("id")
    page.wait_for_function(CARD_READY, arg="", timeout=TIMEOUT_MS)
    graded = page.get_attribute("#card", "data-item")
    assert page.text_content("#status") == f"Item {graded} on the card"  # it said "Loading..." on
    assert page.text_content("#reference") == str(items.loc[graded, "reference"])
    assert page.is_visible("#reference-block")
    page.keyboard.press("1")
    page.wait_for_function(CARD_READY, arg=graded, timeout=TIMEOUT_MS)
    skipped = page.get_attribute("#card", "data-item")
    assert page.text_content("#status") == f"saved: Correct (item {graded}). Now item {skipped}"  # both named
    page.keyboard.press("s")
    page.wait_for_function(CARD_READY, arg=skipped, timeout=TIMEOUT_MS)
    shown = page.get_attribute("#card", "data-item")  # read before the press: after it, the undo may be done
    page.keyboard.press("u")
    page.wait_for_function(CARD_READY, arg=shown, timeout=TIMEOUT_MS)
    assert page.get_attribute("#card", "data-item") == skipped
    assert page.text_content("#status") == f"undone: the skipped item is back (item {skipped})"
    assert store.skipped_positions(pid) == set()
    page.keyboard.press("u")
    page.wait_for_function(CARD_READY, arg=skipped, timeout=TIMEOUT_MS)
    assert page.get_attribute("#card", "data-item") == graded and store.grades(pid).empty
