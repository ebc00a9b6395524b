"""Scale: pools of 10^4, 10^5 and 10^6 items x 10 short samples (benchmarks/scale_pool.py), from the files to grading.

For each size, each step in a fresh process (its peak memory is the process's own, VmHWM):
- prepare: `load_inputs` of the Parquet files, then `prepare_items` (the CLI's and the preparation job's path),
  exact or embedding backend; "two processes" runs two processes at once, each preparing one half of the pool,
  wall time of both;
- workers: chunked preparation by real worker processes (`python -m core worker`) on PostgreSQL, one and two
  (`--workers 1,2`, `--chunks 10`): benchmarks/scale_workers.py;
- serve: the web server's side on PostgreSQL: the items stored (`Store.save_items`, in a process of its own,
  unless the workers prepared them), then loaded as the app loads them (`load_items`, `prepared_design`), the
  grade page's server work per press, timed over GRADES presses (claim the next item, read it, record the
  grade: core.testing.workload.Grader.step), and the dashboard's computations (graded positions, the
  estimate, the anytime interval, the estimate's path, grades, skips), with the process's peak memory.

    nice -n 10 python benchmarks/scale.py --sizes 10000,100000,1000000 --pg URL [--steps prepare,workers,serve]
        [--backends exact,embedding] [--model-upto 100000]

Writes benchmarks/scale.md. Pools are made under --work (default /tmp/ag-scale) when absent.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRADES = 200
OUT = ROOT / "benchmarks" / "scale.md"


def peak_mb() -> float:
    """This process's peak resident memory: VmHWM, which starts afresh at exec (ru_maxrss carries the
    parent's peak over into a child, so a child of a large parent would report the parent's)."""
    status = Path("/proc/self/status")
    if status.exists():
        line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def prepare_step(folder: Path, backend: str, half: int | None) -> dict:
    """Load and prepare the pool (one half of it when ``half`` is 0 or 1); times and peak memory."""
    from core.inputs.io import Inputs, load_inputs
    from core.surrogate.prepare import prepare_items

    start, cpu = time.perf_counter(), time.process_time()
    inputs = load_inputs(folder / "pool.parquet", folder / "samples.parquet")
    loaded, loaded_cpu = time.perf_counter(), time.process_time()
    if half is not None:
        pool = inputs.pool.iloc[half * len(inputs.pool) // 2 : (half + 1) * len(inputs.pool) // 2]
        inputs = Inputs(pool.reset_index(drop=True), inputs.samples[inputs.samples["id"].isin(pool["id"])], [])
    with tempfile.TemporaryDirectory() as cache:  # a fresh result cache: every item computed
        items = prepare_items(inputs, backend=backend, cache_dir=cache)
    if half is None:
        items.to_parquet(folder / f"items-{backend}.parquet")
    return {
        "load_s": loaded - start,
        "prepare_s": time.perf_counter() - loaded,
        "load_cpu_s": loaded_cpu - cpu,
        "prepare_cpu_s": time.process_time() - loaded_cpu,
        "peak_mb": peak_mb(),
    }


def save_step(folder: Path, pg_url: str) -> dict:
    """The prepared items stored as one worker stores them (`Store.save_items`); the project's id and the time."""
    import pandas as pd

    from core.store import Store

    items = pd.read_parquet(folder / "items-exact.parquet")
    store = Store.open(pg_url)
    start = time.perf_counter()
    pid = store.create_project(f"scale-{len(items)}-{time.time_ns()}", {"seed": 3}, {"pool": ("pool", b"")})
    store.save_items(pid, items)
    return {"project_id": pid, "save_s": time.perf_counter() - start}


