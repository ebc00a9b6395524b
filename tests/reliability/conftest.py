"""Fixtures for the reliability tests: a Store on SQLite or on the PostgreSQL server .ci/run starts,
and a prepared synthetic project of any size."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import auth
from core.allocation import Design, design_from_items
from core.store import Store

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from appserver import ITEM_SHOWN, Server, press_grade_key  # noqa: E402,F401
from pg_schema import throwaway_schema_url  # noqa: E402 (tests/, on the path as the package's root)

PASSWORD = "reliability-test-password"
DATA_APP = ROOT / "tests" / "data" / "app"  # the 40-item arithmetic pool the app tests use
TIMEOUT_MS = 30_000

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


def synthetic_items(n: int, n_strata: int = 4, seed: int = 0) -> pd.DataFrame:
    """n prepared items in ``n_strata`` strata, with surrogate agreement and entropy."""
    rng = np.random.default_rng(seed)
    stratum = np.arange(n) % n_strata
    return pd.DataFrame(
        {
            "id": [f"item-{i}" for i in range(n)],
            "prompt": [f"What is {i} + {i}?" for i in range(n)],
            "response": [str(2 * i) for i in range(n)],
            "semantic_entropy": stratum * 0.4 + rng.random(n) * 0.1,
            "agreement": np.clip(1 - stratum / n_strata + rng.normal(0, 0.05, n), 0, 1),
            "stratum": stratum,
        }
    )


def make_project(store: Store, n: int, name: str = "load", settings: dict | None = None) -> tuple[int, Design]:
    """A ready project of ``n`` synthetic items and its design (as the app builds it)."""
    pid = store.create_project(name, {"seed": 3, **(settings or {})}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, synthetic_items(n))
    return pid, design_from_items(store.load_items(pid), stratify_by=None)


@pytest.fixture
def server(tmp_path, monkeypatch):
    """The app served by `streamlit run` on a fresh SQLite file, with sign-in (no open demo)."""
    monkeypatch.setenv(auth.OPEN_DEMO_ENV, "0")
    app = Server(f"sqlite:///{tmp_path / 'app.db'}", tmp_path, tmp_path / "streamlit.log")
    yield app
    app.stop()


def sign_in(page, url: str, name: str) -> None:
    """Open ``url`` and sign in as ``name`` with PASSWORD."""
    page.goto(url)
    page.get_by_role("textbox", name="Name", exact=True).fill(name)
    page.get_by_role("textbox", name="Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {name}").wait_for(timeout=TIMEOUT_MS)
