"""Shared fixtures: the labelled pools in ../shared/data (skipped when absent), and a headless
Chromium for the browser tests (skipped when absent)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
from appserver import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_pool(name: str) -> tuple[Path, Path]:
    """Paths of ../shared/data/<name>/pool.jsonl and samples.jsonl, or skip the test."""
    folder = SHARED_DATA / name
    if not (folder / "pool.jsonl").exists():
        pytest.skip(f"{folder} is absent")
    return folder / "pool.jsonl", folder / "samples.jsonl"


@pytest.fixture
def gsm8k() -> tuple[Path, Path]:
    return shared_pool("gsm8k")


@pytest.fixture
def truthfulqa() -> tuple[Path, Path]:
    return shared_pool("truthfulqa")


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
