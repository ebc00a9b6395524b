"""The presenter view is one screen with nothing else on it (issue 28), in Chromium at 1920x1080, 1400x1000 and
1280x720, for a one-question project and a rubric of five criteria: no sidebar, no banner, the page does not
scroll and the chart's bottom (its x axis) is inside the window; a button puts the page in full screen and a
link leads back to the Dashboard."""

from __future__ import annotations

import pytest

from core.scales import BINARY
from core.services.project import create_project, start_preparation
from core.services.reservations import record_card, submit
from core.store import Store
from core.testing.appserver import ROOT, TIMEOUT_MS
from tests.test_rubric import CRITERIA
from tests.test_rubric_reading import CARDS, _answers

pytestmark = pytest.mark.e2e
BOX = "(selector) => { const e = document.querySelector(selector); if (!e) return null; const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, width: r.width, height: r.height}; }"
CHART = '[data-testid="stVegaLiteChart"]'
SETTLED = """([selector, frames]) => {  // the chart drawn, and its box unchanged for ``frames`` animation frames
  const e = document.querySelector(selector);
  const r = e && e.getBoundingClientRect();
  if (!r || r.height < 100) return false;
  const now = `${r.top},${r.bottom},${r.width},${document.documentElement.scrollHeight}`;
  window.agSettled = window.agSettled?.box === now ? {box: now, count: window.agSettled.count + 1} : {box: now, count: 0};
  return window.agSettled.count >= frames;
}"""
SIZES = [(1920, 1080), (1400, 1000), (1280, 720)]
FIVE = [*CRITERIA, {"name": "concise", "scale": {"kind": "likert"}, "required": False}]


def graded_project(store: Store, name: str, rubric: bool) -> int:
    """The app tests' 40-item pool, prepared, with 24 items graded: one question, or a rubric of five criteria."""
    files = [(n, (ROOT / "tests" / "data" / "app" / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    pid = create_project(store, name, *files, {"criteria": FIVE} if rubric else {}, start=False)
    start_preparation(store, pid, wait=True)
    if rubric:
        card = store.project(pid).settings.rubric
        for position in range(CARDS):
            record_card(store, pid, position, card.card_values(_answers(position)), "ann", seconds=1.5, rubric=True)
        return pid
    items = store.load_items(pid)
    for position in range(24):
        submit(store, pid, position, BINARY, "Correct" if items.loc[position, "label"] == 1 else "Incorrect", "ann")
    return pid


@pytest.fixture(scope="module")
def projects(shared_server) -> dict[str, int]:
    store = Store.open(shared_server.db_url)
    return {kind: graded_project(store, f"Presenter {kind}", kind == "rubric") for kind in ("question", "rubric")}


@pytest.mark.parametrize("kind", ["question", "rubric"])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_presenter_view_fits_one_screen(browser, shared_server, projects, artifacts, kind, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{shared_server.url}/presenter?project={projects[kind]}")
    if kind == "rubric":
        page.wait_for_function("() => document.querySelectorAll('.ag-criteria .ag-criterion').length === 5")
    page.wait_for_function(SETTLED, arg=[f"{CHART} svg, {CHART} canvas", 10], polling="raf", timeout=TIMEOUT_MS)
    page.screenshot(path=artifacts / f"presenter-{kind}-{width}x{height}.png")
    box = page.evaluate(BOX, f"{CHART} svg, {CHART} canvas")
    assert box["bottom"] <= height, (box, height)
    assert box["height"] >= 0.3 * height  # the chart fills the screen's lower part, not a thumbnail
    assert page.evaluate("() => document.documentElement.scrollHeight") <= height
    scroller = '[data-testid="stMain"]'  # Streamlit scrolls its main area, not the document
    assert (
        page.evaluate(
            f"() => {{ const m = document.querySelector('{scroller}'); return m.scrollHeight - m.clientHeight; }}"
        )
        <= 0
    )
    for hidden in ('[data-testid="stSidebar"]', ".st-key-open-demo-banner", '[data-testid="stHeader"]'):
        assert page.locator(hidden).count() == 0 or not page.locator(hidden).first.is_visible(), hidden
    page.get_by_role("button", name="Full screen").click()
    page.wait_for_function("() => document.fullscreenElement === document.documentElement", timeout=TIMEOUT_MS)
    page.get_by_role("link", name="Dashboard").click()
    page.wait_for_url("**/dashboard*", timeout=TIMEOUT_MS)
    page.close()
