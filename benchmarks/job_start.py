"""No waiting for a worker (issue 28): the time from a preparation queued to its start, with the app's server
running, and the time of a first visit to a freshly started demo.

Jobs: serve.py (as `make demo` serves it, with sign-in here, since the HTTP API takes tokens) on a SQLite
database of its own. The demo pool (data/demo, exact backend) is sent as a new project through the HTTP API
(``POST /api/v1/projects``: the server queues its preparation and rings its worker), and the time from queued
to started is the jobs table's ``created_at`` to ``started_at`` of that PREPARE job:
- the first job, sent as soon as the server answers its health check (its worker may still be importing);
- JOBS more, each once the last is prepared;
- one after LONG_IDLE_S without any job (the app's worker used to stop after 30 s idle), over which the kept-warm
  worker's CPU time (user + system, every thread, /proc) and resident memory are read, and the server's;
- one queued by another process (core.services.project.start_preparation here, as a script or the command line
  would), which no ring announces: the worker finds it at its next poll.

First visit: `python -m core projects demo` prepares the demo on a fresh database, as `make demo` does, then
serve.py starts on it in open demo mode and headless Chromium, launched beforehand, opens its address: from the
request to the Projects page painted with the demo project (its heading, and the list of all projects below it),
and from the server's launch.

Writes benchmarks/job_start.md. Run: python -m benchmarks.job_start (needs Chromium at /usr/bin/chromium).
"""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

import activegrade
from benchmarks.api_latency import cpu_s
from core import config
from core.jobs.preparation_job import PREPARE
from core.services import auth, team, tokens
from core.services.project import create_project, start_preparation
from core.store import Store
from core.store import jobs as job_table
from core.testing.appserver import CHROMIUM, CHROMIUM_ARGS, ROOT, TIMEOUT_MS, Server
from core.testing.waiting import prepared, until

JOBS = 5
LONG_IDLE_S = 60.0
START_GOAL_S = 2.0
VISIT_GOAL_S = 5.0
DEMO = ROOT / "data" / "demo"
OUT = ROOT / "benchmarks" / "job_start.md"
PAINTED = "Projects page painted with the demo project"
WARM = re.compile(r"warm: job modules imported in ([\d.]+) s")
"""The worker's line once its warm-up is done (core/cli/worker.py)."""


def queued_to_started(store: Store, project_id: int) -> float:
    """Seconds from the project's preparation queued to its start, once it is prepared."""
    assert prepared(store, project_id, timeout=TIMEOUT_MS / 1000) == "ready", store.project(project_id).error
    job = job_table.latest(store, project_id, PREPARE)
    return (job.started_at - job.created_at).total_seconds()


def demo_files() -> tuple[tuple[str, bytes], tuple[str, bytes]]:
    return tuple((path.name, path.read_bytes()) for path in (DEMO / "pool.jsonl", DEMO / "samples.jsonl"))


def sent(client: activegrade.Client, store: Store, name: str) -> float:
    """Queued to started of a project created through the HTTP API."""
    pool, samples = demo_files()
    return queued_to_started(store, client.create_project(name, pool, samples).id)


