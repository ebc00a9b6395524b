"""The record browser at 10^5 items: the time to the first page of rows, per filter, on SQLite and PostgreSQL.

A project of 100,000 prepared items (core.testing.workload.synthetic_project, with a longer response so the
search reads real text) gets 5,000 grades (4,000 items, 1,000 of them graded twice, a quarter of those
disagreeing), 500 comments, 300 skips, 100 flags and 200 reviews, all through core.store's own writes.
Then each filter of the browser asks for its first page of 50 rows (core.services.browser.page, which also
counts the filtered set); the time is the median of 5 calls after one warm-up, wall clock, one process.
Goal (issue 31): under 1 s on both databases.

Run: python benchmarks/browser.py [--pg-url URL]; writes benchmarks/browser.md. PostgreSQL: the URL given,
else $ACTIVEGRADE_TEST_PG_URL, in a schema made for the run and dropped after it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sqlalchemy import create_engine, text

from core.services import auth, browser
from core.services.browser import RecordFilter
from core.store import Store
from core.store import reviews as review_rows
from core.testing.workload import synthetic_project

HERE = Path(__file__).resolve().parent
N_ITEMS, GRADED, DOUBLE = int(os.environ.get("BROWSE_N", 100_000)), 4_000, 1_000
CASES = {
    "no filter": (RecordFilter(), "position", False),
    "stratum 2": (RecordFilter(stratum=2), "position", False),
    "graded": (RecordFilter(graded=True), "position", False),
    "not graded, by item id descending": (RecordFilter(graded=False), "item", True),
    "grade Correct": (RecordFilter(label="Correct"), "position", False),
    "grader g3": (RecordFilter(grader="g3"), "position", False),
    "commented": (RecordFilter(commented=True), "position", False),
    "skipped": (RecordFilter(skipped=True), "position", False),
    "grades disagree": (RecordFilter(disagreement=True), "position", False),
    "reviewed": (RecordFilter(reviewed=True), "position", False),
    "flagged": (RecordFilter(flagged=True), "position", False),
    "search 'is 4242'": (RecordFilter(search="is 4242"), "position", False),
    "sorted by mean grade": (RecordFilter(), "grade", True),
    "graded, search '99', by grades": (RecordFilter(graded=True, search="99"), "grades", True),
}


def populate(store: Store) -> int:
    pid, _ = synthetic_project(store, N_ITEMS, name="browse")
    rng = np.random.default_rng(0)
    graded = rng.choice(N_ITEMS, GRADED, replace=False)
    for k, position in enumerate(graded.tolist()):
        value = float(rng.random() < 0.3)
        store.add_grade(
            pid,
            position,
            value=value,
            label=["Incorrect", "Correct"][int(value)],
            grader=f"g{k % 8}",
            comment="see the reference" if k % 8 == 0 else "",
        )
        if k < DOUBLE:
            second = value if k % 4 else 1.0 - value
            store.add_grade(
                pid, position, value=second, label=["Incorrect", "Correct"][int(second)], grader=f"g{(k + 1) % 8}"
            )
        if k < 200:
            review_rows.add_review(store, pid, position, value=value, label="x", reviewer="rita")
        if k < 100:
            review_rows.add_flag(store, pid, position, "g1", "unclear")
    for position in rng.choice(np.setdiff1d(np.arange(N_ITEMS), graded), 300, replace=False).tolist():
        store.add_skip(pid, position, "g2")
    return pid


def timings(store: Store, pid: int) -> dict[str, tuple[float, int]]:
    """Per case: the median seconds to the first page, and the filtered set's size."""
    admin = auth.OPERATOR
    result = {}
    for name, (filters, sort, descending) in CASES.items():
        browser.page(store, admin, pid, filters, sort=sort, descending=descending)  # warm-up
        seconds = []
        for _ in range(5):
            start = time.perf_counter()
            page = browser.page(store, admin, pid, filters, sort=sort, descending=descending)
            seconds.append(time.perf_counter() - start)
        result[name] = (statistics.median(seconds), page.total)
    return result


@contextmanager
def postgres(url: str) -> Iterator[str]:
    schema = f"browse_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url)
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def measured(url: str) -> tuple[dict[str, tuple[float, int]], float]:
    store = Store.open(url)
    start = time.perf_counter()
    pid = populate(store)
    made = time.perf_counter() - start
    result = timings(store, pid)
    store.engine.dispose()
    return result, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", default=os.environ.get("ACTIVEGRADE_TEST_PG_URL"))
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        runs["SQLite"] = measured(f"sqlite:///{folder}/browse.db")
    if args.pg_url:
        with postgres(args.pg_url) as url:
            runs["PostgreSQL"] = measured(url)
    names = list(runs)
    lines = [
        "| filter (first page of 50 rows, with the total) | items | " + " | ".join(f"{n} (s)" for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for case in CASES:
        total = runs[names[0]][0][case][1]
        lines.append(f"| {case} | {total:,} | " + " | ".join(f"{runs[n][0][case][0]:.3f}" for n in names) + " |")
    worst = {n: max(s for s, _ in runs[n][0].values()) for n in names}
    text_out = f"""# Record browser at 10^5 items

Written by `python benchmarks/browser.py` (one process) on {platform.machine()}, {os.cpu_count()} CPUs shared
with other work; PostgreSQL {"" if "PostgreSQL" in runs else "not "}measured (a local server).

100,000 items, 5,000 grades (4,000 items, 1,000 graded twice, 250 disagreeing), 500 comments, 300 skips,
100 flags, 200 reviews. Each figure: the median wall time of 5 calls of `core.services.browser.page` (the
permission check, the filtered set's COUNT and its first 50 rows with graders), after one warm-up.
Goal: under 1 s. Slowest: {", ".join(f"{n} {worst[n]:.3f} s" for n in names)}.
Setting the project up took {", ".join(f"{n} {runs[n][1]:.0f} s" for n in names)}.

{chr(10).join(lines)}
"""
    (HERE / "browser.md").write_text(text_out)
    print(text_out)


if __name__ == "__main__":
    main()
