"""Fixtures for the end-to-end tests: the app served on a temporary database, and a headless Chromium."""
from __future__ import annotations

from pathlib import Path

import pytest

from appserver import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ROOT, Server


@pytest.fixture
def server(tmp_path, artifacts):
    """The app on a fresh SQLite database, with tests/data/app as its demo pool."""
    app = Server(f"sqlite:///{tmp_path / 'e2e.db'}", ROOT / "tests" / "data" / "app", artifacts / "streamlit.log")
    yield app
    app.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can tell a failed test."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def browser(request, artifacts):
    """Headless Chromium; a failed test leaves a screenshot of every open page in artifacts/."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (scripts/install-system.sh installs it)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            for c, context in enumerate(browser.contexts):
                for n, page in enumerate(context.pages):
                    page.screenshot(path=artifacts / f"failed-{request.node.name}-{c}-{n}.png", full_page=True)
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
