"""The fast grading route (/grade-fast, core/api/fast.py) in Chromium on the served app with sign-in: the
HttpOnly session cookie is its only credential, each grade asks for the next card in the same round trip,
and every grade is stored on the item the page showed when its key was pressed."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.services import auth, sessions, team
from core.services.project import create_project, start_preparation
from core.store import Store
from core.testing.appserver import TIMEOUT_MS

pytestmark = pytest.mark.e2e
DATA = Path(__file__).resolve().parents[1] / "data" / "app"
CARD_READY = """(previous) => { const c = document.getElementById('card');
  return c !== null && c.dataset.state === 'ready' && c.dataset.item && c.dataset.item !== previous; }"""


def test_every_fast_grade_lands_on_the_item_shown(browser, shared_signed_in_server):
    server = shared_signed_in_server
    store = Store.open(server.db_url)
    files = [(n, (DATA / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Fast grading", *files, {"min_view_s": 0}, start=False)
    start_preparation(store, pid, wait=True)
    team.create_account(store, auth.OPERATOR, "fast-grader", auth.GRADER, password="a long enough password")
    team.assign(store, auth.OPERATOR, pid, "fast-grader")
    token = sessions.start(store, auth.sign_in(store, "fast-grader", "a long enough password"))

    context = browser.new_context()
    assert context.new_page().goto(f"{server.url}/grade-fast?project={pid}").url.rstrip("/") == server.url  # no cookie
    context.add_cookies([{"name": "activegrade_session", "value": token, "url": server.url, "httpOnly": True}])
    page = context.new_page()
    page.goto(f"{server.url}/grade-fast?project={pid}")
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
