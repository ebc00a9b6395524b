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
import itertools
import os
import platform
import time
from pathlib import Path

import numpy as np

from core.stats.allocation import compromise_spreads, relative_losses
from core.stats.design import prepared_design
from core.stats.simulate_rubric import RubricPool, rubric_pool, rubric_runs

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


def realised(pool: RubricPool) -> str:
    """The asked correlation and the realised pairwise ones."""
    pairs = pool.correlation
    return f"{pairs[0, 1]:.2f} / {pairs[0, 2]:.2f} / {pairs[1, 2]:.2f}"


def neyman_share(weights: np.ndarray, spreads: np.ndarray) -> np.ndarray:
    """n_h / n of Neyman's allocation for ``spreads`` (..., H)."""
    return weights * spreads / np.sum(weights * spreads, axis=-1, keepdims=True)


def minimax_share(weights: np.ndarray, spreads: np.ndarray, steps: int = 50) -> np.ndarray:
    """The allocation n_h proportional to W_h sqrt(sum_k w_k S_hk^2) whose largest relative loss is least, over
    multipliers w on a grid of the simplex (step 1/steps): Bethel's (1989) allocations for per-criterion
    variance bounds, the bounds chosen to equalise the criteria's relative losses; a comparison only."""
    grid = [c for c in itertools.product(range(steps + 1), repeat=len(spreads) - 1) if sum(c) <= steps]
    w = np.array([(*c, steps - sum(c)) for c in grid]) / steps
    shares = neyman_share(weights, np.sqrt(w @ spreads**2))
    return shares[np.argmin(relative_losses(weights, spreads, shares).max(axis=-1))]


def oracle_row(n_items: int, correlation: float, pool: RubricPool) -> str:
    """Each criterion's relative loss V_k / V_k^opt with the true spreads, under four allocations."""
    design = prepared_design(pool.items)
    spreads = np.array([[y[design.stratum == h].std(ddof=1) for h in range(design.H)] for y in pool.labels])
    weights = design.weights
    shares = {
        "all (compromise)": neyman_share(weights, compromise_spreads(weights, spreads)),
        "minimax": minimax_share(weights, spreads),
        "primary alone": neyman_share(weights, spreads[0]),
        "proportional": weights,
    }
    cells = " | ".join(
        " / ".join(f"{v:.3f}" for v in relative_losses(weights, spreads, share)) for share in shares.values()
    )
    return f"| {n_items} | {correlation} ({realised(pool)}) | {cells} |"


def rows(n_items: int, correlation: float, pool: RubricPool, reps: int, seed: int) -> list[str]:
    lines = []
    for name, by_budget in rubric_runs(pool, BUDGETS, reps=reps, seed=seed).items():
        k = pool.names.index(name)
        mu = pool.labels[k].mean()
        for n, f in by_budget.items():
            primary = cell(f, "primary_vs_alone") if k else "(it is alone)"
            coverage = "met" if f["coverage"] + 2 * f["coverage_se"] >= GOAL_COVERAGE else "missed"
            lines.append(
                f"| {n_items} | {correlation} ({realised(pool)}) | {n} | {name} | {mu:.3f} | {cell(f, 'coverage')} | "
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
    pools = [
        (n_items, correlation, rubric_pool(n_items, correlation, seed=args.seed)) for n_items, correlation in POOLS
    ]
    oracle = [oracle_row(*p) for p in pools]
    table = [line for p in pools for line in rows(*p, args.reps, args.seed)]
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
        + """

**With the true spreads** (no grades, no sampling): each criterion's relative loss V_k / V_k^opt
(`core.stats.allocation.relative_losses`; correct / helpful / safe) under the compromise the queue uses, under
the minimax choice of multipliers (Bethel's allocation whose largest relative loss is least, best of a grid
of step 0.02), under Neyman's allocation for *correct* alone, and under proportional allocation. The
compromise minimises the sum of the three; minimax, the largest.

| N | correlation | all (compromise) | minimax | primary alone | proportional |
|---|---|---|---|---|---|
"""
        + "\n".join(oracle)
        + "\n"
    )
    (HERE / "rubric.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
