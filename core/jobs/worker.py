"""The worker: claims jobs from the database (core.store.jobs), runs them, heartbeats them.

`python -m core worker` runs one (core/cli/worker.py); the app starts one of its own unless told
not to (core.jobs.background), which the app wakes through a ``Bell`` when it queues a job; scripts and
tests run a project's jobs in their own process (`run_until_idle`). While a job runs, a thread stamps its heartbeat every ``heartbeat_s``; a
worker that dies stops stamping it, and ``stale_after_s`` later another worker takes the job over
and resumes it from its checkpoint. A job that raises is retried (``attempts`` counts every start,
takeovers included) up to ``max_attempts``, then fails with its error; bad input
(core.errors.InputError) fails at once, since a retry would fail the same way.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

from core.errors import InputError
from core.jobs.context import JobContext, Kind, Lost, WorkerOptions
from core.jobs.kinds import KINDS
from core.store import Store
from core.store import jobs as job_table
from core.store.jobs import JobRow

logger = logging.getLogger(__name__)

GAVE_UP = "its worker stopped responding (killed, or out of memory)"


class Bell:
    """The app's wake-up for its own worker, on a pipe (the worker's standard input): the app writes a byte
    when it may have queued a job, so the job starts at once rather than at the next poll, and the pipe's
    end (the app stopped or died, closing its side) tells the worker the app is gone, at once too. Waiting
    on it costs nothing: the worker sleeps in ``select`` between polls."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False

    def wait(self, timeout: float) -> None:
        """Until a ring, the pipe's end (``closed`` set) or ``timeout``; every ring waiting is read at once."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready and not os.read(self.fd, 4096):
            self.closed = True


def default_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    """Claims and runs jobs of the kinds in ``kinds`` (core.jobs.kinds.KINDS by default)."""

    def __init__(
        self,
        store: Store,
        options: WorkerOptions | None = None,
        name: str | None = None,
        kinds: dict[str, Kind] | None = None,
    ) -> None:
        self.store, self.options, self.name = store, options or WorkerOptions(), name or default_name()
        self.kinds = KINDS if kinds is None else kinds

    def claim(self) -> JobRow | None:
        stale_before = datetime.now(UTC) - timedelta(seconds=self.options.stale_after_s)
        return job_table.claim(
            self.store,
            self.name,
            stale_before=stale_before,
            uses_model=self.options.uses_model,
            project_id=self.options.project_id,
            kinds=list(self.kinds),
        )

    def run_once(self) -> bool:
        """Claim one job and run it; False when there was none."""
        job = self.claim()
        if job is None:
            return False
        self.run_job(job)
        return True

    def run_until_idle(self) -> int:
        """Run jobs until none is left to claim; returns how many ran."""
        count = 0
        while self.run_once():
            count += 1
        return count

    def run(self, stop: threading.Event | None = None, bell: Bell | None = None) -> int:
        """Run jobs until ``stop`` is set, the parent process is gone (or ``bell`` closed) or the worker was
        idle for ``idle_exit_s``; returns how many ran. Between polls it waits ``poll_s``, on ``bell`` when
        given, which a ring cuts short."""
        stop = stop or threading.Event()
        count, idle_since = 0, time.monotonic()
        while not stop.is_set() and self._parent_alive() and not (bell and bell.closed):
            if self.run_once():
                count, idle_since = count + 1, time.monotonic()
                continue
            if self.options.idle_exit_s is not None and time.monotonic() - idle_since >= self.options.idle_exit_s:
                break
            if bell is None:
                stop.wait(self.options.poll_s)
            else:
                bell.wait(self.options.poll_s)
        return count

    def _parent_alive(self) -> bool:
        return self.options.parent_pid is None or os.getppid() == self.options.parent_pid

    def run_job(self, job: JobRow) -> None:
        """Run a claimed job to its end: done, split, given back for another attempt, or failed."""
        kind = self.kinds[job.kind]
        if job.attempts > self.options.max_attempts:
            self._fail(kind, job, f"gave up after {job.attempts - 1} attempts: {job.error or GAVE_UP}")
            return
        context = JobContext(self.store, job, self.name, self.options)
        stop = threading.Event()
        beat = threading.Thread(target=self._beat, args=(job.id, stop), daemon=True, name=f"heartbeat-{job.id}")
        beat.start()
        try:
            result = kind.run(context)
        except Lost:
            logger.warning("job %d (%s): another worker has taken it over; %s stops it", job.id, job.kind, self.name)
            return
        except InputError as exc:
            self._fail(kind, job, str(exc))
        except Exception as exc:  # noqa: BLE001 - any failure must reach the page, not vanish with the worker
            message = f"{type(exc).__name__}: {exc}"
            if job.attempts >= self.options.max_attempts:
                self._fail(kind, job, message)
            else:
                logger.warning(
                    "job %d (%s) failed on attempt %d of %d and goes back to the queue: %s",
                    job.id,
                    job.kind,
                    job.attempts,
                    self.options.max_attempts,
                    message,
                    exc_info=True,
                )
                job_table.requeue(self.store, job.id, self.name, message)
        else:
            if not context.released:
                job_table.finish(self.store, job.id, self.name, result)
                logger.info("job %d (%s) done by %s", job.id, job.kind, self.name)
        finally:
            stop.set()
            beat.join()

    def _fail(self, kind: Kind, job: JobRow, error: str) -> None:
        logger.error("job %d (%s) failed for good after %d attempts: %s", job.id, job.kind, job.attempts, error)
        if job_table.fail(self.store, job.id, self.name, error):
            kind.failed(self.store, job, error)

    def _beat(self, job_id: int, stop: threading.Event) -> None:
        """Every heartbeat_s until ``stop``: stamp the job's heartbeat. The app's own worker ends its
        process at once when the app is gone, so another worker takes the job over."""
        lost = False
        while not stop.wait(self.options.heartbeat_s):
            if not self._parent_alive():
                logger.warning("job %d: the app that started worker %s is gone; the worker exits", job_id, self.name)
                os._exit(1)
            try:
                mine = job_table.heartbeat(self.store, job_id, self.name)
            except Exception as exc:  # noqa: BLE001 - a database blip: the next beat tries again
                logger.warning(
                    "job %d: heartbeat not stamped (%s: %s); the next beat tries again in %g s",
                    job_id,
                    type(exc).__name__,
                    str(exc).strip().split("\n")[0][:200],
                    self.options.heartbeat_s,
                )
                continue
            if not mine and not lost:
                lost = True
                logger.warning("job %d: heartbeat refused, the job is no longer %s's (taken over)", job_id, self.name)
