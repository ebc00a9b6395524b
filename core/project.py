"""Project lifecycle: create a project from uploads, prepare it in the background, open the demo.

Preparation (semantic clustering, entropy, strata) runs in a background
thread of the process that started it; its progress and outcome live in the
database, so a page reload, another browser or a restart sees the same
state and never recomputes finished work. A job whose heartbeat stops
(the process died) is shown as stalled and can be restarted.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.allocation import DEFAULT_N_STRATA, DEFAULT_STRATIFY_BY
from core.errors import InputError
from core.sampling_job import SAMPLING_MESSAGE, sample_project, sampling_request
from core.scales import BINARY
from core.store import ProjectInfo, Store

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"
DEMO_DIR_ENV = "ACTIVEGRADE_DEMO_DIR"  # another folder with pool.jsonl (+ samples.jsonl), e.g. for tests
DEMO_NAME = "Demo"
HEARTBEAT_S = 5.0
STALE_AFTER = timedelta(seconds=60)
PROGRESS_EVERY_S = 0.5

DEFAULT_SETTINGS: dict[str, Any] = {
    "backend": "exact",
    "model": None,
    "threshold": None,
    "n_strata": DEFAULT_N_STRATA,
    "stratify_by": DEFAULT_STRATIFY_BY,
    "proxy": None,  # a numeric pool column as the design's proxy (core.proxy); None: the surrogate's agreement
    "input_format": "auto",  # how the uploads are read (core.readers.FORMATS)
    "columns": "",  # TARGET=SOURCE,... picked after reading (core.readers.parse_columns)
    "scale": BINARY.to_settings(),
    "guidelines": "",
    "show_reference": True,
    "show_signals": False,
    "seed": 0,
    "target_half_width": 0.05,
    "method": "default",  # core.estimate method the report uses
}

_jobs: dict[tuple[str, int], threading.Thread] = {}
_jobs_lock = threading.Lock()


def check_inputs(pool: tuple[str, bytes], samples: tuple[str, bytes] | None, settings: dict[str, Any]) -> None:
    """Validate uploads as the project's settings read them (core.readers.load_project_inputs), and the
    proxy column when one is chosen; raises InputError naming file, row and fix."""
    from core.proxy import proxy_values
    from core.readers import load_project_inputs

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
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    check_inputs(pool, samples, settings)
    if settings.get("sampling"):
        settings["sampling"] = sampling_request(settings["sampling"], pool, samples, settings)
    files = {"pool": pool} | ({"samples": samples} if samples else {})
    project_id = store.create_project(name, settings, files)
    if start:
        start_preparation(store, project_id)
    return project_id


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
    """data/demo/, or the folder named by $ACTIVEGRADE_DEMO_DIR."""
    return Path(os.environ.get(DEMO_DIR_ENV) or DEMO_DIR)


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
    with _jobs_lock:
        job = _jobs.get((str(store.engine.url), project_id))
        return job is not None and job.is_alive()


def start_preparation(store: Store, project_id: int, *, wait: bool = False) -> bool:
    """Start preparing the project in a background thread unless it is ready or already running.

    Returns True when a job was started. ``wait=True`` runs it to the end
    before returning (scripts and tests).
    """
    key = (str(store.engine.url), project_id)
    with _jobs_lock:
        if key in _jobs and _jobs[key].is_alive():
            return False
        if not store.claim_preparation(project_id, stale_before=datetime.now(UTC) - STALE_AFTER):
            return False  # ready, or a live job (here or in another process) holds it
        job = threading.Thread(target=_prepare, args=(store, project_id), daemon=True, name=f"prepare-{project_id}")
        _jobs[key] = job
        job.start()
    if wait:
        job.join()
    return True


def _prepare(store: Store, project_id: int) -> None:
    """The job: load the stored uploads, run core.prepare.prepare_items, save the items."""
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(store, project_id, stop), daemon=True)
    beat.start()
    try:
        from core.prepare import prepare_items
        from core.readers import load_project_inputs

        settings = store.project(project_id).settings
        if settings.get("sampling"):
            sample_project(store, project_id, _progress_writer(store, project_id, SAMPLING_MESSAGE))
        files = store.input_files(project_id)
        inputs = load_project_inputs(files["pool"], files.get("samples"), settings)
        store.set_progress(project_id, 0, len(inputs.pool), "clustering surrogate answers")
        items = prepare_items(
            inputs,
            backend=settings.get("backend", "exact"),
            model=settings.get("model"),
            threshold=settings.get("threshold"),
            n_strata=int(settings.get("n_strata", DEFAULT_N_STRATA)),
            stratify_by=settings.get("stratify_by", DEFAULT_STRATIFY_BY),
            progress=_progress_writer(store, project_id),
            proxy=settings.get("proxy"),
        )
        store.save_items(project_id, items)
    except InputError as exc:
        store.set_status(project_id, "failed", str(exc))
    except Exception as exc:  # noqa: BLE001 - any failure must reach the page, not vanish with the thread
        store.set_status(project_id, "failed", f"{type(exc).__name__}: {exc}")
    finally:
        stop.set()


def _heartbeat(store: Store, project_id: int, stop: threading.Event) -> None:
    """Stamp the project every HEARTBEAT_S until ``stop``. Only the time: rewriting the progress it
    had read could put back an older count than the job wrote meanwhile."""
    while not stop.wait(HEARTBEAT_S):
        store.heartbeat(project_id)


def _progress_writer(store: Store, project_id: int, message: str = "clustering surrogate answers"):
    """A ``progress(done, total)`` callback that writes to the database at most every PROGRESS_EVERY_S."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            store.set_progress(project_id, done, total, message)

    return progress
