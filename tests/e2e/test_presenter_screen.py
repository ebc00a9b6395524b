"""The presenter view is one screen with nothing else on it (issue 28), in Chromium at 1920x1080 and
1400x1000: no sidebar, no banner, and the chart's bottom inside the window."""

from __future__ import annotations

import pytest

from core.scales import BINARY
from core.services.project import create_project, start_preparation
from core.services.reservations import submit
from core.store import Store
from core.testing.appserver import ROOT, TIMEOUT_MS

pytestmark = pytest.mark.e2e
BOX = "(selector) => { const e = document.querySelector(selector); if (!e) return null; const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, width: r.width, height: r.height}; }"


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1400, 1000)])
def test_the_presenter_view_fits_one_screen(browser, shared_server, artifacts, width, height):
    store = Store.open(shared_server.db_url)
    files = [(name, (ROOT / "tests" / "data" / "app" / name).read_bytes()) for name in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, f"Presenter {width}", *files, start=False)
    start_preparation(store, pid, wait=True)
    items = store.load_items(pid)
    for position in range(24):
        submit(store, pid, position, BINARY, "Correct" if items.loc[position, "label"] == 1 else "Incorrect", "ann")
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{shared_server.url}/presenter?project={pid}")
    chart = '[data-testid="stVegaLiteChart"]'
    page.wait_for_function(f"() => ({BOX})('{chart} svg, {chart} canvas')?.height > 100", timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)  # the chart's final layout after its container settled; the check below is exact
    page.screenshot(path=artifacts / f"presenter-{width}x{height}.png")
    box = page.evaluate(BOX, f"{chart} svg, {chart} canvas")
    assert box["bottom"] <= height, (box, height)
    assert box["height"] >= 0.35 * height  # the chart fills the screen's lower part, not a thumbnail
    for hidden in ('[data-testid="stSidebar"]', ".st-key-open-demo-banner", '[data-testid="stHeader"]'):
        assert page.locator(hidden).count() == 0 or not page.locator(hidden).first.is_visible(), hidden
