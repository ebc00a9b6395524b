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


@pytest.fixture
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (scripts/install-system.sh installs it)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
