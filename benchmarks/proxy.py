"""Benchmark an existing score as the design's proxy (core.stats.proxy) against uniform sampling.

    python benchmarks/proxy.py [--reps 4000] [--data ../shared/data]

Writes benchmarks/proxy.md. For every pool, the app's design with the proxy
(`prepare_items(..., proxy=...)`, then exactly what `core.stats.simulate`'s
activegrade runs: `design_from_items`, the anytime queue, the default
estimator) and uniform sampling are run on the same replications (common
random numbers: replication r of both reads the pool in the same random
order). Cells: MSE ratio to uniform with its Monte Carlo 95% interval, and
the coverage of the nominal 95% interval. The ratio is mean(e_d^2) / mean(e_u^2)
over the replications, e the errors of the two designs in one replication; its
interval is the delta-method one for a ratio of paired means,
R +- 1.96 sd(e_d^2 - R e_u^2) / (sqrt(reps) mean(e_u^2)).

Pools:
- alpacaeval-judge with its `judge` column (../shared/data; labels 0, 1/2, 1);
- the same with the judge shuffled across items (a proxy with no signal), one
  shuffle per block of replications so the result is not one permutation's luck;
- generated pools whose proxy has a known correlation rho with the grade
  (`generated_pool`), binary and Likert grades, continuous and verdict-like
  proxies: the tuning-free check that the design follows 1 - rho^2 and loses
  nothing at rho = 0.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from core.inputs.io import Inputs, load_inputs
from core.stats.allocation import design_from_items
from core.stats.estimate import DEFAULT_METHOD, estimate_batch
from core.stats.proxy import PROXY_COLUMN
from core.stats.simulate import budget_sizes, replay_queue, replication_orders, simulate
from core.surrogate.prepare import prepare_items

HERE = Path(__file__).resolve().parent
BUDGETS = ["0.02", "0.05", "0.1", "0.2"]
Z = 1.959963984540054
VARIANTS = [
    (
        "judge; difference estimator, agreement and entropy as covariates (the combination rule)",
        {"estimate": {"method": "difference"}},
    ),
    ("judge; not recalibrated by the grades (calibration strength 1e9)", {"design": {"calibration_strength": 1e9}}),
    (
        "agreement of 5 other models' answers, no judge (the surrogate design)",
        {"design": {"proxy_column": "agreement"}},
    ),
]
"""Variants measured on alpacaeval-judge beside the app's design (same replications)."""


def generated_pool(n_items: int, rho: float, *, likert: bool, verdict: bool, seed: int) -> pd.DataFrame:
    """A pool whose `score` column correlates rho with the label (in expectation).

    label: Bernoulli(0.3), or with `likert` a 5-point grade round(4 u)/4 of a Beta(2, 3) u;
    score = rho z(label) + sqrt(1 - rho^2) e, z the standardised label and e standard normal
    noise, so corr(score, label) = rho; with `verdict` the score is cut at its 70% quantile
    into 0/1, as a judge's verdict (the correlation then falls below rho).
    """
    rng = np.random.default_rng(seed)
    label = np.round(4 * rng.beta(2, 3, n_items)) / 4 if likert else (rng.random(n_items) < 0.3).astype(float)
    z = (label - label.mean()) / label.std()
    score = rho * z + np.sqrt(1 - rho**2) * rng.standard_normal(n_items)
    if verdict:
        score = (score > np.quantile(score, 0.7)).astype(float)
    return pd.DataFrame(
        {
            "id": [f"g-{i:05d}" for i in range(n_items)],
            "prompt": "generated",
            "response": "generated",
            "label": label,
            "score": score,
        }
    )


