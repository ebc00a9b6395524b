"""Bias of the stratified estimator under the queue's adaptive allocation, against non-adaptive designs.

The stratified estimator sum_h W_h ybar_h is unbiased for any allocation fixed
in advance. The app's queue re-estimates the strata's spreads from the grades
as they arrive (core.stats.queue.queue_spreads), so how many grades a stratum gets
depends on its own grades, and ybar_h can be biased (a stratum whose first
grades agree looks calm and gets fewer). Compared here, on pools of our own
making (benchmarks/pools.py), all with the app's design and estimator:

- continuous: the queue as it is, spreads updated after every grade
  (core.stats.simulate.replay_queue, the same order as core.stats.queue.next_item);
- batch-wise: the same queue with the spreads updated only at n = 2H, 4H,
  8H, ... (doubling batches), from the grades before the batch;
- static: the surrogate's planned allocation (core.stats.allocation.planned_allocation),
  no update: exactly unbiased, the control for Monte Carlo noise.

Per pool, budget and design: bias (mean estimate - mu), its Monte Carlo
standard error (sd / sqrt(reps)), bias as a share of mu, and bias / RMSE.

Run: python benchmarks/bias.py [--reps 4000]; writes benchmarks/bias.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from pools import make_pool  # benchmarks/pools.py, beside this script

from core.stats.allocation import Design, design_from_items, next_stratum, planned_allocation
from core.stats.estimate import estimate_batch
from core.stats.simulate import replay_queue, replication_orders, static_sample
from core.stats.spreads import adaptive_sd, calibrated_prior_sd

HERE = Path(__file__).resolve().parent
POOLS = [
    ("binary", 0.03, 2000, 0.7),
    ("binary", 0.03, 2000, 0.9),
    ("binary", 0.5, 2000, 0.7),
    ("skewed", 0.09, 2000, 0.7),
    ("skewed", 0.09, 2000, 0.9),
]
BUDGETS = (20, 50, 100, 200)


def replay_batchwise(design: Design, labels: np.ndarray, orders: np.ndarray, n: int) -> np.ndarray:
    """(R, n) positions of the queue with spreads frozen between n = 2H, 4H, 8H, ... (from the grades before)."""
    reps = orders.shape[0]
    grouped = np.take_along_axis(orders, np.argsort(design.stratum[orders], axis=1, kind="stable"), axis=1)
    offsets = np.concatenate([[0], np.cumsum(design.sizes)[:-1]])
    counts = np.zeros((reps, design.H), dtype=np.int64)
    sums, sumsq = np.zeros((reps, design.H)), np.zeros((reps, design.H))
    pooled = np.zeros((5, reps))
    d_all = design.proxy - design.proxy.mean()
    rows = np.arange(reps)
    positions = np.empty((reps, n), dtype=np.int64)
    sds = np.broadcast_to(design.prior_sd, (reps, design.H))
    update = 2 * design.H
    for step in range(n):
        if step == update:
            prior = calibrated_prior_sd(design, np.full(reps, step), *pooled)
            sds = adaptive_sd(prior, design.prior_strength, counts, sums, sumsq)
            update *= 2
        h = next_stratum(design.weights, sds, counts, design.sizes, design.floor)
        pos = grouped[rows, offsets[h] + counts[rows, h]]
        positions[:, step] = pos
        y, d = labels[pos], d_all[pos]
        counts[rows, h] += 1
        sums[rows, h] += y
        sumsq[rows, h] += y * y
        pooled += (d, d * d, y, d * y, y * y)
    return positions


def measure(pool: tuple, reps: int) -> list[dict]:
    kind, mean, n_items, auroc = pool
    items = make_pool(n_items, mean, kind=kind, auroc=auroc, seed=21)
    labels = items["label"].to_numpy()
    mu = float(labels.mean())
    design = design_from_items(items)
    orders = replication_orders(n_items, 3, reps)
    top = max(BUDGETS)
    designs = {
        "continuous": replay_queue(design, labels, orders, top),
        "batch-wise": replay_batchwise(design, labels, orders, top),
    }
    rows = []
    for n in BUDGETS:
        samples = {name: positions[:, :n] for name, positions in designs.items()}
        samples["static"] = static_sample(design, planned_allocation(design, n), orders)
        values = {
            name: estimate_batch(design, positions, labels[positions]).value for name, positions in samples.items()
        }
        for name, value in values.items():
            bias = float(value.mean() - mu)
            paired = value - values["static"]
            rows.append(
                {
                    "pool": f"{kind} {mean:g} N={n_items} AUROC {auroc:g} (mu {mu:.4f})",
                    "design": name,
                    "n": n,
                    "bias": bias,
                    "se": float(value.std() / np.sqrt(reps)),
                    "paired": float(paired.mean()),
                    "paired_se": float(paired.std() / np.sqrt(reps)),
                    "relative": bias / mu,
                    "rmse": float(np.sqrt(np.mean((value - mu) ** 2))),
                }
            )
    return rows


def markdown(rows: list[dict], reps: int, seconds: float) -> str:
    lines = [
        "# Bias under adaptive allocation (benchmarks/bias.py)",
        "",
        f"{reps} replications per pool, budget and design; {seconds:.0f} s on one core. `s.e.`: Monte Carlo "
        "standard error of the bias; a bias within 2 s.e. of 0 is not distinguishable from noise. "
        "`static` is unbiased by construction (the control). Every design replays the same random orders, "
        "so `- static` (the mean paired difference from the static design's estimate, with its s.e.) "
        "measures the adaptive part of the bias with much less noise than the bias itself.",
        "",
        "| pool | n | design | bias | s.e. | - static | s.e. | bias / mu | bias / RMSE | RMSE |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        paired = "" if r["design"] == "static" else f"{r['paired']:+.5f} | {r['paired_se']:.5f}"
        lines.append(
            f"| {r['pool']} | {r['n']} | {r['design']} | {r['bias']:+.5f} | {r['se']:.5f} "
            f"| {paired or ' | '} | {r['relative']:+.1%} | {r['bias'] / r['rmse']:+.3f} | {r['rmse']:.4f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [row for pool in POOLS for row in measure(pool, args.reps)]
    (HERE / "bias.md").write_text(markdown(rows, args.reps, time.perf_counter() - start))
    print((HERE / "bias.md").read_text())


if __name__ == "__main__":
    main()
