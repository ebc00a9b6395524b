"""The default regime on grade shapes that benchmarks/stopping.py does not have: how far its figures carry.

Writes benchmarks/shapes.md. benchmarks/stopping.py's continuous pools all share
one shape (Beta with a + b = 3.3, so the grades use about a quarter of the
Bernoulli variance m (1 - m) their mean allows), which the forecast's prior of
that share happens to centre on. Here: continuous grades that use most of it
(Beta, a + b = 0.7) and little of it (a + b = 12), scales of 3 and 11 values,
and bimodal grades (a low mode that is itself spread, Beta(2, 20), and a share
near 1), also rounded to the app's five-value scale, at means 0.1 (bimodal:
0.17, a tenth of the grades near 1) and 0.5,
without signal (AUROC 0.5, N 1,500) and with a strong surrogate (AUROC 0.9,
N 3,000), each at target half-widths 0.05 and 0.03. Nothing in core/ is tuned
to these pools; the file records where the product holds and where it does not.

    python benchmarks/shapes.py [--reps 500]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from benchmarks.pools import make_pool
from benchmarks.stopping import stopping_mode
from core.stats.simulate import labels_of, simulate
from core.stats.stopping import ANYTIME

HERE = Path(__file__).resolve().parent
TARGETS = (0.05, 0.03)
SHAPES = (
    ("continuous, a + b = 0.7", {"kind": "skewed", "concentration": 0.7}, (0.1, 0.5)),
    ("continuous, a + b = 12", {"kind": "skewed", "concentration": 12.0}, (0.1, 0.5)),
    ("3 values", {"kind": "likert", "levels": 3}, (0.1, 0.5)),
    ("11 values", {"kind": "likert", "levels": 11}, (0.1, 0.5)),
    ("bimodal", {"kind": "bimodal"}, (0.17, 0.5)),
    ("bimodal, 5 values", {"kind": "bimodal", "levels": 5}, (0.17, 0.5)),
)
"""(name, make_pool's arguments, means) of each shape."""
SIGNAL = ((0.5, 1500), (0.9, 3000))
"""(surrogate AUROC, N) of each pool of a shape and mean."""
COVERAGE_GOAL = 0.935


def pools() -> list[tuple[str, float, object]]:
    """(name, AUROC, items) for every pool."""
    out = []
    for i, (name, kwargs, means) in enumerate(SHAPES):
        for j, mean in enumerate(means):
            for k, (auroc, size) in enumerate(SIGNAL):
                items = make_pool(size, mean, auroc=auroc, seed=300 + 10 * i + 2 * j + k, **kwargs)
                out.append((f"{name}, N {size}, mean {mean}, AUROC {auroc}", auroc, items))
    return out


def run(reps: int, seed: int) -> list[dict]:
    """One row per pool and target: the stopping mode's figures for the design and for uniform sampling under the
    same rule, and for the pools without signal the fixed-n MSE ratio and coverage at 10 and 20 grades."""
    rows = []
    for name, auroc, items in pools():
        labels = labels_of(items)
        mu = float(labels.mean())
        row = {"pool": name, "mu": mu, "rho": float(labels.var() / (mu * (1 - mu)))}
        if auroc == 0.5:
            fixed = simulate(items, ["10", "20"], reps=reps, seed=seed, methods=["uniform", "activegrade"])
            row["fixed"] = fixed["methods"]["activegrade"]
        for target in TARGETS:
            anytime = stopping_mode(items, target, reps, seed, ANYTIME)["activegrade"]
            rows.append({**row, "target": target, **stopping_mode(items, target, reps, seed), "anytime": anytime})
        print(f"{name} done", flush=True)
    return rows


def _goal(coverage: float, se: float) -> str:
    return "" if coverage + 2 * se >= COVERAGE_GOAL else " (missed)"


def markdown(rows: list[dict], reps: int, seconds: float) -> str:
    lines = [
        "# The default regime on other grade shapes",
        "",
        f"{reps} replications per pool and target; {platform.machine()}, {seconds / 60:.0f} min. "
        "Written by benchmarks/shapes.py (its docstring says which pools and why). *rho*: the grades' variance "
        "over m (1 - m); *coverage at stop*: of the interval shown at the stop, ± its Monte Carlo s.e., for the "
        "project's design and for uniform random sampling stopped by the same rule; *anytime rule*: the design "
        "stopped by the anytime-valid interval instead (the option for those who stop at any grade); *setup hit*: share of stops "
        "inside the setup's 80% range (the manager's expected score: the mean times 1.25); *projection hit*: "
        "inside the dashboard's range after 20 grades. Goals as in benchmarks/stopping.md: coverage + 2 s.e. "
        ">= 0.935; hits 0.70-0.90.",
        "",
        "| pool | rho | target | grades at stop (median) | over Wilson's | coverage at stop | uniform, same rule "
        "| anytime rule: grades, coverage | setup range | setup hit | projection range | projection hit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, u = r["activegrade"], r["uniform"]
        lines.append(
            f"| {r['pool']} | {r['rho']:.2f} | {r['target']} | {a['stop_n_median']:.0f} "
            f"| {a['stop_n_ratio_wilson']:.2f} | {a['stop_coverage']:.3f} ± {a['stop_coverage_se']:.3f}"
            f"{_goal(a['stop_coverage'], a['stop_coverage_se'])} | {u['stop_coverage']:.3f} "
            f"| {r['anytime']['stop_n_median']:.0f}, {r['anytime']['stop_coverage']:.3f} "
            f"| {a['forecast_low']:.0f}-{a['forecast_high']:.0f} | {a['forecast_hit']:.2f} "
            f"| {a['projection_low']:.0f}-{a['projection_high']:.0f} | {a['projection_hit']:.2f} |"
        )
    covered = [r for r in rows if r["activegrade"]["stop_coverage"] + 2 * r["activegrade"]["stop_coverage_se"] >= 0.935]
    hits = np.array([r["activegrade"]["projection_hit"] for r in rows])
    setup = np.array([r["activegrade"]["forecast_hit"] for r in rows])
    lines += [
        "",
        f"- Coverage at the stop + 2 s.e. >= 0.935: met on {len(covered)} of {len(rows)} (pool, target) pairs; "
        f"lowest {min(r['activegrade']['stop_coverage'] for r in rows):.3f}.",
        f"- Setup forecast: stops inside the 80% range over all pairs together {setup.mean():.2f}.",
        f"- The dashboard's projection after 20 grades: within 0.70-0.90 on "
        f"{int(((hits >= 0.70) & (hits <= 0.90)).sum())} of {len(rows)} pairs ({hits.min():.2f} to {hits.max():.2f}).",
        "",
        "## Fixed budgets without signal",
        "",
        "MSE over uniform's exact MSE at the same n and coverage of the fixed-n interval, ± Monte Carlo s.e. "
        "Goals: MSE ratio at most 1 + 2 s.e.; coverage + 2 s.e. >= 0.935.",
        "",
        "| pool | n | MSE ratio | fixed-n coverage |",
        "|---|---|---|---|",
    ]
    for r in rows:
        if "fixed" not in r or r["target"] != TARGETS[0]:
            continue
        for budget, m in r["fixed"].items():
            lines.append(
                f"| {r['pool']} | {budget} | {m['mse_ratio']:.3f} ± {m['mse_ratio_se']:.3f} "
                f"| {m['coverage']:.3f} ± {m['coverage_se']:.3f}{_goal(m['coverage'], m['coverage_se'])} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "shapes.md"))
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run(args.reps, args.seed)
    Path(args.out).write_text(markdown(rows, args.reps, time.perf_counter() - start))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
