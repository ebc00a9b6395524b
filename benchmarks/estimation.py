"""Benchmark the sampling designs and estimators on the shared labelled pools.

    python benchmarks/estimation.py [--reps 4000] [--data ../shared/data] [--embedding]

Writes benchmarks/estimation.md: for each pool, every method of
`core.simulate` at budgets 2%, 5%, 10% and 20% (MSE ratio to uniform
sampling, coverage of the nominal 95% interval, budget saved), the paper's
headline figures beside them, the variants measured to choose the app's
defaults, and the simulator's run time for the issue's workload (1,000
replications x 4 budgets x all methods on gsm8k). truthfulqa is prepared with the
exact backend and, with --embedding, also with the embedding backend
(all-MiniLM-L6-v2; slow on CPU the first time, then cached).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from core.allocation import design_from_items, planned_saving
from core.estimate import DEFAULT_METHOD, estimate_batch
from core.io import load_inputs
from core.prepare import prepare_items
from core.simulate import METHODS, budget_sizes, replay_queue, replication_orders, simulate, synthetic_items

HERE = Path(__file__).resolve().parent
BUDGETS = ["0.02", "0.05", "0.1", "0.2"]
PAPER = "Liu et al. 2026 (arXiv 2605.10075): up to 28% lower MSE than uniform (ratio 0.72), 22.9% of the budget saved on average."


def prepared(data: Path, name: str, backend: str) -> pd.DataFrame:
    folder = data / name
    return prepare_items(load_inputs(str(folder / "pool.jsonl"), str(folder / "samples.jsonl")), backend=backend)


def method_table(result: dict) -> str:
    lines = [
        "| method | " + " | ".join(f"{b}: MSE ratio / coverage / saving" for b in BUDGETS) + " |",
        "|---|" + "---|" * len(BUDGETS),
    ]
    for method, rows in result["methods"].items():
        cells = [f"{r['mse_ratio']:.3f} / {r['coverage']:.3f} / {r['budget_saving']:+.1%}" for r in rows.values()]
        name = f"**{method}**" if method == "activegrade" else method
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def variant_rows(items: pd.DataFrame, reps: int, seed: int) -> list[str]:
    """The app's queue under other design and estimator settings: MSE ratio and coverage per budget."""
    labels = items["label"].to_numpy(dtype=float)
    N = labels.size  # noqa: N806
    sizes = budget_sizes(BUDGETS, N)
    s2 = labels.var(ddof=1)
    orders = replication_orders(N, seed, reps)
    variants = [
        ("default", {}, DEFAULT_METHOD, None),
        ("stratify by entropy", {"stratify_by": "entropy"}, DEFAULT_METHOD, None),
        ("stratify by both", {"stratify_by": "both"}, DEFAULT_METHOD, None),
        ("difference estimator", {}, "difference", None),
        ("entropy strata + difference estimator", {"stratify_by": "entropy"}, "difference", None),
        ("per-stratum spreads adapt fast (prior strength 4)", {"prior_strength": 4.0}, DEFAULT_METHOD, None),
        ("no recalibration of the surrogate by the grades", {"calibration_strength": 1e9}, DEFAULT_METHOD, None),
        (
            "no adaptation at all (static approximate Neyman)",
            {"calibration_strength": 1e9, "prior_strength": 1e9},
            DEFAULT_METHOD,
            None,
        ),
        (
            "shrink 1 (raw agreement as proxy; no recalibration)",
            {"shrink": 1.0, "calibration_strength": 1e9},
            DEFAULT_METHOD,
            None,
        ),
        ("textbook Wald interval (no variance prior, normal)", {}, DEFAULT_METHOD, "wald"),
    ]
    rows = []
    for label, options, method, interval in variants:
        design = design_from_items(items, **options)
        queue = replay_queue(design, labels, orders, max(sizes.values()))
        cells = []
        for n in sizes.values():
            positions = queue[:, :n]
            if interval == "wald":
                batch = estimate_batch(design, positions, labels[positions], method, variance_prior=0.0)
                half = stats.norm.ppf(0.975) * np.sqrt(batch.variance)
                low, high = batch.value - half, batch.value + half
            else:
                batch = estimate_batch(design, positions, labels[positions], method)
                low, high = batch.interval(0.95)
            mse = np.mean((batch.value - labels.mean()) ** 2)
            ratio = mse / ((1 - n / N) * s2 / n)
            coverage = np.mean((low <= labels.mean()) & (labels.mean() <= high))
            cells.append(f"{ratio:.3f} / {coverage:.3f}")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows


