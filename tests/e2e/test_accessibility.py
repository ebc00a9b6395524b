"""The pages a grader and a manager use most (the Grade page, the fast grading page, the Dashboard, Export), checked by axe-core (the engine of the browsers' accessibility
audits) in Chromium against the served app: no violation of any of its rules (WCAG 2.1 A/AA and its best
practices, such as a main landmark), whatever their impact.

An outside review found, on the Grade page, headings that skipped a level and captions at 3.9:1, and on the
Dashboard a chart read out as "Vega visualization" alone; the keyboard and the screen reader's view of the
card are tests/e2e/test_grading_keys.py's."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from core.testing.appserver import TIMEOUT_MS, graded_project_page, press_grade_key

pytestmark = pytest.mark.e2e


def violations(page) -> list[str]:
    """axe's violations on the page as it is: the rule, its impact and the first element each names."""
    found = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in found]


def test_the_grade_page_the_fast_page_the_dashboard_and_export_pass_axe(browser, shared_server):
    _, pid, page = graded_project_page(browser, shared_server, "Axe", "axe-grader")
    for key in "yny":
        press_grade_key(page, key)
    assert violations(page) == []
    page.goto(f"{shared_server.url}/grade-fast?project={pid}&grader=axe-grader")  # it had no main landmark
    page.wait_for_function("() => document.getElementById('card').dataset.state === 'ready'", timeout=TIMEOUT_MS)
    assert violations(page) == []
    page.goto(f"{shared_server.url}/dashboard?project={pid}")
    page.locator('[data-testid="stVegaLiteChart"][aria-label^="Estimate against the number of grades"]').wait_for(
        timeout=TIMEOUT_MS
    )
    assert violations(page) == []
    page.goto(f"{shared_server.url}/export?project={pid}")  # the report's recompute script scrolled sideways
    page.get_by_text("import numpy as np, pandas as pd").first.wait_for(timeout=TIMEOUT_MS)
    assert violations(page) == []
