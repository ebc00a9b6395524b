"""Project lifecycle: create a project from uploads, prepare it in the background, open the demo.

Preparation (semantic clustering, entropy, strata) runs in a process of its
own (core.jobs.preparation_job), started by the app: inside the app's server it
would share the interpreter lock with Streamlit's threads, and every model
call (which releases and retakes the lock) would wait for them, 2 to 7 times
slower than the CLI. Scripts and tests that wait for it run it in their own
process. Its progress and outcome live in the database, so a page reload,
another browser or a restart sees the same state and never recomputes
finished work. A job whose heartbeat stops (the process died) is shown as
stalled and can be restarted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core import config
from core.errors import InputError, one_line
from core.inputs.limits import MAX_FILE_NAME_CHARS, MAX_NAME_CHARS, check_length
from core.inputs.markup import MAX_MARKDOWN_CHARS, MAX_NESTING, MAX_TABLE_CELLS, has_image, safe_markdown
from core.jobs.preparation_job import run_preparation
from core.jobs.sampling_job import sampling_request
from core.scales import scale_from_settings
from core.settings import ProjectSettings
from core.store import ProjectInfo, Store

DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"
DEMO_NAME = "Demo"
STALE_AFTER = timedelta(seconds=60)

_jobs: dict[tuple[str, int], subprocess.Popen] = {}
_jobs_lock = threading.Lock()


def check_inputs(pool: tuple[str, bytes], samples: tuple[str, bytes] | None, settings: dict[str, Any]) -> None:
    """Validate uploads as the project's settings read them (core.inputs.readers.load_project_inputs), and the
    proxy column when one is chosen; raises InputError naming file, row and fix."""
    from core.inputs.readers import load_project_inputs
    from core.stats.proxy import proxy_values

    inputs = load_project_inputs(pool, samples, settings)
    if settings.get("proxy"):
        proxy_values(inputs.pool, settings["proxy"], file=pool[0])


def create_project(
    store: Store,
    name: str,
    pool: tuple[str, bytes],
    samples: tuple[str, bytes] | None = None,
    settings: dict[str, Any] | None = None,
    *,
    start: bool = True,
) -> int:
    """Validate the uploads, store them with the settings, and (by default) start preparing.

    Raises InputError for bad input before anything is written.
    """
    check_project_name(name)
    check_length(pool[0], MAX_FILE_NAME_CHARS, "the pool file's name")
    if samples is not None:
        check_length(samples[0], MAX_FILE_NAME_CHARS, "the samples file's name")
    check_settings(settings or {})
    settings = ProjectSettings.from_dict(settings).to_dict()  # defaults filled in, every value checked
    check_inputs(pool, samples, settings)
    if settings.get("sampling"):
        settings["sampling"] = sampling_request(settings["sampling"], pool, samples, settings)
    files = {"pool": pool} | ({"samples": samples} if samples else {})
    project_id = store.create_project(name, settings, files)
    if start:
        start_preparation(store, project_id)
    return project_id


def check_project_name(name: str) -> None:
    """A project name is one line of at most MAX_NAME_CHARS characters with no markdown image (pages show it
    as plain text; this keeps it so wherever it goes)."""
    name = name.strip()
    check_length(name, MAX_NAME_CHARS, "the project name")
    if one_line(name) != name:
        raise InputError("the project name holds a line break or an invisible character", fix="type it on one line")
    if has_image(name):
        raise InputError("the project name holds a markdown image", fix="remove the ![...](...) part")


def check_settings(settings: dict[str, Any]) -> None:
    """Texts in project settings that graders' pages render: the guidelines must render as written
    (core.inputs.markup.safe_markdown: no image, not too large or deeply nested); scale labels are checked
    by core.scales."""
    guidelines = settings.get("guidelines") or ""
    if has_image(guidelines):
        raise InputError(
            "the guidelines hold a markdown image, which every grader's browser would fetch from its server",
            fix="link to the picture instead ([text](url)), or describe it",
        )
    if safe_markdown(guidelines) != guidelines:
        raise InputError(
            "the guidelines are too large or too deeply nested to render quickly",
            fix=f"keep them under {MAX_MARKDOWN_CHARS:,} characters, {MAX_NESTING} levels of nesting "
            f"and {MAX_TABLE_CELLS:,} table cells",
        )
    if settings.get("scale"):
        scale_from_settings(settings)


def open_demo(store: Store, *, start: bool = True) -> int:
    """The demo project, created from data/demo/ on first use; raises InputError while that data is missing."""
    existing = store.project_by_name(DEMO_NAME)
    if existing is not None:
        return existing.id
    folder = demo_dir()
    pool_path = folder / "pool.jsonl"
    samples_path = folder / "samples.jsonl"
    if not pool_path.exists():
        raise InputError(
            "the demo pool is not available yet",
            file=str(pool_path),
            fix="create it (see the README's section on the demo data) or upload your own pool",
        )
    samples = (samples_path.name, samples_path.read_bytes()) if samples_path.exists() else None
    settings = {"guidelines": _demo_guidelines(folder)}
    try:
        return create_project(
            store, DEMO_NAME, (pool_path.name, pool_path.read_bytes()), samples, settings, start=start
        )
    except InputError:
        existing = store.project_by_name(DEMO_NAME)  # another session created it meanwhile
        if existing is None:
            raise
        return existing.id


def demo_dir() -> Path:
    """data/demo/, or the folder named by $ACTIVEGRADE_DEMO_DIR (core.config)."""
    return config.config().demo_dir or DEMO_DIR


def _demo_guidelines(folder: Path) -> str:
    path = folder / "guidelines.md"
    if path.exists():
        return path.read_text(encoding="utf-8")
    return (
        "Grade the **target response** against the prompt and the reference answer.\n\n"
        "- *Correct*: the final answer is right; minor wording differences are fine.\n"
        "- *Incorrect*: the final answer is wrong, missing, or hedged between options.\n"
    )


def is_stalled(info: ProjectInfo, now: datetime | None = None) -> bool:
    """True when the project says 'preparing' but its job's heartbeat stopped."""
    now = now or datetime.now(UTC)
    return info.status == "preparing" and now - info.updated_at > STALE_AFTER


