"""One grader who skips: where the stop comes, and whether the dashboard's forecast holds it.

Writes benchmarks/one_grader_skips.md. A project of one grader has nobody to take the items they skip (a
skipped item never goes back to its skipper), so the stop comes once fresh grades outweigh the skipped items'
worst case (core.stats.stopping.run_looks, given the skips met, as the simulator reads a second grader's).
Each replication grades a pool of benchmarks.pools in the queue's order, the one grader skipping each item
shown with a probability that may depend on its grade (core.stats.simulate.skip_mask); the reading
(core.services.reading.read_project, as the dashboard makes it) is taken at 30%, 60% and 90% of that
replication's stop, with the skips standing then, and its forecast's 80% range is scored against the stop: the
range now (*range*), which reaches the stop by fresh grades alone, against the range read as if no item were
skipped (*ignoring skips*), which is what the forecast gave before the skips held the rule. The manager's
expected score is the pool's mean times 1.25, as in benchmarks/stopping.py.

    python benchmarks/one_grader_skips.py [--reps 100]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from benchmarks.pools import make_pool
from core.services.reading import read_project
from core.stats.design import prepared_design
from core.stats.estimate import estimate
from core.stats.simulate import labels_of, replay_queue, replication_orders, skip_mask, skipped_last, skips_met
from core.stats.skips import skip_bound
from core.stats.stopping import run_looks

HERE = Path(__file__).resolve().parent
TARGET = 0.05
POOLS = (("binary", 1500, 0.3, 0.8), ("binary", 2000, 0.5, 0.5), ("binary", 2000, 0.1, 0.9))
"""(kind, N, mean, surrogate AUROC)."""
SKIPS = ((0.04, 0.04), (0.1, 0.0))
"""(skip_wrong, skip_right): 4% of the items at random, and 10% of the wrong ones."""
WHEN = (0.3, 0.6, 0.9)
"""The shares of each replication's stop at which the reading is taken."""


def _skip_steps(design, order: np.ndarray, lost: np.ndarray, graded: np.ndarray) -> dict[int, int]:
    """The skipped items the queue has met after ``graded`` (positions, in grading order) and not graded, each
    with the grades given before it was met, as a project records its skips (Store.skip_steps): in each stratum,
    an item the grader skips is met once an item after it in the replication's ``order`` is graded
    (core.stats.simulate.skips_met's rule)."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    done = set(graded.tolist())
    steps: dict[int, int] = {}
    for h in range(design.H):
        at = np.flatnonzero(design.stratum[graded] == h)  # grade indices in stratum h
        if not at.size:
            continue
        furthest = np.maximum.accumulate(rank[graded[at]])
        skipped = np.flatnonzero(lost & (design.stratum == h) & (rank < furthest[-1]))
        first = np.searchsorted(furthest, rank[skipped], side="right")  # the first grade of h past each skip
        steps |= {int(p): int(before) for p, before in zip(skipped, at[first], strict=True) if p not in done}
    return steps


def pool_rows(kind: str, size: int, mean: float, auroc: float, reps: int, seed: int) -> list[dict]:
    """One row per skip pattern of SKIPS on one pool: the stops, and the forecast's range scored at WHEN."""
    items = make_pool(size, mean, kind=kind, auroc=auroc, seed=seed)
    labels = labels_of(items)
    design = prepared_design(items)
    settings = {"target_half_width": TARGET, "regime": "looks", "expected_score": mean * 1.25}
    original = replication_orders(size, seed, reps)
    plain = replay_queue(design, labels, original, size)
    unskipped = float(np.median(run_looks(design, plain, labels[plain], TARGET).n))  # the same grader, no skip
    rows = []
    for wrong, right in SKIPS:
        lost = skip_mask(labels, wrong, right, reps, seed)  # one grader: what they skip stays skipped
        kept = skipped_last(original, lost)
        positions = replay_queue(design, labels, kept, size)
        stops = run_looks(
            design, positions, labels[positions], TARGET, skipped=skips_met(design, original, lost, positions)
        )
        scored = {when: {"range": [], "ignoring": [], "spread": [], "fresh": [], "fresh_spread": []} for when in WHEN}
        never = 0
        for r in np.flatnonzero(stops.stopped):
            stop = int(stops.n[r])
            for when in WHEN:
                k = int(when * stop)
                graded = positions[r, :k]
                grades = labels[graded]
                e = estimate(design, graded, grades)
                steps = _skip_steps(design, original[r], lost[r], graded)
                skips = skip_bound(design, graded, grades, list(steps))
                by_position = dict(zip(graded.tolist(), grades.tolist(), strict=True))
                reading = read_project(design, settings, by_position, e, skips=skips, skip_steps=steps)
                f, fresh = reading.forecast, (reading.fresh_low or 0, reading.fresh_high or 0)
                plain = read_project(design, settings, by_position, e).forecast
                scored[when]["range"].append(f.low <= stop <= f.high)
                scored[when]["ignoring"].append(plain.low <= stop <= plain.high)
                scored[when]["spread"].append(f.high / max(f.low, 1))
                scored[when]["fresh"].append(fresh[0] <= stop <= fresh[1])
                scored[when]["fresh_spread"].append(fresh[1] / max(fresh[0], 1))
        never = int((~stops.stopped).sum())
        rows.append(
            {
                "pool": f"{kind}, N {size}, mean {mean}, AUROC {auroc}",
                "skips": f"{wrong:.0%} of wrong, {right:.0%} of right items",
                "stopped": float(stops.stopped.mean()),
                "never": never,
                "stop": float(np.median(stops.n[stops.stopped])) if stops.stopped.any() else float("nan"),
                "unskipped": unskipped,
                "skipped_at_stop": float(
                    np.median(
                        [
                            len(_skip_steps(design, original[r], lost[r], positions[r, : stops.n[r]]))
                            for r in np.flatnonzero(stops.stopped)
                        ]
                    )
                )
                if stops.stopped.any()
                else float("nan"),
                "scored": {
                    when: {
                        "read": len(s["range"]),
                        "range": float(np.mean(s["range"])) if s["range"] else float("nan"),
                        "range_se": float(np.std(s["range"]) / np.sqrt(max(len(s["range"]), 1))),
                        "ignoring": float(np.mean(s["ignoring"])) if s["ignoring"] else float("nan"),
                        "spread": float(np.median(s["spread"])) if s["spread"] else float("nan"),
                        "fresh": float(np.mean(s["fresh"])) if s["fresh"] else float("nan"),
                        "fresh_spread": float(np.median(s["fresh_spread"])) if s["fresh_spread"] else float("nan"),
                    }
                    for when, s in scored.items()
                },
            }
        )
        print(f"{rows[-1]['pool']}, {rows[-1]['skips']}: done", flush=True)
    return rows


