"""Hostile input in a real Chromium, signed in as a grader and as an admin.

Every item of the hostile corpus's script/HTML pool (tests/data/hostile/) is
shown on the grade page and graded: no script runs (no dialog, no global set),
no element is injected (no handler attributes, no javascript: links, no
iframes, no style from the data), and the payload shows as literal text. An
upload the corpus says must be refused is refused in the browser with its
specific error, and nothing of it is saved.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from core.services import account_writes, auth
from core.services.project import create_project, start_preparation
from core.store import Store, accounts
from core.testing.appserver import ITEM_SHOWN, PAGE_LINK, TIMEOUT_MS, press_grade_key

from .conftest import PASSWORD, ROOT, sign_in

pytestmark = pytest.mark.e2e
HOSTILE = ROOT / "tests" / "data" / "hostile"

INJECTED = """() => {
  const app = document.querySelector('[data-testid="stMain"]') || document.body;
  return {
    handlers: app.querySelectorAll('[onerror],[onload],[onmouseover],[onclick]').length,
    js_links: app.querySelectorAll('a[href^="javascript:"],iframe,object,embed,svg[onload]').length,
    // the grading card's own stylesheet sits beside its content (ui/grading_card.css); item text is inside .ag-host
    styles: [...app.querySelectorAll('style:not([data-emotion]):not([data-styled])')]
      .filter((s) => s.closest('.ag-host') !== null || !s.closest('[data-testid^="stBidiComponent"]')?.querySelector(':scope > .ag-host')).length,
    bold: app.querySelectorAll('b').length,
    html_images: app.querySelectorAll('img[src="x"]').length,
    body_hidden: getComputedStyle(document.body).display === 'none',
  };
}"""


def corpus():
    spec = importlib.util.spec_from_file_location("hostile_corpus", HOSTILE / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_script_and_html_in_items_are_shown_inert(browser, shared_signed_in_server):
    server = shared_signed_in_server
    store = Store.open(server.db_url)
    files = [(name, (HOSTILE / name).read_bytes()) for name in ("html_script.jsonl", "html_script_samples.jsonl")]
    pid = create_project(store, "Hostile", *files, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    grader = account_writes.create_account(store, "hilda", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)
    n_items = store.item_count(pid)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_in(page, f"{server.url}/?project={pid}", "hilda")
    page.locator(PAGE_LINK).filter(has_text="Grade").click()
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    prompt_of = dict(zip(store.load_items(pid)["id"], store.load_items(pid)["prompt"]))
    prompts = set(prompt_of.values())
    # HTML payloads show as literal text; those with markdown syntax (* [ $) render as markdown, inertly
    literal = {p for p in prompts if "<" in p and not set("*[$") & set(p)}
    assert len(literal) >= 4
    seen = set()
    for k in range(n_items):
        page.get_by_role("heading", name="Grade", exact=True, level=1).click()
        page.mouse.move(700, 500)  # hover over the item: an onmouseover payload would fire now
        prompt = prompt_of[page.evaluate(ITEM_SHOWN).removeprefix("Item ").strip()]
        if prompt in literal:  # the payload is on screen as literal text
            page.locator('[data-testid="stMain"]').get_by_text(prompt).first.wait_for(timeout=TIMEOUT_MS)
            seen.add(prompt)
        assert page.evaluate(INJECTED) == {
            "handlers": 0,
            "js_links": 0,
            "styles": 0,
            "bold": 0,
            "html_images": 0,
            "body_hidden": False,
        }
        if k < n_items - 1:
            press_grade_key(page, "y")
    assert seen == literal
    assert dialogs == [] and page.evaluate("typeof window.xss") == "undefined"
    assert len(store.grades(pid)) == n_items - 1 and set(store.grades(pid)["grader"]) == {"hilda"}


def test_a_refused_upload_is_reported_and_nothing_is_saved(browser, server):
    store = Store.open(server.db_url)
    account_writes.create_account(store, "adam", auth.ADMIN, password=PASSWORD)
    refused = [e for e in corpus().HOSTILE_CORPUS if e.error and e.name == "duplicate_ids.csv"][0]
    name, content = refused.upload()
    path = Path(server.db_url.removeprefix("sqlite:///")).parent / name
    path.write_bytes(content)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    sign_in(page, server.url, "adam")
    # with no project yet, the "New project" form is open
    page.get_by_label("Name", exact=True).fill("Should not exist")
    # the file must have reached the server before the form is sent, not only be listed in the browser
    with page.expect_response(
        lambda r: "/_stcore/upload_file" in r.url and r.request.method == "PUT", timeout=TIMEOUT_MS
    ) as uploaded:
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(path))
    assert uploaded.value.ok
    page.get_by_text(name).first.wait_for(timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Create project").click()
    page.locator('[data-testid="stAlertContentError"]').filter(has_text=refused.error).wait_for(timeout=TIMEOUT_MS)
    assert store.project_by_name("Should not exist") is None
    assert store.projects() == []


def test_items_that_name_outside_urls_make_the_browser_fetch_nothing_outside(browser, server, tmp_path):
    """Markdown images of every form in the prompt, the response and the id, and an http(s) ``image``
    column, with the default settings (external images off): every request the grader's browser makes
    goes to the app's own address."""
    from tests.test_markup import IMAGE_ATTACKS

    store = Store.open(server.db_url)
    rows = [
        {
            "id": f"![i{k}](https://tracker.example/id{k}.png)",
            "prompt": attack,
            "response": IMAGE_ATTACKS[-1 - k],
            "image": f"https://tracker.example/column{k}.png",
        }
        for k, attack in enumerate(IMAGE_ATTACKS)
    ]
    pool = "".join(json.dumps(row) + "\n" for row in rows).encode()
    pid = create_project(store, "Trackers", ("pool.jsonl", pool), None, start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    grader = account_writes.create_account(store, "tess", auth.GRADER, password=PASSWORD)
    accounts.assign(store, pid, grader.id)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    sign_in(page, f"{server.url}/?project={pid}", "tess")
    page.locator(PAGE_LINK).filter(has_text="Grade").click()
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    for _ in range(len(rows) - 1):
        press_grade_key(page, "y")
    assert len(store.grades(pid)) == len(rows) - 1  # every item was on screen
    outside = [url for url in requested if urlsplit(url).hostname not in ("127.0.0.1", None)]
    assert requested and outside == []