def is_running_here(store: Store, project_id: int) -> bool:
    """Whether a preparation this process started is still at work on the project: its process runs and
    has not written its outcome. Read together, so "ready" or "failed" never comes with a job still here."""
    with _jobs_lock:
        return _running_here(store, project_id)


def _running_here(store: Store, project_id: int) -> bool:
    job = _jobs.get((str(store.engine.url), project_id))
    return job is not None and job.poll() is None and store.project(project_id).status == "preparing"


def start_preparation(store: Store, project_id: int, *, wait: bool = False) -> bool:
    """Start preparing the project unless it is ready or already being prepared.

    Returns True when a job was started: a separate process (core.jobs.preparation_job), or with
    ``wait=True`` (scripts and tests) the preparation itself, run to the end before returning.
    """
    key = (str(store.engine.url), project_id)
    with _jobs_lock:
        if _running_here(store, project_id):
            return False  # a job that wrote its outcome but has not exited yet no longer counts ("Try again")
        if not store.claim_preparation(project_id, stale_before=datetime.now(UTC) - STALE_AFTER):
            return False  # ready, or a live job (here or in another process) holds it
        if not wait:
            _jobs[key] = _spawn(store, project_id)
            return True
    run_preparation(store, project_id)
    return True


def _spawn(store: Store, project_id: int) -> subprocess.Popen:
    """The preparation job in its own Python process, on the same database (its URL passed in the
    environment, not on the command line, where other users could read a password)."""
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        config.DB_URL: store.engine.url.render_as_string(hide_password=False),
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
    }
    return subprocess.Popen([sys.executable, "-m", "core.jobs.preparation_job", str(project_id)], env=env)
