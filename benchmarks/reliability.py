"""Several graders at once, and a crash: grades lost, duplicated, and how long it takes.

For each backend (SQLite file; PostgreSQL when $ACTIVEGRADE_TEST_PG_URL is
set, as scripts/postgres.sh start prints it) and each way of running the
graders (8 threads of one process = one server; 8 worker processes = 8
servers on one database), grade a 1,818-item synthetic project to the end
with 10% of the items double-graded: 2,000 grades, through the grade page's
functions (core.services.reservations.claim, core.services.grade_actions.grade). Then one crash run: a worker
killed with SIGKILL after 100 grades and restarted.

lost = acknowledged grades missing from the database; duplicated = grades
beyond one per item (two per double-graded item, by two different graders);
estimate check = the dashboard's estimate equals one computed independently.

Writes benchmarks/reliability.md. Run: python benchmarks/reliability.py
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import tempfile
import threading
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

from core.services import reservations
from core.services.reservations import overlap_positions
from core.services.tracking import current_estimate
from core.stats.estimate import estimate
from core.store import Store, accounts
from core.testing.workload import (
    acknowledged,
    design_of,
    run_graders,
    run_workers,
    start_worker,
    synthetic_project,
    true_label,
)

ROOT = Path(__file__).resolve().parents[1]

GRADERS = 8
N_ITEMS = 1818
OVERLAP = 0.1
CRASH_AFTER = 100


def fresh_url(backend: str, folder: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{folder / f'{uuid.uuid4().hex}.db'}"
    base = os.environ["ACTIVEGRADE_TEST_PG_URL"]
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with create_engine(base).begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    return f"{base}?options=-csearch_path%3D{schema}"


def check(store: Store, pid: int, acked: list[tuple[int, int, str]]) -> dict:
    rows = store.grades(pid, include_retracted=True)
    stored = set(zip(rows["id"], rows["position"], rows["grader"]))
    double = overlap_positions(N_ITEMS, OVERLAP, 3)
    allowed = {p: (2 if p in double else 1) for p in range(N_ITEMS)}
    sizes = rows.groupby("position").size()
    graders = rows.groupby("position")["grader"].nunique()
    # grades beyond the item's allowance, and second grades by the same grader
    duplicated = int(sum(max(n - allowed[p], 0) for p, n in sizes.items()) + (sizes - graders).clip(lower=0).sum())
    missing_items = N_ITEMS - len(sizes)
    design = design_of(store, pid)
    values = {p: (1.0 if true_label(p) == "Correct" else 0.0) for p in range(N_ITEMS)}
    shown = current_estimate(design, store.graded_positions(pid))
    independent = estimate(design, list(values), list(values.values()))
    return {
        "grades": len(rows),
        "lost": len(set(acked) - stored),
        "duplicated": duplicated,
        "ungraded items": missing_items,
        "estimate equal": abs(shown.value - independent.value) < 1e-12,
    }


class LostRaces:
    """Counts reservations lost to another grader (core.store.accounts.try_reserve returning False) in this process."""

    def __init__(self) -> None:
        self.count = 0
        self._real = accounts.try_reserve
        self._lock = threading.Lock()

    def __enter__(self) -> LostRaces:
        def counted(*args, **kwargs):
            won = self._real(*args, **kwargs)
            with self._lock:
                self.count += not won
            return won

        accounts.try_reserve = counted
        return self

    def __exit__(self, *_exc) -> None:
        accounts.try_reserve = self._real


def load_run(backend: str, mode: str, folder: Path) -> dict:
    url = fresh_url(backend, folder)
    store = Store.open(url)
    pid, _ = synthetic_project(store, N_ITEMS)
    if mode.startswith("threads"):
        with LostRaces() as races, contextlib.ExitStack() as stack:
            if mode == "threads, no claim lock":  # what the per-server claim lock saves
                stack.enter_context(_no_claim_lock())
            crew, seconds = run_graders(store, pid, GRADERS, overlap=OVERLAP)
        acked = [(gid, pos, g.name) for g in crew for gid, pos in g.graded]
        return {
            "backend": backend,
            "graders": f"{GRADERS} {mode}",
            "seconds": seconds,
            "lost races": races.count,
            **check(store, pid, acked),
        }
    else:
        done, seconds = run_workers(url, pid, GRADERS, overlap=OVERLAP, timeout=1800)
        acked = [(gid, pos, name) for name, grades in done.items() for gid, pos in grades]
    return {
        "backend": backend,
        "graders": f"{GRADERS} {mode}",
        "seconds": seconds,
        "lost races": None,
        **check(store, pid, acked),
    }


@contextlib.contextmanager
def _no_claim_lock():
    real = reservations._batched
    reservations._batched = lambda store, project_id, ask: reservations._Batch(store, project_id).claim(
        ask.grader, ask.rules
    )
    try:
        yield
    finally:
        reservations._batched = real


def crash_run(backend: str, folder: Path) -> dict:
    """Two worker processes; one is SIGKILLed after CRASH_AFTER grades, then restarted."""
    url = fresh_url(backend, folder)
    store = Store.open(url)
    pid, _ = synthetic_project(store, N_ITEMS)
    start = time.perf_counter()
    steady = start_worker(url, pid, "steady", OVERLAP)
    victim = start_worker(url, pid, "victim", OVERLAP)
    lines = []
    for line in victim.stdout:
        lines.append(line)
        if len(acknowledged("".join(lines))) == CRASH_AFTER:
            os.kill(victim.pid, signal.SIGKILL)
            break
    victim.wait()
    lines.append(victim.stdout.read())
    acked = [(gid, pos, "victim") for gid, pos in acknowledged("".join(lines))]
    again = start_worker(url, pid, "victim", OVERLAP)
    for name, process in (("steady", steady), ("victim", again)):
        out, err = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise RuntimeError(f"{name}: {err[-2000:]}")
        acked += [(gid, pos, name) for gid, pos in acknowledged(out)]
    seconds = time.perf_counter() - start
    return {
        "backend": backend,
        "graders": "2 processes, 1 SIGKILLed and restarted",
        "seconds": seconds,
        "lost races": None,
        **check(store, pid, acked),
    }


ATTACKS = "## Attacks"
"""The heading of the hand-kept section of reliability.md (attacks run by the tests named in it): kept as it is."""


def main() -> None:
    backends = ["sqlite"] + (["postgres"] if os.environ.get("ACTIVEGRADE_TEST_PG_URL") else [])
    results = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for backend in backends:
            for mode in ("threads", "threads, no claim lock", "processes"):
                results.append(load_run(backend, mode, folder))
                print(results[-1], flush=True)
            results.append(crash_run(backend, folder))
            print(results[-1], flush=True)
    header = [
        "backend",
        "graders",
        "grades",
        "seconds",
        "grades/s",
        "lost",
        "duplicated",
        "ungraded items",
        "estimate equal",
        "lost races",
    ]
    lines = [
        "# Reliability: concurrent graders and a crash",
        "",
        f"Written by `python benchmarks/reliability.py` on {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load average before the run "
        f"{load_before:.1f} (a machine shared with other jobs: durations are upper bounds and vary up to 2x "
        "between runs; the counts do not).",
        "",
        f"{N_ITEMS:,} items, {OVERLAP:.0%} double-graded: 2,000 grades per run, through the grade page's path "
        "(core.services.reservations.claim, core.services.grade_actions.grade). Threads share one process, as the graders of one Streamlit server do; "
        "processes are separate servers on one database. lost races: reservations a grader tried and lost to "
        "another (each costs a transaction and a redraw), counted in the benchmark's own process.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for r in results:
        lines.append(
            f"| {r['backend']} | {r['graders']} | {r['grades']:,} | {r['seconds']:.1f} | {r['grades'] / r['seconds']:.1f} "
            f"| {r['lost']} | {r['duplicated']} | {r['ungraded items']} | {'yes' if r['estimate equal'] else 'NO'} "
            f"| {'n/a' if r['lost races'] is None else r['lost races']} |"
        )
    out = ROOT / "benchmarks" / "reliability.md"
    kept = out.read_text().partition(ATTACKS)[2] if out.exists() else ""
    out.write_text("\n".join(lines) + "\n" + (f"\n{ATTACKS}{kept}" if kept else ""))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
