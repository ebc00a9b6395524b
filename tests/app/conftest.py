"""Fixtures for the app's AppTest flows: a temporary database and a tiny prepared project."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.services.project import create_project, start_preparation
from core.store import Store

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
DATA = ROOT / "tests" / "data" / "app"


def upload(name: str) -> tuple[str, bytes]:
    path = DATA / name
    return path.name, path.read_bytes()


@pytest.fixture
def db_url(tmp_path, monkeypatch) -> str:
    """A fresh SQLite database for the app, and tests/data/app as the demo folder.

    AppTest presses within milliseconds of a render, so the minimum viewing time
    (core.services.grading.min_view_s) is off here; the tests of that check put the project's own back.
    """
    monkeypatch.setattr("core.services.grading.min_view_s", lambda settings: 0.0)
    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("ACTIVEGRADE_DB_URL", url)
    monkeypatch.setenv("ACTIVEGRADE_DEMO_DIR", str(DATA))
    monkeypatch.setenv("ACTIVEGRADE_OPEN_DEMO", "1")  # these flows use the open demo; tests/reliability signs in
    return url


@pytest.fixture
def store(db_url) -> Store:
    return Store.open(db_url)


@pytest.fixture
def project_id(store) -> int:
    """A prepared 40-item arithmetic project (binary scale)."""
    pid = create_project(store, "Arithmetic", upload("pool.jsonl"), upload("samples.jsonl"), start=False)
    start_preparation(store, pid, wait=True)
    assert store.project(pid).status == "ready", store.project(pid).error
    return pid


def _open_app(page: str | None = None, *, project_id: int | None = None, grader: str = "ann") -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)  # a deadline, generous for a busy machine
    if project_id is not None:
        at.query_params["project"] = str(project_id)
    if grader:
        at.query_params["grader"] = grader
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def open_app(db_url):
    """open_app(page=None, project_id=None, grader="ann"): the app at ``page`` (e.g.
    "app_pages/grade.py") with the project and grader in the URL, run once."""
    return _open_app


@pytest.fixture
def uploads() -> dict[str, tuple[str, bytes]]:
    """The tiny pool's files as (name, bytes) uploads."""
    return {name: upload(name) for name in ("pool.jsonl", "samples.jsonl")}
