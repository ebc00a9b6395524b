"""Grades to stop under the default regime against plain random sampling, coverage at the stop, the forecast.

Writes benchmarks/stopping.md. Pools: the shared ones (../shared/data, skipped
when absent) prepared as default projects, and pools of our own making
(benchmarks/pools.make_pool: N 500 to 5,000, means 0.02, 0.1 and 0.5,
surrogate AUROC 0.5, 0.7 and 0.9, binary and skewed continuous grades), each
at target half-widths 0.05 and 0.03. The manager's expected score, for the
setup forecast, is the pool's mean times 1.25 (a manager a quarter off); the
surrogate's own forecast is given beside it.

    python benchmarks/stopping.py [--reps 1000] [--regime looks]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
from pathlib import Path

import numpy as np

from benchmarks.estimation import prepared
from benchmarks.pools import make_pool
from core.stats.simulate import simulate
from core.stats.stopping import DEFAULT_REGIME, REGIMES

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"
TARGETS = (0.05, 0.03)
SIZES = (500, 2000, 5000)
MEANS = (0.02, 0.1, 0.5)
AUROCS = (0.5, 0.7, 0.9)
KINDS = ("binary", "skewed")
GOAL_RATIO = {0.5: 1.2, 0.7: 1.0, 0.9: 0.8}
"""The goal for the median grades at the stop over uniform's fixed-n size, by surrogate AUROC."""


def pools() -> list[tuple[str, float | None, object]]:
    """(name, AUROC or None, items) for every benchmark pool."""
    out = []
    for name in ("gsm8k", "truthfulqa", "alpacaeval-judge"):
        if (SHARED / name / "pool.jsonl").exists():
            out.append((f"shared {name}", None, prepared(SHARED, name)))
    for i, (mean, auroc, kind) in enumerate(itertools.product(MEANS, AUROCS, KINDS)):
        size = SIZES[i % len(SIZES)]
        items = make_pool(size, mean, kind=kind, auroc=auroc, seed=100 + i)
        out.append((f"{kind}, N {size}, mean {mean}, AUROC {auroc}", auroc, items))
    return out


def run(reps: int, regime: str, seed: int) -> tuple[list[dict], float]:
    rows = []
    start = time.perf_counter()
    for (name, auroc, items), target in itertools.product(pools(), TARGETS):
        mean = float(items["label"].mean())
        result = simulate(
            items,
            ["10"],
            reps=reps,
            seed=seed,
            methods=["uniform"],
            regime=regime,
            target_half_width=target,
            expected=min(0.99, 1.25 * mean),
        )
        stopping = result["stopping"]
        rows.append({"pool": name, "auroc": auroc, "target": target, "mu": mean, **stopping})
        print(f"{name} target {target}: {stopping['activegrade']['stop_n_ratio']:.2f}", flush=True)
    return rows, time.perf_counter() - start


def _hit_summary(rows: list[dict], field: str) -> str:
    hits = np.array([r["activegrade"][field] for r in rows])
    return f"{hits.mean():.3f} (pools {hits.min():.2f} to {hits.max():.2f})"


def markdown(rows: list[dict], reps: int, regime: str, seconds: float) -> str:
    lines = [
        "# Grades to stop, coverage at the stop, and the forecast",
        "",
        f"`python benchmarks/stopping.py --reps {reps} --regime {regime}`; {reps} replications per pool and target, "
        f"{platform.machine()}, {seconds / 60:.0f} min. Written by the script: do not edit by hand.",
        "",
        "Each replication grades a pool in the queue's order until the regime's rule says done "
        "(core.stats.stopping), as a manager who stops when the dashboard says so. *ratio*: median grades at the "
        "stop over the grades a uniform random sample needs with the usual fixed-n interval for the same half-width "
        "(*uniform n*, from the pool's true variance); *uniform, same regime*: uniform random sampling stopped by the "
        "same rule. Coverage: of the interval shown at the stop, ± its Monte Carlo s.e. *setup hit*: share of stops "
        "inside the setup's 80% range (from the manager's expected score, the pool's mean times 1.25; *surrogate*: "
        "from the surrogate alone); *projection hit*: inside the dashboard's 80% range after max(20, 2H) grades.",
        "",
        "| pool | target | mu | uniform n | grades at stop (median) | ratio | goal | uniform, same regime "
        "| coverage at stop | bias at stop | saving shown | setup range | setup hit | surrogate hit "
        "| projection range | projection hit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, u = r["activegrade"], r["uniform"]
        goal = GOAL_RATIO.get(r["auroc"])
        mark = "" if goal is None else f"<= {goal}" + (" met" if a["stop_n_ratio"] <= goal else " **missed**")
        lines.append(
            f"| {r['pool']} | {r['target']} | {r['mu']:.3f} | {r['uniform_fixed_n']} | {a['stop_n_median']:.0f} "
            f"| {a['stop_n_ratio']:.2f} | {mark} | {u['stop_n_median']:.0f} "
            f"| {a['stop_coverage']:.3f} ± {a['stop_coverage_se']:.3f} | {a['stop_bias']:+.4f} "
            f"| {a['saving_shown_at_stop']:+.0%} (realised {a['saving_realised']:+.0%}) "
            f"| {a['forecast_low']:.0f}-{a['forecast_high']:.0f} | {a['forecast_hit']:.2f} "
            f"| {a.get('forecast_surrogate_hit', float('nan')):.2f} "
            f"| {a['projection_low']:.0f}-{a['projection_high']:.0f} | {a['projection_hit']:.2f} |"
        )
    covered = np.array([r["activegrade"]["stop_coverage"] + 2 * r["activegrade"]["stop_coverage_se"] for r in rows])
    lines += [
        "",
        "## Goals",
        "",
        f"- Coverage at the stop + 2 s.e. >= 0.935: met on {int((covered >= 0.935).sum())} of {len(rows)} "
        f"(pool, target) pairs; lowest coverage {min(r['activegrade']['stop_coverage'] for r in rows):.3f}.",
        f"- Setup forecast, stops inside the 80% range over all pairs together: {_hit_summary(rows, 'forecast_hit')}"
        " (goal 0.70-0.90).",
        f"- The dashboard's projection after max(20, 2H) grades: {_hit_summary(rows, 'projection_hit')}"
        " (goal 0.70-0.90 on each pool).",
    ]
    met = [r for r in rows if r["auroc"] is not None]
    for auroc, goal in GOAL_RATIO.items():
        sub = [r["activegrade"]["stop_n_ratio"] for r in met if r["auroc"] == auroc]
        lines.append(
            f"- AUROC {auroc}: median grades at the stop over uniform's fixed-n size {min(sub):.2f} to "
            f"{max(sub):.2f} (goal at most {goal})."
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--regime", choices=REGIMES, default=DEFAULT_REGIME)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "stopping.md"))
    args = parser.parse_args()
    rows, seconds = run(args.reps, args.regime, args.seed)
    Path(args.out).write_text(markdown(rows, args.reps, args.regime, seconds))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