def crn_cells(items: pd.DataFrame, orders: np.ndarray, sizes: dict[str, int], variant: dict) -> dict[str, tuple]:
    """Per budget: (squared errors of the proxy design, of uniform, coverage hits of the proxy design).

    variant: {"design": design_from_items options, "estimate": estimate_batch options} (empty: the app's)."""
    labels = items["label"].to_numpy(dtype=float)
    mu = labels.mean()
    design = design_from_items(items, **variant.get("design", {}))
    queue = replay_queue(design, labels, orders, max(sizes.values()))
    estimate_options = {"method": DEFAULT_METHOD, **variant.get("estimate", {})}
    out = {}
    for budget, n in sizes.items():
        batch = estimate_batch(design, queue[:, :n], labels[queue[:, :n]], **estimate_options)
        low, high = batch.interval(0.95)
        uniform = labels[orders[:, :n]].mean(axis=1)
        out[budget] = ((batch.value - mu) ** 2, (uniform - mu) ** 2, (low <= mu) & (mu <= high))
    return out


def ratio_interval(e_design: np.ndarray, e_uniform: np.ndarray) -> tuple[float, float, float]:
    """R = mean(e_d) / mean(e_u) and its delta-method 95% interval (paired replications)."""
    r = e_design.mean() / e_uniform.mean()
    half = Z * np.std(e_design - r * e_uniform, ddof=1) / (np.sqrt(e_design.size) * e_uniform.mean())
    return float(r), float(r - half), float(r + half)


def measure(
    blocks: list[pd.DataFrame], reps: int, seed: int, variant: dict | None = None
) -> dict[str, dict[str, float]]:
    """Ratio, interval and coverage per budget, the replications split evenly over `blocks` (designs)."""
    n_items = len(blocks[0])
    sizes = budget_sizes(BUDGETS, n_items)
    orders = replication_orders(n_items, seed, reps)
    parts = [
        crn_cells(items, chunk, sizes, variant or {})
        for items, chunk in zip(blocks, np.array_split(orders, len(blocks)))
    ]
    result = {}
    for budget in sizes:
        e_d, e_u, hit = (np.concatenate([p[budget][k] for p in parts]) for k in range(3))
        r, low, high = ratio_interval(e_d, e_u)
        result[budget] = {"ratio": r, "low": low, "high": high, "coverage": float(hit.mean())}
    return result


def row(title: str, cells: dict[str, dict[str, float]]) -> str:
    text = [f"{c['ratio']:.3f} [{c['low']:.3f}, {c['high']:.3f}] / {c['coverage']:.3f}" for c in cells.values()]
    return f"| {title} | " + " | ".join(text) + " |"


def uniform_row(items: pd.DataFrame, reps: int, seed: int) -> str:
    """Uniform sampling's own interval on the pool (core.stats.simulate's uniform): its coverage, for comparison."""
    cells = simulate(items, BUDGETS, reps=reps, seed=seed, methods=["uniform"])["methods"]["uniform"]
    return (
        "| uniform sampling itself (coverage of its interval) | "
        + " | ".join(f"1 / {c['coverage']:.3f}" for c in cells.values())
        + " |"
    )


def prepared(pool: pd.DataFrame, proxy: str, samples: pd.DataFrame | None = None) -> pd.DataFrame:
    empty = pd.DataFrame({"id": pd.Series(dtype=str), "sample": pd.Series(dtype=str)})
    inputs = Inputs(pool=pool, samples=empty if samples is None else samples, without_samples=[])
    return prepare_items(inputs, proxy=proxy)


