"""The anytime regime's grades at the stop with its interval tuned for the default n0 (10% of the pool, at
least 10) against n0 tuned where the setup forecast says grading stops (core.stats.forecast.tuned_n0, what a
project without a planned budget now uses).

Writes benchmarks/anytime_n0.md. Pools: the shared ones (../shared/data, skipped when absent) and a few of
benchmarks/stopping.py's own, at target half-widths 0.05 and 0.03; the manager's expected score is the
pool's mean times 1.25, as there.

    python benchmarks/anytime_n0.py [--reps 200]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
from pathlib import Path

from benchmarks.stopping import TARGETS, pools, stopping_mode
from core.stats.design import planned_budget
from core.stats.stopping import ANYTIME

HERE = Path(__file__).resolve().parent
OWN = (
    "binary, N 2000, mean 0.5, AUROC 0.9",
    "binary, N 5000, mean 0.1, AUROC 0.7",
    "binary, N 2000, mean 0.02, AUROC 0.9",
    "skewed, N 2000, mean 0.1, AUROC 0.5",
    "likert, N 5000, mean 0.5, AUROC 0.7",
)


def rows(reps: int, seed: int) -> list[dict]:
    out = []
    chosen = [p for p in pools() if p[0].startswith("shared") or p[0] in OWN]
    for (name, _, items), target in itertools.product(chosen, TARGETS):
        row = {"pool": name, "target": target}
        for label, n0 in (("default", planned_budget(None, len(items))), ("tuned", None)):
            row[label] = stopping_mode(items, target, reps, seed, ANYTIME, n0)["activegrade"]
        out.append(row)
        print(f"{name} target {target}: {row['default']['stop_n_median']:.0f} -> {row['tuned']['stop_n_median']:.0f}")
    return out


def markdown(rows: list[dict], reps: int, seconds: float) -> str:
    lines = [
        "# The anytime interval tuned where grading is expected to stop",
        "",
        f"`python benchmarks/anytime_n0.py --reps {reps}`; {reps} replications per pool and target, "
        f"{platform.machine()}, {seconds / 60:.0f} min. Written by the script: do not edit by hand.",
        "",
        "The anytime regime (stop at any grade once the betting confidence sequence is within the target) on "
        "the project's default design. *default*: the sequence's bets tuned for n0 = 10% of the pool (at least "
        "10), the default before; *tuned*: for the setup forecast's median (core.stats.forecast.tuned_n0), read "
        "before any grade, the default now where no planned budget is set. Grades at the stop: median ± its "
        "Monte Carlo s.e.; coverage of the interval at the stop ± its s.e.; *setup hit*: the share of stops "
        "inside the setup's 80% range (the same range in both: it does not read n0).",
        "",
        "| pool | target | n0 default | stop | coverage | setup hit | n0 tuned | stop | coverage | setup hit "
        "| grades saved |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d, t = r["default"], r["tuned"]
        lines.append(
            f"| {r['pool']} | {r['target']} | {d['n0']} | {d['stop_n_median']:.0f} ± {d['stop_n_median_se']:.0f} "
            f"| {d['stop_coverage']:.3f} ± {d['stop_coverage_se']:.3f} | {d['forecast_hit']:.2f} | {t['n0']} "
            f"| {t['stop_n_median']:.0f} ± {t['stop_n_median_se']:.0f} | {t['stop_coverage']:.3f} ± "
            f"{t['stop_coverage_se']:.3f} | {t['forecast_hit']:.2f} | {1 - t['stop_n_median'] / d['stop_n_median']:+.0%} |"
        )
    saved = [1 - r["tuned"]["stop_n_median"] / r["default"]["stop_n_median"] for r in rows]
    lowest = min(min(r["default"]["stop_coverage"], r["tuned"]["stop_coverage"]) for r in rows)
    hits = [(r["default"]["forecast_hit"], r["tuned"]["forecast_hit"]) for r in rows]
    lines += [
        "",
        f"- Grades saved at the stop by tuning, 1 - tuned / default: median {sorted(saved)[len(saved) // 2]:+.0%}, "
        f"from {min(saved):+.0%} to {max(saved):+.0%} over {len(rows)} (pool, target) pairs (negative: more "
        "grades; where the forecast before any grade is far off, as at a rare mean, so is the tuning).",
        f"- Coverage at the stop: lowest {lowest:.3f} (the sequence is valid for any n0 fixed before the grades).",
        f"- Setup range's hit, over the pairs: {sum(h[0] for h in hits) / len(hits):.2f} with the default n0, "
        f"{sum(h[1] for h in hits) / len(hits):.2f} tuned.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    found = rows(args.reps, args.seed)
    (HERE / "anytime_n0.md").write_text(markdown(found, args.reps, time.perf_counter() - start))
    print((HERE / "anytime_n0.md").read_text())


if __name__ == "__main__":
    main()
