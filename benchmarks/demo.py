"""What the simulator measures on the demo project (data/demo): honest figures for a presenter.

    HF_HUB_OFFLINE=1 python benchmarks/demo.py [--reps 2000] [--backends exact embedding]

For each semantic backend it prepares the demo pool (clusters, semantic
entropy, agreement, five entropy strata), describes how well the surrogate's
signals predict the labels, then replays grading `reps` times at several
budgets with core.stats.simulate.simulate and writes benchmarks/demo.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import pandas as pd
from sklearn.metrics import roc_auc_score

from core.inputs.io import load_inputs
from core.stats.simulate import simulate
from core.surrogate.prepare import prepare_items

ROOT = Path(__file__).resolve().parents[1]

DEMO = ROOT / "data" / "demo"
BUDGETS = ("0.05", "0.1", "0.2", "0.3")
SHOWN = ("uniform", "proportional", "neyman_paper", "neyman_oracle", "activegrade", "lure", "active_inference")


def signal_table(items: pd.DataFrame) -> str:
    """Per stratum: size, accuracy of the target, mean entropy and agreement."""
    rows = ["| stratum | items | target accuracy | mean semantic entropy | mean agreement |", "|---|---|---|---|---|"]
    for stratum, group in items.groupby("stratum"):
        rows.append(
            f"| {stratum} | {len(group)} | {group['label'].mean():.2f} | "
            f"{group['semantic_entropy'].mean():.2f} | {group['agreement'].mean():.2f} |"
        )
    return "\n".join(rows)


def auroc(items: pd.DataFrame, column: str, sign: float) -> float:
    """Area under the ROC curve of `sign * column` as a predictor of label = 1 (items with samples only)."""
    scored = items[items[column].notna()]
    return float(roc_auc_score(scored["label"], sign * scored[column].to_numpy(dtype=float)))


def simulation_table(result: dict) -> str:
    rows = [
        "| method | budget | n | MSE / uniform's | 95% CI coverage | mean CI width | budget saved |",
        "|---|---|---|---|---|---|---|",
    ]
    for method in SHOWN:
        for budget, r in result["methods"][method].items():
            rows.append(
                f"| {method} | {float(budget):.0%} | {r['n']:.0f} | {r['mse_ratio']:.2f} | "
                f"{r['coverage']:.3f} | {r['ci_width']:.3f} | {r['budget_saving']:+.0%} |"
            )
    return "\n".join(rows)


def section(inputs, samples_file: str, backend: str, args: argparse.Namespace) -> list[str]:
    """The diagnostics and the simulation table of one samples file and one backend."""
    started = time.perf_counter()
    items = prepare_items(inputs, backend=backend)
    prepared = time.perf_counter() - started
    result = simulate(items, BUDGETS, reps=args.reps, seed=args.seed)
    uniform = [r["mse_ratio"] for r in result["methods"]["uniform"].values()]
    all_different = float((items["n_clusters"] == items["n_samples"]).mean())
    return [
        "",
        f"## Samples `{samples_file}`, backend `{backend}`",
        "",
        f"Preparation took {prepared:.1f} s. Items whose {items['n_samples'].median():.0f} samples all differ "
        f"(maximal entropy): {all_different:.0%}. How well the surrogate's signals predict that the target is "
        f"right (AUROC, 0.5 = no signal): agreement {auroc(items, 'agreement', 1):.3f}, low semantic entropy "
        f"{auroc(items, 'semantic_entropy', -1):.3f}.",
        "",
        signal_table(items),
        "",
        f"{args.reps} replications per method and budget (seed {args.seed}); the same table comes from "
        f"`python -m core simulate --pool data/demo/pool.jsonl --samples {samples_file} --backend {backend} "
        f"--budgets {','.join(BUDGETS)} --reps {args.reps} --seed {args.seed}`. Monte Carlo noise: uniform's "
        f"ratio, 1 in expectation, comes out between {min(uniform):.2f} and {max(uniform):.2f}.",
        "",
        simulation_table(result),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", nargs="+", default=["exact", "embedding"])
    parser.add_argument(
        "--samples",
        nargs="+",
        default=["data/demo/samples.jsonl"],
        help="surrogate sample files (relative to the repository), one set of sections each",
    )
    parser.add_argument("--out", default=str(Path(__file__).with_suffix(".md")))
    args = parser.parse_args()

    pool = load_inputs(DEMO / "pool.jsonl").pool
    labels = pool["label"].to_numpy(dtype=float)
    by_topic = pool.assign(label=labels).groupby("topic")["label"].agg(["size", "mean"])
    lines = [
        "# The simulator on the demo project",
        "",
        f"Produced by `python benchmarks/demo.py --reps {args.reps} --seed {args.seed} "
        f"--backends {' '.join(args.backends)} --samples {' '.join(args.samples)}` on "
        f"{platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}. "
        f"Pool: data/demo ({len(pool)} questions, target SmolLM2-135M-Instruct greedy, labels from "
        "matching the reference; the surrogate samples and how they were made: data/demo/README.md).",
        "",
        f"Target accuracy (the quantity to estimate): mu = {labels.mean():.3f} "
        f"({int(labels.sum())} of {len(labels)} right).",
        "",
        "| topic | questions | target accuracy |",
        "|---|---|---|",
        *[f"| {topic} | {int(row['size'])} | {row['mean']:.2f} |" for topic, row in by_topic.iterrows()],
        "",
        "Columns below: MSE / uniform's is the mean squared error of the estimate over the replications "
        "divided by uniform random sampling's exact MSE at the same number of grades (below 1 is better); "
        "coverage is the share of replications whose 95% interval contains the true mu; budget saved is "
        "1 - n / m, where m is the number of uniform grades with the same MSE (core/stats/simulate.py).",
    ]
    for samples_file in args.samples:
        inputs = load_inputs(DEMO / "pool.jsonl", ROOT / samples_file)
        for backend in args.backends:
            lines += section(inputs, samples_file, backend, args)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
