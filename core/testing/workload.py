"""Graders at work, through the functions the grade page calls: claim an item, load it, grade it
(`core.services.grade_actions.grade`, with the checks a press gets: the grader's rights, the viewing time, the
hold on the item).

A load and crash drill for a database: `synthetic_project` makes a throw-away
project of any size, `run_graders` grades it to the end with threads of this
process (the graders of one server), `run_workers` with worker processes (one
server each). The load and crash tests and benchmarks/reliability.py use it.
Run as a module it is one grading worker process (the crash checks kill it):

    python -m core.testing.workload DB_URL PROJECT_ID GRADER [--overlap F]

printing ``graded <grade id> <position>`` after each grade is committed.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.services import auth, grade_actions, grading, reservations
from core.stats.allocation import Design
from core.stats.design import project_design
from core.store import Store

POLL_S = 0.05  # how often an idle grader asks again for an item
N_STRATA = 4


def synthetic_project(
    store: Store, n: int, name: str = "load", settings: dict[str, Any] | None = None
) -> tuple[int, Design]:
    """A ready project of ``n`` prepared arithmetic items in 4 strata (item i in stratum i mod 4, its
    surrogate doubt growing with the stratum), and its design as the app builds it. The items carry no
    labels: the simulated graders grade them with `true_label`."""
    rng = np.random.default_rng(0)
    stratum = np.arange(n) % N_STRATA
    items = pd.DataFrame(
        {
            "id": [f"item-{i}" for i in range(n)],
            "prompt": [f"What is {i} + {i}?" for i in range(n)],
            "response": [str(2 * i) for i in range(n)],
            "semantic_entropy": stratum * 0.4 + rng.random(n) * 0.1,
            "agreement": np.clip(1 - stratum / N_STRATA + rng.normal(0, 0.05, n), 0, 1),
            "stratum": stratum,
        }
    )
    pid = store.create_project(name, {"seed": 3, **(settings or {})}, {"pool": ("pool.jsonl", b"{}\n")})
    store.save_items(pid, items)
    return pid, design_of(store, pid)


def true_label(position: int) -> str:
    """The label every simulated grader gives an item (a fixed function, so the estimate is checkable)."""
    return "Correct" if (position * 7919) % 10 < 6 else "Incorrect"


def design_of(store: Store, project_id: int) -> Design:
    """The design exactly as the app builds it (ui/plan.py): the stored items and the project's settings."""
    return project_design(store, project_id, store.project(project_id).settings.stopping)


@dataclass
class Grader:
    """One grader's loop: claim, load, grade; until ``finished()`` says the project needs nobody."""

    store: Store
    project_id: int
    design: Design
    name: str
    overlap: float = 0.0
    seed: int = 3
    on_grade: Callable[[int, int], None] | None = None
    graded: list[tuple[int, int]] = field(default_factory=list)  # (grade id, position) as acknowledged

    def step(self) -> int | None:
        position = reservations.claim(
            self.store, self.project_id, self.design, self.seed, self.name, overlap=self.overlap
        )
        if position is None:
            return None
        self.store.item(self.project_id, position)  # the page shows it
        actor = auth.demo_user(self.name)  # a named grader of the open demo: the page's own actor
        outcome = grade_actions.grade(
            self.store, actor, self.project_id, position, true_label(position), seconds=grading.MIN_VIEW_S
        )
        if outcome.status != "saved":
            raise RuntimeError(f"{self.name}'s grade of item {position} was not saved: {outcome.message}")
        grade_id = outcome.grade_id
        self.graded.append((grade_id, position))
        if self.on_grade is not None:
            self.on_grade(grade_id, position)
        return position

    def run(self, finished: Callable[[], bool], limit: int | None = None) -> None:
        while limit is None or len(self.graded) < limit:
            if self.step() is None:
                if finished():
                    return
                time.sleep(POLL_S)  # others hold the last items, or a second grade may still come


def expected_grades(n_items: int, overlap: float, seed: int = 3) -> int:
    return n_items + len(reservations.overlap_positions(n_items, overlap, seed))


def run_graders(store: Store, project_id: int, graders: int, *, overlap: float = 0.0) -> tuple[list[Grader], float]:
    """``graders`` threads of this process (one server) grading the whole project; them and the seconds taken."""
    design = design_of(store, project_id)
    target = expected_grades(design.N, overlap)
    crew = [Grader(store, project_id, design, f"grader-{k}", overlap) for k in range(graders)]
    errors: list[BaseException] = []
    together = threading.Barrier(graders)  # all start at once, contending from the first item

    def work(grader: Grader) -> None:
        try:
            together.wait()
            grader.run(lambda: len(store.grades(project_id)) >= target)
        except BaseException as exc:  # noqa: BLE001 - re-raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(g,), name=g.name) for g in crew]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return crew, time.perf_counter() - start


def start_worker(url: str, project_id: int, name: str, overlap: float = 0.0) -> subprocess.Popen:
    """One grading worker process (`python -m core.testing.workload`); its stdout lists the committed grades."""
    return subprocess.Popen(
        [sys.executable, "-m", "core.testing.workload", url, str(project_id), name, "--overlap", str(overlap)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def acknowledged(stdout: str) -> list[tuple[int, int]]:
    """(grade id, position) of every ``graded`` line a worker printed."""
    rows = [line.split() for line in stdout.splitlines()]
    return [(int(r[1]), int(r[2])) for r in rows if len(r) == 3 and r[0] == "graded"]


def run_workers(
    url: str, project_id: int, graders: int, *, overlap: float = 0.0, timeout: float = 300
) -> tuple[dict[str, list[tuple[int, int]]], float]:
    """``graders`` worker processes grading the whole project; their acknowledged grades by name, and the seconds taken."""
    start = time.perf_counter()
    workers = {f"grader-{k}": start_worker(url, project_id, f"grader-{k}", overlap) for k in range(graders)}
    done = {}
    for name, process in workers.items():
        out, err = process.communicate(timeout=timeout)
        if process.returncode != 0:
            raise RuntimeError(f"{name} failed with status {process.returncode}: {err[-2000:]}")
        done[name] = acknowledged(out)
    return done, time.perf_counter() - start


def main(argv: list[str]) -> int:
    url, project_id, name = argv[0], int(argv[1]), argv[2]
    overlap = float(argv[argv.index("--overlap") + 1]) if "--overlap" in argv else 0.0
    store = Store.open(url)

    def report(grade_id: int, position: int) -> None:
        print(f"graded {grade_id} {position}", flush=True)

    grader = Grader(store, project_id, design_of(store, project_id), name, overlap, on_grade=report)
    target = expected_grades(grader.design.N, overlap)
    grader.run(lambda: len(store.grades(project_id)) >= target)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
