"""One project's preparation: sample surrogate answers if asked, read the uploads, cluster, score and stratify,
save the items, and say at every stage what is going on.

core.services.project.start_preparation claims the project and runs this in a process of its own,
``python -m core.jobs.preparation_job PROJECT_ID`` (the database URL in $ACTIVEGRADE_DB_URL), or in-process
for scripts and tests that wait for it.
"""

from __future__ import annotations

import sys
import threading
import time

from core.errors import InputError
from core.jobs.sampling_job import SAMPLING_MESSAGE, sample_project
from core.store import Store
from core.surrogate.semantic.base import EMBEDDING

HEARTBEAT_S = 5.0
TICK_S = 1.0
READING = "reading the uploads"
CLUSTERING = "clustering surrogate answers"
PROGRESS_EVERY_S = 0.5


def run_preparation(store: Store, project_id: int) -> None:
    """The job, on a project already claimed: load the stored uploads, run core.surrogate.prepare.prepare_items,
    save the items; a failure is stored with its message."""
    report = PreparationReport(store, project_id)
    stop = threading.Event()
    beat = threading.Thread(target=_keep_reporting, args=(report, stop), daemon=True)
    beat.start()
    try:
        from core.inputs.readers import load_project_inputs
        from core.surrogate.prepare import prepare_items

        settings = store.project(project_id).settings
        if settings.get("sampling"):
            sample_project(store, project_id, _progress_writer(store, project_id, SAMPLING_MESSAGE))
        report.stage(READING, 0, 0)
        files = store.input_files(project_id)
        inputs = load_project_inputs(files["pool"], files.get("samples"), settings)
        items = prepare_items(
            inputs,
            backend=settings["backend"],
            model=settings["model"],
            threshold=settings["threshold"],
            n_strata=settings["n_strata"],
            stratify_by=settings["stratify_by"],
            progress=report.clustering,
            stage=report.stage,
            proxy=settings["proxy"],
        )
        store.save_items(project_id, items)
    except InputError as exc:
        store.set_status(project_id, "failed", str(exc))
    except Exception as exc:  # noqa: BLE001 - any failure must reach the page, not vanish with the thread
        store.set_status(project_id, "failed", f"{type(exc).__name__}: {exc}")
    finally:
        stop.set()


def _keep_reporting(report: PreparationReport, stop: threading.Event) -> None:
    """Every TICK_S until ``stop``: a stage without counts says how long it has run, and the job's
    heartbeat is stamped (core.services.project.is_stalled)."""
    while not stop.wait(TICK_S):
        report.tick()


def progress_text(stage: str, done: int, total: int, unit: str) -> str:
    """What the Projects page shows of a running preparation, e.g. "embedding the texts: 1,200 of 5,000 texts"."""
    return f"{stage}: {done:,} of {total:,} {unit}"


def _progress_writer(store: Store, project_id: int, message: str):
    """A ``progress(done, total)`` callback (items) that writes to the database at most every PROGRESS_EVERY_S."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            store.set_progress(project_id, done, total, progress_text(message, done, total, "items"))

    return progress


class PreparationReport:
    """Writes the preparation's stage to the project row, so the Projects page says what is going on:
    reading the uploads, loading the model, embedding k of n texts, clustering i of N items.

    A new stage is written at once; counts within a stage at most every PROGRESS_EVERY_S, and always
    the last one. ``tick`` (every TICK_S, from another thread) adds the seconds a stage without
    counts has run (a model loads in one call), and otherwise stamps the heartbeat every HEARTBEAT_S.
    """

    def __init__(self, store: Store, project_id: int) -> None:
        self._store, self._project_id = store, project_id
        self._stage, self._started, self._last = "", 0.0, time.monotonic()
        self._counted = True
        self._lock = threading.Lock()

    def _write(self, stage: str, done: int, total: int, message: str) -> None:
        with self._lock:
            now = time.monotonic()
            if stage != self._stage:
                self._stage, self._started = stage, now
            elif done < total and now - self._last < PROGRESS_EVERY_S:
                return
            self._last, self._counted = now, total > 0
            self._store.set_progress(self._project_id, done, total, message)

    def stage(self, what: str, done: int, total: int) -> None:
        """core.surrogate.semantic.base.Stage, and READING: reading the uploads, loading the model, embedding."""
        if what == EMBEDDING:
            self._write(what, done, total, progress_text("embedding the texts", done, total, "texts"))
        else:
            self._write(what, done, total, what)

    def clustering(self, done: int, total: int) -> None:
        """core.surrogate.semantic.Progress: items clustered."""
        self._write(CLUSTERING, done, total, progress_text(CLUSTERING, done, total, "items"))

    def tick(self) -> None:
        with self._lock:
            now = time.monotonic()
            if self._stage and not self._counted:
                self._store.set_progress(self._project_id, 0, 0, f"{self._stage}: {now - self._started:.0f} s")
                self._last = now
            elif now - self._last >= HEARTBEAT_S:
                self._store.heartbeat(self._project_id)  # only the time: the counts stay as last written
                self._last = now


def main(argv: list[str]) -> None:
    run_preparation(Store.open(), int(argv[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
