"""Screenshots for project managers and demos (issue 15): Projects (setup), Dashboard, Export and the presenter
view at 1280, 900 and 390 px wide, in Chromium, kept in artifacts/ (not committed); no metric's label, value or
note is cut short on any of them."""

from __future__ import annotations

import pytest

from core.scales import BINARY
from core.services.project import create_project, start_preparation
from core.services.reservations import submit
from core.store import Store
from core.testing.appserver import ROOT, TIMEOUT_MS

pytestmark = pytest.mark.e2e
PAGES = {  # url path -> what shows last once the page has drawn its data
    "": '[data-testid="stVegaLiteChart"] >> nth=1',
    "dashboard": "text=/items graded twice/",
    "export": "text=Recompute the estimate",
    "presenter": '[data-testid="stVegaLiteChart"]',
}
CUT_METRICS = """() => [...document.querySelectorAll('[data-testid="stMetric"]')]
    .filter(metric => [...metric.querySelectorAll('div, p, span')].some(e => e.scrollWidth > e.clientWidth + 1))
    .map(metric => metric.innerText)"""
SETTLED = (
    "() => !document.querySelector('[data-stale=\\'true\\']') && !document.querySelector('[data-testid=stSkeleton]')"
)


def test_manager_pages_at_desktop_and_phone_width(browser, shared_server, artifacts):
    server = shared_server
    store = Store.open(server.db_url)
    files = [(name, (ROOT / "tests" / "data" / "app" / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    project_id = create_project(store, "Managers", *files, start=False)
    start_preparation(store, project_id, wait=True)
    items = store.load_items(project_id)
    for position in range(24):
        label = "Correct" if items.loc[position, "label"] == 1 else "Incorrect"
        submit(store, project_id, position, BINARY, label, "ann", seconds=20.0)
        if position % 4 == 0:
            submit(store, project_id, position, BINARY, "Correct", "bob", seconds=30.0)
    for width, height in ((1280, 1800), (900, 2400), (390, 3200)):  # the app scrolls inside a container: tall viewports
        page = browser.new_page(viewport={"width": width, "height": height})
        for path, ready in PAGES.items():
            page.goto(f"{server.url}/{path}?project={project_id}")
            page.locator(ready).first.wait_for(timeout=TIMEOUT_MS)
            page.wait_for_function(SETTLED, timeout=TIMEOUT_MS)
            page.screenshot(path=artifacts / f"{path or 'projects'}-{width}.png", full_page=True)
            assert page.evaluate(CUT_METRICS) == [], f"/{path} at {width} px"
        if width == 1280:  # the one-page HTML report, as downloaded, opened on its own
            page.goto(f"{server.url}/export?project={project_id}")
            with page.expect_download() as download:
                page.get_by_role("button", name="Report (HTML, one page)").click()
            page.set_content(download.value.path().read_text())
            assert page.locator("svg").count() == 2
            page.screenshot(path=artifacts / "report-html.png", full_page=True)
        page.close()
