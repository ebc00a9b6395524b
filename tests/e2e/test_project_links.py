"""Links keep their project (issue 28), in Chromium with real sign-in: the address after a page switch
names the project and opens it in a new tab; a page the role may not see says so."""

from __future__ import annotations

import pytest

from core.services import account_writes, auth
from core.store import Store, accounts
from core.testing.appserver import PAGE_LINK, TIMEOUT_MS, shown_for
from tests.e2e.test_grading_card import PASSWORD, distinct_pool, sign_in

pytestmark = pytest.mark.e2e


def shows_project(page, name: str) -> None:
    """Wait until the sidebar's project chooser shows ``name``."""
    chooser = "(name) => document.querySelector('[data-testid=stSidebar] input[aria-label=Project]')?.value === name"
    page.wait_for_function(chooser, arg=name, timeout=TIMEOUT_MS)


def test_links_keep_their_project_and_a_page_not_allowed_says_so(browser, shared_signed_in_server, artifacts):
    server = shared_signed_in_server
    store = Store.open(server.db_url)
    ids = []
    for name in ("Links one", "Links two"):
        ids.append(store.create_project(name, {"seed": 1}, {"pool": ("pool.jsonl", b"{}\n")}))
        store.save_items(ids[-1], distinct_pool(30))
    account_writes.create_account(store, "links-admin", auth.ADMIN, password=PASSWORD)
    lena = account_writes.create_account(store, "lena", auth.GRADER, password=PASSWORD)
    accounts.assign(store, ids[1], lena.id)

    accounts.record_event(store, "links-admin", "exported", project_id=ids[0])  # her last used: not the one shown
    admin = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = admin.new_page()
    sign_in(page, f"{server.url}/?project={ids[1]}", "links-admin")
    shows_project(page, "Links two")
    for title in ("Dashboard", "Presenter view"):
        with admin.expect_page(timeout=TIMEOUT_MS) as opened:  # a middle click: the link's own address, new tab
            page.locator(PAGE_LINK).filter(has_text=title).click(button="middle")
        shows_project(opened.value, "Links two")
        opened.value.close()
        page.locator(PAGE_LINK).filter(has_text=title).click()
        page.wait_for_url(f"**/{title.split()[0].lower()}?*", timeout=TIMEOUT_MS)
        assert f"project={ids[1]}" in page.url, page.url
        tab = admin.new_page()  # the address as shown, in a new tab
        tab.goto(page.url)
        shows_project(tab, "Links two")
        assert "Open or create a project" not in tab.content() and "Choose a project in" not in tab.content()
        tab.close()

    for name in ("projects", "home"):  # the names people guess for the Projects page, though served at /
        page.goto(f"{server.url}/{name}?project={ids[1]}")
        page.wait_for_url(f"{server.url}/?project={ids[1]}", timeout=TIMEOUT_MS)
        page.get_by_role("heading", name="Projects", exact=True, level=1).wait_for(timeout=TIMEOUT_MS)
        shows_project(page, "Links two")
        assert "Page not found" not in page.content()

    grader = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = grader.new_page()
    sign_in(page, f"{server.url}/team", "lena")
    page.get_by_text("may not open Team").wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "page-not-allowed.png")
    assert "Page not found" not in page.content()
    page.goto(f"{server.url}/grade")  # no project in the URL: her only one
    shown_for(page, 0)
    shows_project(page, "Links two")
    assert page.locator(".ag-card").get_attribute("data-ag-item").startswith("it")