def serve_step(project_id: int, pg_url: str) -> dict:
    """The web server's side on PostgreSQL for a prepared project, in a process of its own (its peak is the
    server's): load the items, grade, the dashboard's computations."""
    import numpy as np

    from core.services.tracking import current_estimate, estimate_path
    from core.stats.confseq import anytime_interval
    from core.stats.design import prepared_design
    from core.stats.skips import skip_bound
    from core.store import Store
    from core.testing.workload import Grader

    store = Store.open(pg_url)
    start = time.perf_counter()
    base_mb = peak_mb()
    design = prepared_design(store.load_items(project_id))
    loaded = time.perf_counter()
    grader = Grader(store, project_id, design, "bench")
    times = []
    for _ in range(GRADES):
        t = time.perf_counter()
        grader.step()
        times.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    graded = store.graded_positions(project_id)
    current_estimate(design, graded)
    anytime_interval(design, list(graded), list(graded.values()), max(10, design.N // 10))
    estimate_path(design, list(graded), list(graded.values()))
    store.grades(project_id)
    skip_bound(design, graded, graded.values(), store.skipped_positions(project_id))
    dashboard = time.perf_counter() - t
    return {
        "load_s": loaded - start,
        "grade_ms_median": float(np.median(times[10:])),
        "grade_ms_p90": float(np.percentile(times[10:], 90)),
        "dashboard_s": dashboard,
        "peak_mb": peak_mb(),
        "peak_before_load_mb": base_mb,
    }


def child(args: list[str]) -> dict:
    """Run a step in a fresh process; its JSON result."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.scale", "--child", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def two_halves(folder: Path, backend: str) -> dict:
    """Two processes at once, each preparing one half; wall time of both and the larger peak."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.scale", "--child", "prepare", str(folder), backend, str(half)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for half in (0, 1)
    ]
    results = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(err[-3000:])
        results.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "wall_s": time.perf_counter() - start,
        "work_s": max(r["load_s"] + r["prepare_s"] for r in results),
        "work_cpu_s": max(r["load_cpu_s"] + r["prepare_cpu_s"] for r in results),
        "peak_mb": max(r["peak_mb"] for r in results),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--steps", default="prepare,serve", help="any of prepare, workers, serve")
    parser.add_argument("--backends", default="exact")
    parser.add_argument("--halves", default="10000,100000", help="sizes also prepared by two processes")
    parser.add_argument("--model-upto", type=int, default=100_000, help="largest size run with a model backend")
    parser.add_argument("--workers", default="1,2", help="worker process counts of the workers step")
    parser.add_argument("--chunks", type=int, default=10, help="chunks per pool in the workers step")
    parser.add_argument("--pg", help="PostgreSQL URL for the workers and serving steps")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ag-scale"))
    args = parser.parse_args()
    if args.child:
        kind, where, rest = args.child[0], args.child[1], args.child[2:]
        if kind == "prepare":
            result = prepare_step(Path(where), rest[0], int(rest[1]) if len(rest) > 1 else None)
        elif kind == "save":
            result = save_step(Path(where), rest[0])
        else:
            result = serve_step(int(where), rest[0])
        print(json.dumps(result))
        return
    from scale_pool import write_pool  # benchmarks/scale_pool.py and scale_workers.py, beside this script
    from scale_workers import workers_run

    steps = args.steps.split(",")
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        folder = args.work / str(n)
        if not (folder / "samples.parquet").exists():
            write_pool(folder, n)
        size_mb = sum(f.stat().st_size for f in folder.glob("*.parquet") if not f.name.startswith("items")) / 1e6
        row = {"items": n, "files_mb": size_mb}
        models = [b for b in args.backends.split(",") if b != "exact" and n <= args.model_upto]
        for backend in ["exact", *models] if "prepare" in steps else []:
            row[backend] = child(["prepare", str(folder), backend])
            if str(n) in args.halves.split(","):
                row[f"{backend}_halves"] = two_halves(folder, backend)
            print(n, backend, row[backend], row.get(f"{backend}_halves"), flush=True)
        for backend in ["exact", *models] if "workers" in steps else []:
            row[f"{backend}_workers"] = []
            for count in [int(w) for w in args.workers.split(",")]:
                row[f"{backend}_workers"].append(workers_run(folder, args.pg, count, -(-n // args.chunks), backend))
                print(n, backend, row[f"{backend}_workers"][-1], flush=True)
        if "serve" in steps:
            if "exact_workers" in row:  # the items one worker prepared
                project_id, row["save_s"] = row["exact_workers"][0]["project_id"], None
            else:
                saved = child(["save", str(folder), args.pg])
                project_id, row["save_s"] = saved["project_id"], saved["save_s"]
            row["serve"] = child(["serve", str(project_id), args.pg])
            print(n, row["serve"], flush=True)
        rows.append(row)
        (args.work / "scale.json").write_text(json.dumps(rows, indent=1))
        OUT.write_text(report(rows, " ".join(sys.argv[1:])))  # after each size: a long run's rows so far


def report(rows: list[dict], argv: str) -> str:
    lines = [
        "# Scale: 10^4 to 10^6 items x 10 short samples",
        "",
        f"Written by `python benchmarks/scale.py {argv}` on {platform.machine()}, 2 CPUs shared with other work "
        f"(wall times are upper bounds), Python {platform.python_version()}. Pools from benchmarks/scale_pool.py "
        "(Parquet; at most 10^5 distinct answer strings). Each step in a fresh process; memory is its peak RSS.",
        "",
        "## Preparation (load_inputs + prepare_items)",
        "",
        "Times are wall seconds with the process's CPU seconds in brackets: on a machine this busy, CPU time is "
        "the cost and wall time an upper bound.",
        "",
        "| items | files MB | backend | load s | prepare s | peak MB | two processes, halves: slower one's load + prepare s "
        "| their wall s, start-up included | peak MB each |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for backend in ("exact", "embedding"):
            if backend in row:
                r, h = row[backend], row.get(f"{backend}_halves")
                halves = (
                    "| | |"
                    if h is None
                    else f"| {h['work_s']:.1f} ({h['work_cpu_s']:.1f} CPU) | {h['wall_s']:.1f} | {h['peak_mb']:,.0f} |"
                )
                lines.append(
                    f"| {row['items']:,} | {row['files_mb']:.1f} | {backend} | {r['load_s']:.1f} ({r['load_cpu_s']:.1f}) "
                    f"| {r['prepare_s']:.1f} ({r['prepare_cpu_s']:.1f}) | {r['peak_mb']:,.0f} {halves}"
                )
    lines += [
        "",
        "## Preparation by worker processes on PostgreSQL (`python -m core worker`, chunked)",
        "",
        "Wall seconds from submitting the preparation to the project being ready (workers started and idle "
        "before). Chunks: from submission to the last chunk done; finish: from then to the end (the PREPARE "
        "job reads the uploads, joins the chunks' scores, stratifies and saves every item). CPU seconds of "
        "each worker (start-up included) and of PostgreSQL; load: the 1-minute load average before / after.",
        "",
        "| items | backend | workers | chunks of | wall s | chunks s | finish s | speed-up | worker CPU s "
        "| PostgreSQL CPU s | worker peak MB | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for backend in ("exact", "embedding"):
            runs = row.get(f"{backend}_workers", [])
            for w in runs:
                lines.append(
                    f"| {row['items']:,} | {backend} | {w['workers']} | {w['chunk_items']:,} | {w['wall_s']:.1f} "
                    f"| {w['chunks_s']:.1f} | {w['finish_s']:.1f} | {runs[0]['wall_s'] / w['wall_s']:.2f}x "
                    f"| {' + '.join(f'{c:.0f}' for c in w['worker_cpu_s'])} | {w['postgres_cpu_s']:.0f} "
                    f"| {' / '.join(f'{m:,.0f}' for m in w['worker_peak_mb'])} "
                    f"| {w['load_before']:.1f} / {w['load_after']:.1f} |"
                )
    lines += [
        "",
        "## Serving on PostgreSQL (the web server's side)",
        "",
        f"Per press: claim the next item, read it, record the grade ({GRADES} presses, the first 10 left out). "
        "Dashboard: its computations (graded positions, estimate, anytime interval, path, grades, skips), "
        "not the browser's drawing. Load, grades and dashboard run in a process of their own, so its peak is "
        "the web server's; save items: `Store.save_items` in another (blank when the workers saved them).",
        "",
        "| items | save items s | load items + design s | per grade ms median | p90 | dashboard s | peak MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "serve" in row:
            s = row["serve"]
            lines.append(
                f"| {row['items']:,} | {'' if row['save_s'] is None else round(row['save_s'], 1)} | {s['load_s']:.1f} | {s['grade_ms_median']:.1f} "
                f"| {s['grade_ms_p90']:.1f} | {s['dashboard_s']:.2f} | {s['peak_mb']:,.0f} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