def worker_pid(server: Server) -> int:
    """The app's worker: the server's one child process running `core worker`."""
    (worker,) = [c for c in server.children() if b"\0core\0worker\0" in Path(f"/proc/{c}/cmdline").read_bytes()]
    return worker


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` (VmRSS), in MB."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def idle(server: Server, worker: int) -> dict[str, float]:
    """Over LONG_IDLE_S without a job or a page: each process's CPU as a share of one core, and its memory."""
    before, start = {p: cpu_s(p) for p in (worker, server.process.pid)}, time.perf_counter()
    time.sleep(LONG_IDLE_S)
    elapsed = time.perf_counter() - start
    return {
        "worker_cpu": (cpu_s(worker) - before[worker]) / elapsed,
        "server_cpu": (cpu_s(server.process.pid) - before[server.process.pid]) / elapsed,
        "worker_rss": rss_mb(worker),
        "server_rss": rss_mb(server.process.pid),
    }


def job_starts(folder: Path) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """(job, seconds from queued to started) for each case, and the idle worker's figures."""
    url = f"sqlite:///{folder / 'jobs.db'}"
    store = Store.open(url)
    team.create_account(store, auth.OPERATOR, "bench", auth.ADMIN, password="a long enough password")
    secret = tokens.create(store, auth.OPERATOR, "bench", "benchmark")[1]
    os.environ[config.OPEN_DEMO] = "0"
    with Server(url, DEMO, folder / "jobs.log") as server:
        client = activegrade.Client(server.url, secret)
        rows = [("first job, sent when the server answers", sent(client, store, "first"))]
        worker = worker_pid(server)
        rows += [(f"job {k + 2}, once the last is prepared", sent(client, store, f"next {k}")) for k in range(JOBS)]
        warm = until(lambda: WARM.search((folder / "jobs.log").read_text()), timeout=120, what="the warm-up")
        figures = idle(server, worker) | {"warm_up": float(warm[1])}
        rows.append((f"after {LONG_IDLE_S:.0f} s idle", sent(client, store, "after idle")))
        project_id = create_project(store, "elsewhere", *demo_files(), start=False)
        start_preparation(store, project_id)  # queued by this process: no ring
        rows.append(
            ("queued by another process (no ring: the worker's 1 s poll)", queued_to_started(store, project_id))
        )
        assert worker_pid(server) == worker, "the worker was replaced"
    return rows, figures


def first_visit(folder: Path) -> dict[str, float]:
    """Seconds: the demo's preparation (`python -m core projects demo`), the server's start, the first page."""
    url = f"sqlite:///{folder / 'demo.db'}"
    os.environ[config.OPEN_DEMO] = "1"
    env = {**os.environ, config.DB_URL: url, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.perf_counter()
    command = [sys.executable, "-m", "core", "projects", "demo", "--quiet"]
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    demo_s = time.perf_counter() - start
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        launched = time.perf_counter()
        with Server(url, DEMO, folder / "demo.log") as server:
            answered = time.perf_counter()
            page.goto(server.url)
            page.get_by_role("heading", name="Demo", exact=True).wait_for(timeout=TIMEOUT_MS)
            page.get_by_role("heading", name="All projects").wait_for(timeout=TIMEOUT_MS)
            painted = time.perf_counter()
        browser.close()
    return {"demo": demo_s, "server": answered - launched, "visit": painted - answered, "launch": painted - launched}


def met(seconds: float, goal: float) -> str:
    return "met" if seconds <= goal else "not met"


def main() -> None:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        rows, figures = job_starts(Path(folder))
        visit = first_visit(Path(folder))
    load_after = os.getloadavg()
    starts = [s for _, s in rows]
    lines = [
        "# No waiting for a worker: job start and first visit",
        "",
        "`python -m benchmarks.job_start` (the method: the script's docstring). serve.py, as `make demo` serves it, "
        "starts the app's own worker with the server and keeps it warm (docs/workers.md); each project is the demo "
        f"pool (data/demo, {sum(1 for _ in (DEMO / 'pool.jsonl').open())} items, exact backend), created through the "
        "HTTP API unless said otherwise. Queued to started: the jobs table's `created_at` to `started_at` of the "
        "preparation job.",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs shared with other work (load average "
        f"{load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} before, "
        f"{load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} after), Python {platform.python_version()}.",
        "",
        f"| preparation job | queued to started, s | goal (issue 28): within {START_GOAL_S:.0f} s |",
        "|---|---|---|",
        *(f"| {name} | {s:.2f} | {met(s, START_GOAL_S)} |" for name, s in rows),
        "",
        f"Median {statistics.median(starts):.2f} s, longest {max(starts):.2f} s over {len(starts)} jobs. The first "
        "job is sent the moment the server answers its health check, while the worker the server started with it "
        "is still starting (Python and the worker's imports); later jobs find it waiting.",
        "",
        f"## The kept-warm worker, idle for {LONG_IDLE_S:.0f} s",
        "",
        f"Its warm-up took {figures['warm_up']:.1f} s beside its first polls: the job modules, without the model "
        "libraries (torch, transformers, sentence-transformers), since every project here clusters exactly "
        "(core.cli.worker.models_in_use); a database with a project that embeds here warms them too, about 0.4 GB "
        "more.",
        "",
        "| process | CPU, share of one core | resident memory (VmRSS) |",
        "|---|---|---|",
        f"| the app's worker (job modules imported) | {figures['worker_cpu']:.2%} | {figures['worker_rss']:.0f} MB |",
        f"| the server, no page open | {figures['server_cpu']:.2%} | {figures['server_rss']:.0f} MB |",
        "",
        "## First visit to a freshly started demo",
        "",
        f"| step | s | goal (issue 28): first visit within {VISIT_GOAL_S:.0f} s |",
        "|---|---|---|",
        f"| `python -m core projects demo` (the demo prepared before the server starts) | {visit['demo']:.1f} | |",
        f"| serve.py launched until it answers its health check | {visit['server']:.1f} | |",
        f"| first visit: the address requested until the {PAINTED} | {visit['visit']:.1f} | "
        f"{met(visit['visit'], VISIT_GOAL_S)} |",
        f"| serve.py launched until the {PAINTED} | {visit['launch']:.1f} | |",
        "",
    ]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