def markdown(rows: list[dict], reps: int, seconds: float) -> str:
    lines = [
        "# One grader who skips",
        "",
        f"`python benchmarks/one_grader_skips.py --reps {reps}`; {reps} replications per pool and skip pattern, "
        f"target ±{TARGET}, {platform.machine()}, {seconds / 60:.0f} min. Written by the script: do not edit by "
        "hand.",
        "",
        "One grader, whose skipped items nobody grades: *stopped*, the share of replications whose rule said done "
        "before the pool ran out; *stop*, their median grades at the stop (*no skips*: the same replications "
        "without a skip), and the skipped items standing then; at "
        "30%, 60% and 90% of each replication's stop, the share of readings whose forecast range held the stop "
        "(*range*, ± its Monte Carlo s.e., with its median high / low: from the skipped items graded by another "
        "grader to the stop by fresh grades alone, core.services.reading), the same for the fresh grades' own "
        "range (*fresh alone*, fresh_low to fresh_high) and for the range read as if no item were skipped "
        "(*ignoring skips*, what the forecast gave before).",
        "",
        "| pool | skips | stopped | stop (median) | no skips | skipped at the stop | when | read | range "
        "| high / low | fresh alone | high / low | ignoring skips |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for when, s in r["scored"].items():
            lines.append(
                f"| {r['pool']} | {r['skips']} | {r['stopped']:.2f} | {r['stop']:.0f} | {r['unskipped']:.0f} "
                f"| {r['skipped_at_stop']:.0f} "
                f"| {when:.0%} of the stop | {s['read']} | {s['range']:.2f} ± {s['range_se']:.2f} "
                f"| {s['spread']:.2f} | {s['fresh']:.2f} | {s['fresh_spread']:.2f} | {s['ignoring']:.2f} |"
            )
    held = [s["range"] for r in rows for s in r["scored"].values() if s["read"]]
    ignoring = [s["ignoring"] for r in rows for s in r["scored"].values() if s["read"]]
    fresh = [s["fresh"] for r in rows for s in r["scored"].values() if s["read"]]
    cost = [r["stop"] / r["unskipped"] for r in rows]
    lines += [
        "",
        f"- The skips cost {min(cost):.1f} to {max(cost):.1f} times the grades to the stop of the same "
        "replications without them.",
        f"- The range held the one grader's stop in {min(held):.2f} to {max(held):.2f} of the readings (pool, "
        f"pattern and time apart); the fresh grades' own range {min(fresh):.2f} to {max(fresh):.2f}; read as if no "
        f"item were skipped, {min(ignoring):.2f} to {max(ignoring):.2f}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    for i, (kind, size, mean, auroc) in enumerate(POOLS):
        rows += pool_rows(kind, size, mean, auroc, args.reps, args.seed + 700 + i)
    (HERE / "one_grader_skips.md").write_text(markdown(rows, args.reps, time.perf_counter() - start))
    print((HERE / "one_grader_skips.md").read_text())


if __name__ == "__main__":
    main()
