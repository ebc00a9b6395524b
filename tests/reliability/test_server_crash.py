"""Crash of the app itself: the Streamlit server killed with SIGKILL while a grader works in Chromium.

After a restart on the same database every grade the page had saved is
there, and the grader, signing in again, continues on the item that was
reserved for them when the server died.
"""

from __future__ import annotations

import signal

import pytest

from core.services import account_writes, auth
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from core.testing.appserver import ITEM_SHOWN, PAGE_LINK, TIMEOUT_MS, Server, press_grade_key

from .conftest import DATA_APP, PASSWORD, sign_in

pytestmark = pytest.mark.e2e
GRADES_BEFORE = 4


def open_grading(page, server, pid: int) -> None:
    sign_in(page, f"{server.url}/?project={pid}", "gus")
    page.locator(PAGE_LINK).filter(has_text="Grade").click()
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    page.get_by_role("heading", name="Grade", exact=True, level=1).click()


def test_sigkill_of_the_server_loses_no_grade_and_grading_resumes(browser, server, tmp_path):
    store = Store.open(server.db_url)
    files = [(name, (DATA_APP / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, "Crash", *files, start=False)
    start_preparation(store, pid, wait=True)
    accounts.assign(store, pid, account_writes.create_account(store, "gus", auth.GRADER, password=PASSWORD).id)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    open_grading(page, server, pid)
    for k in range(1, GRADES_BEFORE + 1):
        press_grade_key(page, "y")
        page.locator(".ag-progress", has_text=f"{k} of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    shown = accounts.held(store, pid, "gus")
    server.process.send_signal(signal.SIGKILL)
    assert server.process.wait(30) == -signal.SIGKILL
    page.close()

    graded = store.grades(pid, include_retracted=True)
    assert len(graded) == GRADES_BEFORE and set(graded["grader"]) == {"gus"} and graded["retracted_at"].isna().all()
    assert shown is not None and shown.position not in set(graded["position"])

    again = Server(server.db_url, tmp_path, tmp_path / "streamlit-restarted.log")
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_grading(page, again, pid)
        page.locator(".ag-progress", has_text=f"{GRADES_BEFORE} of 40 items graded").wait_for(timeout=TIMEOUT_MS)
        assert accounts.held(store, pid, "gus").position == shown.position  # the same item, still theirs
        press_grade_key(page, "n")
        page.locator(".ag-progress", has_text=f"{GRADES_BEFORE + 1} of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    finally:
        again.stop()
    final = store.grades(pid)
    assert len(final) == GRADES_BEFORE + 1 and final.iloc[-1]["position"] == shown.position
    assert final["position"].is_unique
