"""End to end in a real Chromium: first run lands in the demo, ten grades by keyboard, the dashboard follows.

Screenshots of every page go to artifacts/ (not committed).
"""

from __future__ import annotations

import json

import pytest

from core.scales import BINARY
from core.services.project import create_project, start_preparation
from core.services.reservations import submit
from core.store import Store
from core.testing.appserver import ITEM_SHOWN, PAGE_LINK, ROOT, TIMEOUT_MS, Server, press_grade_key

pytestmark = pytest.mark.e2e
XSS_POOL = [
    {
        "id": "x1",
        "prompt": "Show me <b>bold</b>",
        "response": '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">\n\n'
        "Use `print`:\n\n```python\nprint('hi')\n```\n\n" + "long line\n\n" * 80,
    },
]


def metric_box(page, label: str):
    """The metric whose label is ``label`` exactly ("Items", not "Items graded")."""
    return page.locator('[data-testid="stMetric"]').filter(has=page.get_by_text(label, exact=True)).first


def metric(page, label: str) -> str:
    return metric_box(page, label).locator('[data-testid="stMetricValue"]').inner_text()


def open_page(page, title: str) -> None:
    page.locator(PAGE_LINK).filter(has_text=title).click()
    page.get_by_role("heading", name=title, exact=True, level=1).wait_for(timeout=TIMEOUT_MS)


def test_demo_grade_by_keyboard_and_watch_the_dashboard(browser, server, artifacts):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server.url)
    # first run: the demo is created and prepared without any click
    page.get_by_role("heading", name="Demo", exact=True).wait_for(timeout=TIMEOUT_MS)
    metric_box(page, "Items").wait_for(timeout=TIMEOUT_MS)
    assert metric(page, "Items") == "40"
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "projects.png", full_page=True)

    page.get_by_label("Your name (grader)").fill("e2e")
    page.get_by_label("Your name (grader)").press("Enter")
    open_page(page, "Grade")
    page.locator(".ag-progress", has_text="0 of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "grade.png", full_page=True)
    page.get_by_role("heading", name="Grade", exact=True, level=1).click()  # focus away from any text box
    for k in range(1, 11):
        press_grade_key(page, "y" if k % 3 else "n")
        page.locator(".ag-progress", has_text=f"{k} of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    store = Store.open(server.db_url)
    demo = store.project_by_name("Demo")
    grades = store.grades(demo.id)
    assert len(grades) == 10 and set(grades["grader"]) == {"e2e"}
    assert grades["label"].tolist().count("Incorrect") == 3
    assert grades["seconds"].notna().all()

    open_page(page, "Dashboard")
    page.locator('[data-testid="stMetric"]').filter(has_text="Graded items").wait_for(timeout=TIMEOUT_MS)
    assert metric(page, "Graded items") == "10 of 40"
    page.screenshot(path=artifacts / "dashboard.png", full_page=True)
    # another grader works elsewhere: the open dashboard follows by itself
    graded = set(store.graded_positions(demo.id))
    for position in [p for p in range(40) if p not in graded][:5]:
        submit(store, demo.id, position, BINARY, "Correct", "colleague")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMetricValue]')].some(e => e.innerText === '15 of 40')",
        timeout=TIMEOUT_MS,
    )
    page.screenshot(path=artifacts / "dashboard-updated.png", full_page=True)

    open_page(page, "Export")
    page.get_by_text("Estimated mean grade").first.wait_for(timeout=TIMEOUT_MS)
    with page.expect_download() as download:
        page.get_by_role("button", name="Report (JSON)").click()
    report = json.loads(download.value.path().read_text())
    assert report["estimate"]["grades"] == 15 and report["seed"] == 0
    page.screenshot(path=artifacts / "export.png", full_page=True)

    open_page(page, "Simulate")
    page.get_by_role("button", name="Run the simulation").click()
    page.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / "simulate.png", full_page=True)


def test_responses_render_as_markdown_never_as_html(browser, shared_server, artifacts, tmp_path):
    pool = tmp_path / "xss.jsonl"
    pool.write_text("\n".join(json.dumps(r) for r in XSS_POOL) + "\n")
    server = shared_server
    store = Store.open(server.db_url)
    project_id = create_project(store, "XSS", (pool.name, pool.read_bytes()), start=False)
    start_preparation(store, project_id, wait=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server.url}/grade?project={project_id}&grader=e2e")
    page.get_by_text("Response to grade").wait_for(timeout=TIMEOUT_MS)
    page.locator("pre code").filter(has_text="print('hi')").wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate("window.__xss") is None
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("b").filter(has_text="bold").count() == 0
    page.screenshot(path=artifacts / "grade-unsafe-input.png", full_page=True)


def shows_prompt(page, prompt: str) -> None:
    """Wait until the grade page shows ``prompt`` (the queue's next item)."""
    page.locator(".ag-prompt p").filter(has_text=prompt).first.wait_for(timeout=TIMEOUT_MS)


def test_second_browser_and_restart_resume_where_the_project_stands(browser, server, artifacts, tmp_path):
    from core.services.grading import queue_state
    from core.stats.design import prepared_design
    from core.stats.queue import next_item

    store = Store.open(server.db_url)
    files = [(name, (ROOT / "tests" / "data" / "app" / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    project_id = create_project(store, "Resume", *files, start=False)
    start_preparation(store, project_id, wait=True)
    grade_url = f"{server.url}/grade?project={project_id}&grader=ann"
    first = browser.new_context().new_page()
    first.goto(grade_url)
    first.locator(".ag-progress", has_text="0 of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    first.wait_for_function(f"() => ({ITEM_SHOWN})() !== null", timeout=TIMEOUT_MS)
    first.get_by_role("heading", name="Grade", exact=True, level=1).click()
    for k in range(1, 4):
        press_grade_key(first, "n")
        first.locator(".ag-progress", has_text=f"{k} of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    items = store.load_items(project_id)
    upcoming = next_item(prepared_design(items), queue_state(store, project_id), 0)  # the project's design
    expected = str(items.loc[upcoming, "prompt"])
    shows_prompt(first, expected)
    first.context.close()  # the tab is closed
    second = browser.new_context().new_page()  # another browser: no shared cookies or storage
    second.goto(grade_url)
    second.locator(".ag-progress", has_text="3 of 40 items graded").wait_for(timeout=TIMEOUT_MS)
    shows_prompt(second, expected)
    second.context.close()
    server.stop()
    with Server(server.db_url, ROOT / "tests" / "data" / "app", tmp_path / "restart.log") as restarted:
        page = browser.new_page()
        page.goto(f"{restarted.url}/grade?project={project_id}&grader=ann")
        page.locator(".ag-progress", has_text="3 of 40 items graded").wait_for(timeout=TIMEOUT_MS)
        shows_prompt(page, expected)
        assert Store.open(server.db_url).grades(project_id)["label"].tolist() == ["Incorrect"] * 3
