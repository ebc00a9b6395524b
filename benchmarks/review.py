"""What review does to the estimate when graders err: bias against the true mean and coverage.

Graders flip each grade independently with probability 0.1; 20% of the pool is double graded at random;
every disagreement is settled by a reviewer who is right (core.stats.simulate_review). Three estimators:
today's mean of two grades, the final grades (reviewed where a review exists, core.stats.rater_agreement),
and the validated estimate (core.stats.validation: first grades corrected on the random double-graded,
reviewed sample). Goal (issue 31): against the mean of two, the validated estimate's bias at least halved
and its interval covering the true mean at 0.935 or more.

Pools: generated ones (benchmarks/pools.py; the goal's: binary, mean 0.1) and the shared gsm8k and
truthfulqa prepared as default projects (exact backend), their labels as the truth.

Run: python benchmarks/review.py [--reps 1000]; writes benchmarks/review.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from pools import make_pool  # benchmarks/pools.py, beside this script

from core.inputs.io import load_inputs
from core.stats.allocation import design_from_items
from core.stats.simulate import labels_of
from core.stats.simulate_review import ESTIMATORS, figures, review_runs
from core.stats.strata import DEFAULT_STRATIFY_BY
from core.surrogate.prepare import prepare_items

HERE = Path(__file__).resolve().parent
FLIP, OVERLAP = 0.1, 0.2
BUDGETS = (200, 400)
GENERATED = [  # kind, mean, N, AUROC
    ("binary", 0.1, 2000, 0.7),
    ("binary", 0.1, 2000, 0.9),
    ("binary", 0.1, 10000, 0.7),
    ("binary", 0.3, 2000, 0.7),
]
SHARED = ("gsm8k", "truthfulqa")


def shared_pool(data: Path, name: str):
    """A shared pool prepared as a default project (exact backend), with its samples file where it has one."""
    folder = data / name
    samples = folder / "samples.jsonl"
    inputs = load_inputs(str(folder / "pool.jsonl"), str(samples) if samples.exists() else None)
    return prepare_items(inputs, stratify_by=DEFAULT_STRATIFY_BY)


def rows(name: str, items, reps: int, seed: int) -> list[str]:
    design, labels = design_from_items(items), labels_of(items)
    lines = []
    for n in BUDGETS:
        if n >= design.N:
            continue
        result = figures(review_runs(design, labels, n, reps=reps, flip=FLIP, overlap=OVERLAP, seed=seed))
        base = abs(result["mean of two"]["bias"])
        for estimator in ESTIMATORS:
            f = result[estimator]
            ratio = abs(f["bias"]) / base if base else float("nan")
            lines.append(
                f"| {name} | {design.N} | {labels.mean():.3f} | {n} | {estimator} | {f['bias']:+.4f} | "
                f"{f['bias_share']:+.1%} ± {f['bias_share_se']:.1%} | {ratio:.2f} | "
                f"{f['coverage']:.3f} ± {f['coverage_se']:.3f} | {f['width']:.3f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data"))
    args = parser.parse_args()
    started = time.perf_counter()
    table = []
    for kind, mean, n_items, auroc in GENERATED:
        items = make_pool(n_items, mean, kind=kind, auroc=auroc, seed=args.seed)
        table += rows(f"{kind} mean {mean}, AUROC {auroc}", items, args.reps, args.seed)
    for name in SHARED:
        table += rows(name, shared_pool(Path(args.data), name), args.reps, args.seed)
    text = (
        f"""# Review under grader error

Written by `python benchmarks/review.py --reps {args.reps}` (one process) on {platform.machine()},
{os.cpu_count()} CPUs shared with other work; {(time.perf_counter() - started) / 60:.1f} min.

Each grade is wrong with probability {FLIP} (binary grades flipped), independently; {OVERLAP:.0%} of the pool
is double graded at random; every double-graded item whose grades differ is settled by a reviewer who gives
its true grade (`core.stats.simulate_review`). The sample is the design's planned allocation in each
replication's random order. Per pool, budget n and estimator: bias against the true mean mu (and as a
share of mu ± its Monte Carlo s.e.), |bias| / |bias of the mean of two|, coverage of mu by the nominal 95%
interval ± its Monte Carlo s.e., and the interval's mean width. {args.reps} replications each.

- **mean of two**: today's rule before review (the mean of an item's grades), stratified estimator.
- **reviewed where exists**: the final grades (`core.stats.rater_agreement.final_grades`), same estimator.
- **validated**: `core.stats.validation`, the first grades' design estimate plus the design estimate of
  (final grade - first grade) on the random double-graded sample, t interval on the validation size.

Goal (issue 31, binary pools at mean 0.1): the validated estimate's bias at most half the mean of two's,
and coverage of mu at least 0.935.

| pool | N | mu | n | estimator | bias | bias / mu | vs mean of two | coverage of mu | width |
|---|---|---|---|---|---|---|---|---|---|
"""
        + "\n".join(table)
        + "\n"
    )
    (HERE / "review.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