def pool_section(title: str, items: pd.DataFrame, reps: int, seed: int) -> str:
    result = simulate(items, BUDGETS, reps=reps, seed=seed)
    ours, oracle = result["methods"]["activegrade"], result["methods"]["neyman_oracle"]
    paper = result["methods"]["neyman_paper"]
    mean_saving = np.mean([r["budget_saving"] for r in ours.values()])
    text = [
        f"## {title}",
        "",
        f"N = {result['N']}, true mean grade mu = {result['mu']:.4f}; {reps} replications per method and budget.",
        "",
        method_table(result),
        "",
        f"activegrade saves {mean_saving:.1%} of the budget on average over the four budgets "
        f"(paper's method here: {np.mean([r['budget_saving'] for r in paper.values()]):.1%}; "
        f"oracle Neyman on entropy strata: {np.mean([r['budget_saving'] for r in oracle.values()]):.1%}; "
        "the paper reports 22.9%). Saving the app predicts before any grade (`planned_saving`): "
        + ", ".join(f"{b}: {planned_saving(design_from_items(items), int(r['n'])):+.1%}" for b, r in ours.items())
        + " (from the surrogate alone, its signal halved; compare with the realised saving above).",
        "",
        "Variants of the app's queue (MSE ratio / coverage; same replications):",
        "",
        "| variant | " + " | ".join(BUDGETS) + " |",
        "|---|" + "---|" * len(BUDGETS),
        *variant_rows(items, reps, seed),
        "",
    ]
    return "\n".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000, help="replications for the quality tables (default: 4000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    parser.add_argument("--embedding", action="store_true", help="also prepare truthfulqa with the embedding backend")
    args = parser.parse_args()
    data = Path(args.data)
    pools = [("gsm8k, exact backend", "gsm8k", "exact"), ("truthfulqa, exact backend", "truthfulqa", "exact")]
    if args.embedding:
        pools.append(("truthfulqa, embedding backend", "truthfulqa", "embedding"))
    pools.append(("synthetic pool with Likert grades (core.simulate.synthetic_items(1000, likert=True))", "likert", ""))
    sections = []
    for title, name, backend in pools:
        items = synthetic_items(1000, likert=True) if name == "likert" else prepared(data, name, backend)
        if name == "gsm8k":
            start, cpu = time.perf_counter(), time.process_time()
            simulate(items, BUDGETS, reps=1000, seed=args.seed)
            timing = f"{time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s process CPU"
        sections.append(pool_section(title, items, args.reps, args.seed))
    header = f"""# Estimation benchmark

Written by `python benchmarks/estimation.py{" --embedding" if args.embedding else ""}` on {platform.machine()},
{os.cpu_count()} CPUs (shared with other work while it ran: wall time is an upper bound, process CPU the cost).

Methods are those of `core/simulate.py` (see its docstring); **activegrade** is
exactly the app's default: `design_from_items(items)` (5 strata by agreement,
approximate Neyman spreads from the smoothed agreement, recalibrated by the
grades as they arrive and blended with each stratum's own grades), the anytime
queue (`next_item`) and the default estimator (stratified, prior-stabilised
variance, Satterthwaite t interval). Cells: MSE / uniform sampling's exact MSE at the same n, coverage of
the nominal 95% interval (goal 0.93-0.97), budget saved against uniform at
equal MSE. Monte Carlo noise at {args.reps} replications: about
+-{np.sqrt(2 / args.reps):.3f} on a ratio and +-{np.sqrt(0.95 * 0.05 / args.reps):.3f} on a coverage (one standard error).

Paper: {PAPER}
The paper's method reproduced here is `neyman_paper`; `neyman_oracle` is its
ceiling (true spreads, entropy strata).

How the defaults were chosen (see each pool's "variants" table): strata by
agreement instead of entropy carry the agreement signal that entropy strata
miss; the difference estimator with agreement and entropy as covariates helps
on entropy strata but adds nothing on agreement strata and costs a little on
truthfulqa, so it is offered, not the default; fast per-stratum adaptation
(prior strength 4) loses coverage, so the per-stratum spreads lean on 100
pseudo-grades while the pooled recalibration of the surrogate does the
adapting; raw agreement as the spread proxy (no smoothing) starves strata the
surrogate wrongly calls certain; the textbook Wald interval under-covers at
small budgets, which the prior-stabilised t interval fixes.

Simulator time for the issue's workload, 1,000 replications x 4 budgets x {len(METHODS)} methods on
gsm8k (1,319 items): {timing} (goal: under 60 s).
"""
    (HERE / "estimation.md").write_text(header + "\n" + "\n".join(sections))
    print(header + "\n" + "\n".join(sections))


if __name__ == "__main__":
    main()
