"""A grader changed by an admin mid-session, in a real Chromium against a real server: her next press on the
grading card is not stored, and the page says what happened and that the press was not saved (issue 28: she
used to see a bare sign-in form). Demoted, she is signed out with the reason on the sign-in page; taken off
the project, she stays signed in and the card's fragment says it."""

from __future__ import annotations

import re

import pytest

from core.services import account_writes, auth, grading
from core.store import Store, accounts
from core.testing.appserver import TIMEOUT_MS
from tests.e2e.test_grading_card import N_ITEMS, PASSWORD, card_item, distinct_pool, sign_in, signed_out

pytestmark = pytest.mark.e2e


def alerts(page) -> str:
    """The text of every alert (st.warning, st.error) on the page."""
    return "\n".join(page.locator('[data-testid="stAlert"]').all_inner_texts())


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            lambda store, pid, user: account_writes.set_role(store, user.name, auth.VIEWER),
            "Your role changed from grader to viewer, so you were signed out.",
        ),
        (
            lambda store, pid, user: accounts.unassign(store, pid, user.id),
            "Not allowed: {name} is not assigned to project {pid}; ask an admin to assign you.",
        ),
    ],
    ids=["demoted", "unassigned"],
)
def test_a_grader_changed_mid_session_is_told_her_next_press_was_not_saved(
    browser, shared_signed_in_server, change, reason
):
    server = shared_signed_in_server
    store = Store.open(server.db_url)
    name = f"changed-{len(store.projects())}"
    pid = store.create_project(f"Role change {name}", {"seed": 1}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, distinct_pool(N_ITEMS))
    grader = account_writes.create_account(store, name, auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    sign_in(page, f"{server.url}/grade?project={pid}", name)
    item = card_item(page, grading.MIN_VIEW_S)
    change(store, pid, grader)
    page.keyboard.press("y")
    said = reason.format(name=name, pid=pid)
    page.get_by_text(said, exact=False).wait_for(timeout=TIMEOUT_MS)
    assert re.search(rf"Your last grade \(.+\) of item {item} was not saved\.", alerts(page)), alerts(page)
    assert store.grades(pid).empty
    if "signed out" in said:
        signed_out(page)
