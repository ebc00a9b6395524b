"""Rubrics: what allocating for every criterion together costs each criterion, and the coverage of its interval.

Pools of our own making (core.stats.simulate_rubric.rubric_pool): a rubric of three criteria, binary
correctness (mean 0.7), a 5-level Likert helpfulness and a 3-level safety (mostly safe), whose grades'
mean pairwise correlation is 0.2, 0.5 or 0.8; the surrogate (its 5 strata) predicts correctness only.
Per criterion and budget, under the queue allocating for all criteria together (core.rubric.ALL):
coverage of the nominal 95% fixed-n interval, and the criterion's MSE over its MSE when the queue allocates
for it alone, and over uniform sampling's; beside them, the MSE when the queue allocates for the primary
criterion (correctness) alone (core.rubric.PRIMARY).

Goals (issue 31): coverage + 2 s.e. >= 0.935 for every criterion; MSE over allocating for the criterion
alone at most 1.10 where the criteria correlate at 0.5 or more (the 0.2 pool shows the limit).

    python benchmarks/rubric.py [--reps 4000]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from core.stats.simulate_rubric import rubric_pool, rubric_runs

HERE = Path(__file__).resolve().parent
POOLS = ((4000, 0.2), (4000, 0.5), (4000, 0.8), (2000, 0.5))
"""(N, the grades' mean pairwise correlation)."""
BUDGETS = (100, 400)
GOAL_COVERAGE, GOAL_RATIO, GOAL_FROM = 0.935, 1.10, 0.5


def ratio_verdict(ratio: float, se: float, correlation: float) -> str:
    """The MSE-ratio goal on a pool whose criteria correlate at ``correlation``: met when ratio + 2 s.e. is
    at most GOAL_RATIO, missed when ratio - 2 s.e. is above it, else undecided; none below GOAL_FROM."""
    if correlation < GOAL_FROM:
        return "(limit)"
    return "met" if ratio + 2 * se <= GOAL_RATIO else "missed" if ratio - 2 * se > GOAL_RATIO else "undecided"


def cell(figures: dict[str, float], key: str, digits: int = 3) -> str:
    return f"{figures[key]:.{digits}f} ± {figures[key + '_se']:.{digits}f}"


def rows(n_items: int, correlation: float, reps: int, seed: int) -> list[str]:
    pool = rubric_pool(n_items, correlation, seed=seed)
    pairs = pool.correlation
    realised = f"{pairs[0, 1]:.2f} / {pairs[0, 2]:.2f} / {pairs[1, 2]:.2f}"
    lines = []
    for name, by_budget in rubric_runs(pool, BUDGETS, reps=reps, seed=seed).items():
        k = pool.names.index(name)
        mu = pool.labels[k].mean()
        for n, f in by_budget.items():
            primary = cell(f, "primary_vs_alone") if k else "(it is alone)"
            coverage = "met" if f["coverage"] + 2 * f["coverage_se"] >= GOAL_COVERAGE else "missed"
            lines.append(
                f"| {n_items} | {correlation} ({realised}) | {n} | {name} | {mu:.3f} | {cell(f, 'coverage')} | "
                f"{coverage} | {cell(f, 'all_vs_alone')} | {ratio_verdict(f['all_vs_alone'], f['all_vs_alone_se'], correlation)} | "
                f"{primary} | {cell(f, 'all_vs_uniform')} | {cell(f, 'alone_vs_uniform')} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    table = [line for n_items, correlation in POOLS for line in rows(n_items, correlation, args.reps, args.seed)]
    text = (
        f"""# Rubrics: allocating for every criterion together

`python benchmarks/rubric.py --reps {args.reps} --seed {args.seed}`; {args.reps} replications per pool, one
process on {platform.machine()}, {os.cpu_count()} CPUs shared with other work; {(time.perf_counter() - started) / 60:.1f} min.
Written by the script: do not edit by hand.

Pools (`core.stats.simulate_rubric.rubric_pool`): N items graded on three criteria, *correct* (binary, mean
0.7), *helpful* (Likert, 5 levels on [0, 1]) and *safe* (3 levels 0, 0.5, 1, mostly 1), cut from a Gaussian
copula whose latent correlation is set so that the grades' mean pairwise correlation is the one named;
the realised correlations (correct-helpful / correct-safe / helpful-safe) are in brackets. The surrogate
predicts correctness only (latent correlation 0.7) and gives the design its 5 strata
(`core.stats.design.prepared_design`, the default regime). Every replication grades the pool in its own
random order through the product's queue step (`core.stats.queue.queue_stratum`, replayed by
`core.stats.simulate_rubric.replay_rubric_queue`) and reads each criterion with the product's estimator
(`core.stats.estimate.estimate_batch`).

- *coverage*: of the criterion's true mean by the nominal 95% fixed-n interval, the queue allocating for all
  criteria (± Monte Carlo s.e.); goal: coverage + 2 s.e. >= {GOAL_COVERAGE}.
- *all / alone*: the criterion's MSE when the queue allocates for all criteria (the compromise of
  `core.stats.allocation.compromise_spreads`) over its MSE when the queue allocates for it alone, paired
  replications (same orders), delta-method s.e.; goal: at most {GOAL_RATIO} where the criteria correlate at
  {GOAL_FROM} or more (*met*: ratio + 2 s.e. <= {GOAL_RATIO}).
- *primary / alone*: the same when the queue allocates for *correct* alone (`allocate_for = "primary"`).
- *all / uniform*, *alone / uniform*: MSE over uniform sampling's exact MSE (1 - n/N) S^2 / n.

| N | correlation | n | criterion | mu | coverage | goal | all / alone | goal | primary / alone | all / uniform | alone / uniform |
|---|---|---|---|---|---|---|---|---|---|---|---|
"""
        + "\n".join(table)
        + "\n"
    )
    (HERE / "rubric.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
