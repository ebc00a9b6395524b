"""Chunked preparation by real worker processes (`python -m core worker`) on PostgreSQL, for benchmarks/scale.py.

One run: start W workers and wait until each says it started, then submit the project's preparation
(core.services.project.start_preparation with ``chunk_items``) and time it until the project is ready.
Recorded beside the wall time, since the machine is shared: each worker's CPU seconds and peak memory
(os.wait4 once it has stopped), PostgreSQL's CPU seconds (its postmaster, the backends it reaped and those
alive, from /proc), the load average before and after, and from the jobs table how long the chunks took
and how long the finishing step (join, stratify, save) took after the last chunk was done.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")
POLL_S = 0.2  # how often the project's status is read while the workers run
TIMEOUT_S = 1800.0  # a run that takes longer stops itself


def _cpu_ticks(pid: int) -> tuple[int, int]:
    """(own + reaped children's CPU ticks, parent pid) of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return utime + stime + cutime + cstime, int(fields[1])


def postgres_cpu_s(store) -> float:
    """CPU seconds PostgreSQL has used: its postmaster with the backends it reaped, plus those alive."""
    with store.engine.connect() as connection:
        backend = connection.scalar(text("SELECT pg_backend_pid()"))
    postmaster = _cpu_ticks(backend)[1]
    total = _cpu_ticks(postmaster)[0]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ticks, parent = _cpu_ticks(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                continue
            if parent == postmaster:
                total += ticks
    return total / TICKS


def _start_workers(count: int, pg_url: str) -> list[subprocess.Popen]:
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "core", "worker", "--db", pg_url],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(count)
    ]
    for worker in workers:  # wait until each has started (imports done) before the clock starts
        line = worker.stderr.readline()
        if "started" not in line:
            raise RuntimeError(f"worker did not start: {line}{worker.stderr.read()[-2000:]}")
    return workers


def _stop(worker: subprocess.Popen) -> dict:
    worker.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(worker.pid, 0)
    worker.returncode = os.waitstatus_to_exitcode(status)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def _timeline(store, project_id: int) -> dict:
    """From the jobs table: seconds from submission to the last chunk (or the whole-upload check) done, and
    from then to the end."""
    from core.jobs.preparation_job import CHUNK
    from core.store import jobs as job_table

    rows = job_table.jobs(store, project_id)
    parent = next(r for r in rows if r.parent_id is None)
    chunks = [r for r in rows if r.parent_id is not None]
    last_chunk = max((r.finished_at for r in chunks), default=parent.created_at)
    return {
        "chunks": sum(r.kind == CHUNK for r in chunks),
        "chunks_s": (last_chunk - parent.created_at).total_seconds(),
        "finish_s": (parent.finished_at - last_chunk).total_seconds(),
    }


def workers_run(folder: Path, pg_url: str, count: int, chunk_items: int, backend: str = "exact") -> dict:
    """Prepare the pool under ``folder`` with ``count`` worker processes; times, CPU, memory, load, project id."""
    from core.services.project import start_preparation
    from core.settings import ProjectSettings
    from core.store import Store

    store = Store.open(pg_url)
    files = {
        "pool": ("pool.parquet", (folder / "pool.parquet").read_bytes()),
        "samples": ("samples.parquet", (folder / "samples.parquet").read_bytes()),
    }
    settings = ProjectSettings.from_dict({"seed": 3, "backend": backend}).to_dict()
    project_id = store.create_project(f"scale-workers-{count}-{time.time_ns()}", settings, files)
    workers = _start_workers(count, pg_url)
    try:
        load_before, pg_before = os.getloadavg(), postgres_cpu_s(store)
        start = time.perf_counter()
        start_preparation(store, project_id, chunk_items=chunk_items)
        while (status := store.project(project_id).status) not in ("ready", "failed"):
            if time.perf_counter() - start > TIMEOUT_S:
                raise TimeoutError(f"preparation not done after {TIMEOUT_S:.0f} s")
            time.sleep(POLL_S)
        wall = time.perf_counter() - start
        pg_cpu, load_after = postgres_cpu_s(store) - pg_before, os.getloadavg()
    finally:
        used = [_stop(worker) for worker in workers]
    if status == "failed":
        raise RuntimeError(store.project(project_id).error)
    return {
        "workers": count,
        "chunk_items": chunk_items,
        "project_id": project_id,
        "wall_s": wall,
        "worker_cpu_s": [u["cpu_s"] for u in used],
        "worker_peak_mb": [u["peak_mb"] for u in used],
        "postgres_cpu_s": pg_cpu,
        "load_before": load_before[0],
        "load_after": load_after[0],
        **_timeline(store, project_id),
    }
