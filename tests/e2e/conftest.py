"""Fixtures for the end-to-end tests: the app served on a temporary database (Chromium and
artifacts/ come from tests/conftest.py)."""

from __future__ import annotations

import pytest

from core.testing.appserver import ROOT, Server


@pytest.fixture
def server(tmp_path, artifacts):
    """The app on a fresh SQLite database, with tests/data/app as its demo pool."""
    app = Server(f"sqlite:///{tmp_path / 'e2e.db'}", ROOT / "tests" / "data" / "app", artifacts / "streamlit.log")
    yield app
    app.stop()
