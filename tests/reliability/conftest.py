"""Fixtures for the reliability tests: a Store on SQLite or on the PostgreSQL server scripts/test.sh starts,
and the app served for a signed-in browser (synthetic projects of any size: core.testing.workload)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import config
from core.store import Store
from core.testing.appserver import Server
from tests import browser_sign_in
from tests.pg_schema import throwaway_schema_url

ROOT = Path(__file__).resolve().parents[2]

PASSWORD = "reliability-test-password"
DATA_APP = ROOT / "tests" / "data" / "app"  # the 40-item arithmetic pool the app tests use

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def db_url(request, tmp_path):
    """A fresh database URL: SQLite file, or a throw-away schema of the test PostgreSQL server."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'reliability.db'}"
        return
    with throwaway_schema_url() as url:
        yield url


@pytest.fixture
def store(db_url) -> Store:
    s = Store.open(db_url)
    yield s
    s.engine.dispose()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """The app served by `streamlit run` on a fresh SQLite file, with sign-in (no open demo)."""
    monkeypatch.setenv(config.OPEN_DEMO, "0")
    app = Server(f"sqlite:///{tmp_path / 'app.db'}", tmp_path, tmp_path / "streamlit.log")
    yield app
    app.stop()


def sign_in(page, url: str, name: str) -> None:
    """Open ``url`` and sign in as ``name`` with PASSWORD (tests.browser_sign_in.sign_in)."""
    browser_sign_in.sign_in(page, url, name, PASSWORD)
