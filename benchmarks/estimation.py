"""Benchmark the sampling designs, estimators and intervals of core.stats.simulate, with Monte Carlo errors.

    python benchmarks/estimation.py [--reps 4000] [--generated-reps 1000] [--data ../shared/data]

Writes benchmarks/estimation.md:

- the shared labelled pools (gsm8k, truthfulqa), prepared as a default project
  (strata by DEFAULT_STRATIFY_BY), every method of `core.stats.simulate` at budgets
  2%, 5%, 10% and 20%: MSE ratio, bias, fixed-n and anytime coverage, widths,
  realised and shown savings, each +- its Monte Carlo standard error;
- the anytime interval's width against the fixed-n one on gsm8k with n0 = 200,
  at n0/2, n0 and 2 n0;
- generated pools (N 500 and 5000, surrogate AUROC 0.5, 0.7, 0.9, binary means
  0.01, 0.03, 0.5, 0.97, 0.99 and a skewed continuous grade): coverage of the
  product's intervals (uniform, proportional, activegrade, and activegrade on a
  project whose budget is fixed in advance);
- honest savings on a pool whose surrogate carries no signal;
- cost: the simulator on the issue's workload, and the confidence sequence per
  replication and grade.

Everything is computed by the product's own functions, so rerunning this
script after a change of core.stats.estimate (for example the fixed-n interval)
updates every figure.
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

from core.inputs.io import load_inputs
from core.stats import stopping
from core.stats.allocation import Design
from core.stats.confseq import sequence_batch
from core.stats.design import prepared_design
from core.stats.estimate import DEFAULT_METHOD, estimate_batch
from core.stats.simulate import (
    METHODS,
    ORACLES,
    replay_queue,
    replication_orders,
    shown_saving,
    simulate,
    surrogate_items,
)
from core.stats.strata import DEFAULT_STRATIFY_BY
from core.surrogate.prepare import prepare_items

HERE = Path(__file__).resolve().parent
BUDGETS = ["0.02", "0.05", "0.1", "0.2"]
PRODUCT = ["uniform", "proportional", "activegrade"]
FIXED = "activegrade (budget fixed)"
"""activegrade on a project whose budget is fixed in advance (settings budget_fixed: plain Neyman allocation)."""
LEVEL = 0.95


def prepared(data: Path, name: str) -> pd.DataFrame:
    """A shared pool prepared as a default project (exact backend, strata by DEFAULT_STRATIFY_BY)."""
    folder = data / name
    inputs = load_inputs(str(folder / "pool.jsonl"), str(folder / "samples.jsonl"))
    return prepare_items(inputs, stratify_by=DEFAULT_STRATIFY_BY)


def generated_pool(n_items: int, auroc: float, mean: float | None, seed: int = 0) -> pd.DataFrame:
    """A labelled pool with a surrogate of a given AUROC.

    Grades: Bernoulli(mean), or with mean None a skewed continuous grade
    Beta(0.4, 4) (mean about 0.09). The surrogate's score is s = delta c + e,
    e ~ Normal(0, 1), c the class (grade 1, or grade above its median), delta =
    sqrt(2) Phi^-1(AUROC) (binormal model: AUROC = Phi(delta / sqrt 2));
    agreement is s binned into 6 equal-count levels 0, 0.2, ..., 1 (as with 5
    surrogate samples), semantic entropy falls with agreement plus noise, and
    the strata are those a default project prepares.
    """
    rng = np.random.default_rng(seed)
    if mean is None:
        labels = rng.beta(0.4, 4.0, n_items)
        cls = labels > np.median(labels)
    else:
        labels = (rng.random(n_items) < mean).astype(float)
        cls = labels > 0
    score = np.sqrt(2) * stats.norm.ppf(auroc) * cls + rng.normal(size=n_items)
    agreement = np.searchsorted(np.quantile(score, np.linspace(0, 1, 7)[1:-1]), score) / 5
    return surrogate_items(labels, agreement, rng, id_prefix="g")


def pm(row: dict, name: str, fmt: str) -> str:
    value, se = row.get(name), row.get(f"{name}_se")
    if value is None:
        return "-"
    return f"{value:{fmt}}" + ("" if se is None else f" ± {se:{fmt.lstrip('+')}}")


def product_results(items: pd.DataFrame, reps: int, seed: int, methods=None) -> dict:
    """`simulate` of every method (or ``methods``), plus FIXED: activegrade on the same pool with the project's
    budget fixed in advance (`core.stats.design.prepared_design(items, FIXED)`)."""
    result = simulate(items, BUDGETS, reps=reps, seed=seed, **({} if methods is None else {"methods": methods}))
    fixed = prepared_design(items, stopping.FIXED)
    result["methods"][FIXED] = simulate(items, BUDGETS, reps=reps, seed=seed, methods=["activegrade"], design=fixed)[
        "methods"
    ]["activegrade"]
    return result


def method_table(result: dict) -> str:
    lines = [
        "| method | budget | n | MSE ratio | bias | fixed-n coverage | width | anytime coverage | anytime width "
        "| saving realised | saving shown (withheld) | skips |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, rows in result["methods"].items():
        name = (
            f"**{method}**"
            if method.startswith("activegrade")
            else method + (" (reads every label)" if method in ORACLES else "")
        )
        for budget, r in rows.items():
            shown = (
                "-" if r["saving_withheld"] is None else f"{pm(r, 'saving_shown', '+.1%')} ({r['saving_withheld']:.0%})"
            )
            lines.append(
                f"| {name} | {budget} | {r['n']:.0f} | {pm(r, 'mse_ratio', '.3f')} | {pm(r, 'bias', '+.4f')} "
                f"| {pm(r, 'coverage', '.3f')} | {r['ci_width']:.3f} | {pm(r, 'coverage_anytime', '.3f')} "
                f"| {pm(r, 'ci_width_anytime', '.3f')} | {pm(r, 'budget_saving', '+.1%')} | {shown} | {pm(r, 'skips', '.1f')} |"
            )
    return "\n".join(lines)


def width_figures(design: Design, labels: np.ndarray, n0: int, reps: int, seed: int) -> tuple[list[tuple], float]:
    """Per n in (n0/2, n0, 2 n0): (n, median anytime width (running intersection at every grade), median fixed-n
    width, median estimate - anytime low, median anytime high - estimate) of the queue on ``design``; and the
    confidence sequence's process CPU per replication and grade."""
    ns = [n for n in (n0 // 2, n0, 2 * n0) if n <= design.N]
    orders = replication_orders(design.N, seed, reps)
    queue = replay_queue(design, labels, orders, max(ns))
    start = time.process_time()
    cs = sequence_batch(design, queue, labels[queue], n0, 1 - LEVEL)
    per_grade = (time.process_time() - start) / (reps * max(ns))
    rows = []
    for n in ns:
        batch = estimate_batch(design, queue[:, :n], labels[queue[:, :n]], DEFAULT_METHOD)
        low, high = batch.interval(LEVEL)
        a_low, a_high = cs.low_run[:, n - 1], cs.high_run[:, n - 1]
        rows.append(
            (
                n,
                float(np.median(a_high - a_low)),
                float(np.median(high - low)),
                float(np.median(batch.value - a_low)),
                float(np.median(a_high - batch.value)),
            )
        )
    return rows, per_grade


def width_ratios(items: pd.DataFrame, n0: int, reps: int, seed: int) -> tuple[str, float]:
    """Median anytime width / median fixed-n width of activegrade (anytime and budget fixed), as a markdown
    table; and the cost per grade (of the default design)."""
    lines = [
        "| allocation | n | anytime width (median) | fixed-n width (median) | ratio | anytime: estimate - low "
        "| high - estimate |",
        "|---|---|---|---|---|---|---|",
    ]
    labels = items["label"].to_numpy(dtype=float)
    costs = []
    for name, regime in (("anytime", stopping.ANYTIME), ("budget fixed", stopping.FIXED)):
        rows, per_grade = width_figures(prepared_design(items, regime), labels, n0, reps, seed)
        costs.append(per_grade)
        for n, anytime, fixed, below, above in rows:
            lines.append(
                f"| {name} | {n} | {anytime:.4f} | {fixed:.4f} | **{anytime / fixed:.2f}** | {below:.4f} | {above:.4f} |"
            )
    return "\n".join(lines), costs[0]


def generated_section(reps: int, seed: int) -> str:
    pools = [(500, auc, mean) for auc in (0.5, 0.7, 0.9) for mean in (0.01, 0.03, 0.5, 0.97, 0.99, None)]
    pools += [(5000, 0.7, mean) for mean in (0.01, 0.03, 0.5, 0.97, 0.99, None)]
    lines = [
        "| N | AUROC | grades | method | "
        + " | ".join(f"{b}: fixed-n cover / anytime cover / MSE ratio" for b in BUDGETS)
        + " |",
        "|---|---|---|---|" + "---|" * len(BUDGETS),
    ]
    worst: dict[str, float] = {}
    for n_items, auc, mean in pools:
        items = generated_pool(n_items, auc, mean, seed=seed)
        result = product_results(items, reps, seed, PRODUCT)
        kind = "skewed continuous (Beta(0.4, 4))" if mean is None else f"binary, mean {mean}"
        for method, rows in result["methods"].items():
            cells = []
            for r in rows.values():
                cells.append(f"{r['coverage']:.3f} / {r['coverage_anytime']:.3f} / {r['mse_ratio']:.2f}")
                if r["n"] >= 10:  # the goals start at n = max(10, 2H)
                    for name in ("coverage", "coverage_anytime"):
                        key = f"{method} {name}"
                        worst[key] = min(worst.get(key, 1.0), r[name] + 2 * r[f"{name}_se"])
            lines.append(
                f"| {n_items} | {auc} | {kind} (mu = {result['mu']:.3f}) | {method} | " + " | ".join(cells) + " |"
            )
    summary = ", ".join(f"{k}: {v:.3f}" for k, v in sorted(worst.items()))
    return "\n".join(lines) + f"\n\nLowest coverage + 2 s.e. over these pools and budgets with n >= 10: {summary}."


def savings_section(reps: int, seed: int) -> str:
    """Shown saving on a pool whose surrogate knows nothing (AUROC 0.5, mean 0.5) against the realised one."""
    items = generated_pool(1000, 0.5, 0.5, seed=seed)
    design = prepared_design(items)
    labels = items["label"].to_numpy(dtype=float)
    result = simulate(items, ["10", "20", "40", "80"], reps=reps, seed=seed, methods=["activegrade"])
    orders = replication_orders(design.N, seed, reps)
    queue = replay_queue(design, labels, orders, 80)
    lines = [
        "| n | realised saving | mean shown saving | withheld | shown > 15% |",
        "|---|---|---|---|---|",
    ]
    for budget, r in result["methods"]["activegrade"].items():
        shown = shown_saving(design, queue[:, : int(budget)], labels, DEFAULT_METHOD)
        over = np.nan_to_num(shown, nan=-1) > 0.15
        lines.append(
            f"| {budget} | {pm(r, 'budget_saving', '+.1%')} | {pm(r, 'saving_shown', '+.1%')} | "
            f"{r['saving_withheld']:.0%} | {over.mean():.1%} ± {over.std() / np.sqrt(reps):.1%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000, help="replications on the shared pools (default: 4000)")
    parser.add_argument("--generated-reps", type=int, default=1000, help="replications per generated pool")
    parser.add_argument("--timing-reps", type=int, default=1000, help="replications of the timed run (default: 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    args = parser.parse_args()
    data = Path(args.data)
    started = time.perf_counter()
    gsm8k = prepared(data, "gsm8k")
    start, cpu = time.perf_counter(), time.process_time()
    simulate(gsm8k, BUDGETS, reps=args.timing_reps, seed=args.seed)
    timing = f"{time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s process CPU"
    ratios, per_grade = width_ratios(gsm8k, 200, min(args.reps, 500), args.seed)
    sections = []
    for name in ("gsm8k", "truthfulqa"):
        items = gsm8k if name == "gsm8k" else prepared(data, name)
        result = product_results(items, args.reps, args.seed)
        sections += [
            f"## {name} (exact backend, a default project: strata by {DEFAULT_STRATIFY_BY})",
            "",
            f"N = {result['N']}, mu = {result['mu']:.4f}, {prepared_design(items).H} strata, anytime interval "
            f"tuned for n0 = {result['n0']}; {args.reps} replications.",
            "",
            method_table(result),
            "",
        ]
    text = f"""# Estimation benchmark

Written by `python benchmarks/estimation.py --reps {args.reps} --generated-reps {args.generated_reps}` on
{platform.machine()}, {os.cpu_count()} CPUs shared with other work (wall times are upper bounds); total
{(time.perf_counter() - started) / 60:.0f} min.

Every figure is a mean over replications ± its Monte Carlo standard error (`core.stats.simulate`). Methods:
{", ".join(f"`{m}`" for m in METHODS)} (see `core/stats/simulate.py`); **activegrade** is what the app does
with the project's own design (`core.stats.design.prepared_design`), allocating for anytime stopping (the
default); **{FIXED}** is the same on a project whose budget is fixed in advance (setting `budget_fixed`:
plain Neyman allocation, for the fixed-n interval read at that budget). `neyman_oracle` and `app_oracle` read
every label: ceilings, not methods. lure and active_inference keep their papers' Wald intervals and
have no anytime interval. "fixed-n coverage" is that of `core.stats.estimate`'s interval for a budget fixed in
advance; "anytime coverage" is the share of replications whose confidence sequence (`core.stats.confseq`)
covered mu at every n up to the budget (goal: 0.95 or more); "saving shown" is what the dashboard would
show at that budget, over the replications where it is shown, "(withheld)" the share where it is not.

## Cost

- Simulator, the issue's workload ({args.timing_reps:,} replications x 4 budgets x {len(METHODS)} methods on gsm8k,
  anytime intervals included): {timing}.
- Confidence sequence, end points at every grade: {1000 * per_grade:.3f} ms process CPU per replication and
  grade on gsm8k (5 strata, grid {65} per stratum); the simulator computes end points at about 12 grade
  counts per decade and checks coverage at every grade by the wealth at the true stratum means.

## Anytime width against fixed-n width: gsm8k, activegrade, n0 = 200

Goal: at most 1.8 at n0 (for the default allocation, the one made for anytime stopping; a project whose budget is
fixed in advance reads the fixed-n interval). Medians over {min(args.reps, 500)} replications; the last two columns
split the anytime interval's width around the estimate.

{ratios}

""" + "\n".join(sections)
    text += f"""
## Generated pools ({args.generated_reps} replications each)

{generated_section(args.generated_reps, args.seed)}

## Honest savings: a surrogate with no signal (N = 1000, AUROC 0.5, mean 0.5; {args.reps} replications)

Goal: from n = 20 on, mean shown saving within 5 points of the realised one, and at most 10% of
replications showing more than 15% saved.

{savings_section(args.reps, args.seed)}
"""
    (HERE / "estimation.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