def shuffled(items: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The items with their proxy (and so their strata) permuted across items: no signal left."""
    out = items.copy()
    out[PROXY_COLUMN] = np.random.default_rng(seed).permutation(out[PROXY_COLUMN].to_numpy())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shuffles", type=int, default=20, help="shuffles of the judge (default: 20)")
    parser.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    args = parser.parse_args()
    folder = Path(args.data) / "alpacaeval-judge"
    header = "| pool, proxy | " + " | ".join(BUDGETS) + " |\n|---|" + "---|" * len(BUDGETS)
    lines = []
    if (folder / "pool.jsonl").exists():
        inputs = load_inputs(str(folder / "pool.jsonl"), str(folder / "samples.jsonl"))
        items = prepare_items(inputs, proxy="judge")
        labels, judge = items["label"].to_numpy(dtype=float), items["judge"].to_numpy(dtype=float)
        lines += [
            f"### alpacaeval-judge (N = {len(items)}, mu = {labels.mean():.4f}, corr(judge, label) = "
            f"{np.corrcoef(judge, labels)[0, 1]:.3f}; strata sizes {np.bincount(items['stratum']).tolist()})",
            "",
            header,
            row("judge", measure([items], args.reps, args.seed)),
            *(row(title, measure([items], args.reps, args.seed, variant)) for title, variant in VARIANTS),
            uniform_row(items, args.reps, args.seed),
            row(
                f"judge shuffled ({args.shuffles} shuffles)",
                measure([shuffled(items, s) for s in range(args.shuffles)], args.reps, args.seed),
            ),
            "",
        ]
    lines += ["### Generated pools (N = 2000; score with corr rho to the grade)", "", header]
    for likert in (False, True):
        for verdict in (False, True):
            for rho in (0.0, 0.3, 0.5, 0.7, 0.9):
                pools = [generated_pool(2000, rho, likert=likert, verdict=verdict, seed=s) for s in range(10)]
                blocks = [prepared(pool, "score") for pool in pools]
                corr = np.mean([np.corrcoef(p["score"], p["label"])[0, 1] for p in pools])
                kind = f"{'Likert' if likert else 'binary'} grade, {'verdict' if verdict else 'continuous'} score"
                lines.append(
                    row(
                        f"{kind}, rho {rho} (corr {corr:.2f}, 1 - corr^2 = {1 - corr**2:.2f})",
                        measure(blocks, args.reps, args.seed),
                    )
                )
    text = f"""# An existing score as the proxy

Written by `python benchmarks/proxy.py --reps {args.reps}` on {platform.machine()}, {os.cpu_count()} CPUs.

The design is the app's with `--proxy COLUMN` (core/stats/proxy.py): strata on the proxy (one per
distinct value for a verdict, else 5 equal-frequency strata), approximate Neyman spreads from
the proxy as predicted grade, recalibrated by the grades, the anytime queue and the default
(stratified) estimator. Cells: MSE ratio to uniform sampling with its Monte Carlo 95%
interval (common random numbers: both designs read the pool in the same random order in every
replication), then the coverage of the nominal 95% interval (goal 0.93-0.97). {args.reps}
replications per row (the generated rows: over 10 pools; the shuffled rows: over
{args.shuffles} shuffles). Goals: ratio <= 0.6 at 5-20% with the judge; with a proxy carrying no
signal the interval reaches 1.05 or below. Strata alone reach about 1 - corr^2 (docs/method.md,
*Proxies*).

{chr(10).join(lines)}

Reading. With the judge the MSE goal holds at every budget (0.46-0.49, every interval's upper end at
most 0.53). With the Korn-Graubard interval (core.stats.intervals) its coverage is within the goal at
5-20% (0.935-0.957) and above it at 2% (0.988, 16 grades in 2 strata), as uniform sampling's own
interval is on this pool (0.992 at 2%; mean grade 0.2): short samples of a rare outcome get a
conservative interval, never a short one. No row of either table covers less than 0.93; the ones
above 0.97 are the smallest budgets and the strongest proxies (nearly pure strata). A shuffled judge
costs at most 3.5% (1.005-1.035), every interval's lower end at most 1.010. Not recalibrating the
proxy by the grades covers a little more and loses a little MSE here (0.49-0.51), so the app keeps
one recalibration rule for every proxy. The combination rule changes nothing on this pool because
exact agreement between open-ended answers is 0 for every item (the surrogate design is uniform
sampling, ratio 1).
"""
    (HERE / "proxy.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
