"""Grades to stop under the default regime against plain random sampling, coverage at the stop, the forecast.

Writes benchmarks/stopping.md. Pools: the shared ones (../shared/data, skipped
when absent) prepared as default projects, and pools of our own making
(benchmarks/pools.make_pool: N 500 to 5,000, means 0.02, 0.1 and 0.5,
surrogate AUROC 0.5, 0.7 and 0.9, binary and skewed continuous grades, and those
rounded to a Likert scale of five values, the app's own finer scale, and a few
whose surrogate runs the other way, AUROC 0.1), each at target half-widths 0.05 and 0.03. The manager's expected score, for the
setup forecast, is the pool's mean times 1.25 (a manager a quarter off); the
surrogate's own forecast is given beside it.

    python benchmarks/stopping.py [--reps 1000] [--regime looks]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

from benchmarks.estimation import prepared
from benchmarks.pools import make_pool
from core.stats.simulate import labels_of, simulate
from core.stats.simulate_stopping import LATE_SPREAD
from core.stats.stopping import DEFAULT_REGIME, REGIMES

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"
TARGETS = (0.05, 0.03)
SIZES = (500, 2000, 5000)
MEANS = (0.02, 0.1, 0.5)
AUROCS = (0.5, 0.7, 0.9)
KINDS = ("binary", "skewed")
SETUP_SPREAD = 3.0
"""The goal for the setup's 80% range: high / low at most this where the manager gave a score."""
GOAL_RATIO = {0.5: 1.2, 0.7: 1.0, 0.9: 0.8}
"""The goal for the median grades at the stop over uniform's fixed-n size (Wilson's), by surrogate AUROC (an
anti-correlated surrogate's by 1 - AUROC: it tells the strata apart as well, the other way round)."""
ANTI = (("binary", 2000, 0.1), ("skewed", 5000, 0.5), ("likert", 500, 0.5))
"""(kind, N, mean) of the pools whose surrogate is anti-correlated with the grades (AUROC 0.1): its agreement is
high where the target is wrong, as a surrogate that shares the target's blind spots the other way can be."""
BUDGETS = ("10", "20", "0.05", "0.1", "0.2")
"""Fixed budgets at which the MSE ratio to uniform and the fixed-n coverage are read (pools without signal and
shared gsm8k)."""


def pools() -> list[tuple[str, float | None, object]]:
    """(name, AUROC or None, items) for every benchmark pool."""
    out = []
    for name in ("gsm8k", "truthfulqa", "alpacaeval-judge"):
        if (SHARED / name / "pool.jsonl").exists():
            out.append((f"shared {name}", None, prepared(SHARED, name)))
    for i, (mean, auroc, kind) in enumerate(itertools.product(MEANS, AUROCS, KINDS)):
        size = SIZES[i % len(SIZES)]
        items = make_pool(size, mean, kind=kind, auroc=auroc, seed=100 + i)
        out.append((f"{kind}, N {size}, mean {mean}, AUROC {auroc}", auroc, items))
    for i, (mean, auroc) in enumerate(itertools.product(MEANS, AUROCS)):  # the app's own finer scale
        size = SIZES[(i + 1) % len(SIZES)]
        items = make_pool(size, mean, kind="likert", auroc=auroc, seed=200 + i)
        out.append((f"likert, N {size}, mean {mean}, AUROC {auroc}", auroc, items))
    for i, (kind, size, mean) in enumerate(ANTI):
        items = make_pool(size, mean, kind=kind, auroc=0.1, seed=400 + i)
        out.append((f"{kind}, N {size}, mean {mean}, AUROC 0.1", 0.1, items))
    return out


def _strength(auroc: float) -> float:
    """How well a surrogate of this AUROC tells items apart, whichever way it runs."""
    return max(auroc, 1.0 - auroc)


def fixed_budget_rows(
    reps: int, seed: int, budgets: tuple[str, ...], methods: list[str], keep: Callable[[str, float | None], bool]
) -> list[dict]:
    """The project's design (``activegrade``) simulated at ``budgets`` beside ``methods`` on every pool that
    ``keep(name, auroc)`` takes: one row per pool and budget, with the pool's mean ``mu``."""
    rows = []
    for name, auroc, items in pools():
        if not keep(name, auroc):
            continue
        result = simulate(items, list(budgets), reps=reps, seed=seed, methods=methods)
        mu = float(labels_of(items).mean())
        for budget, m in result["methods"]["activegrade"].items():
            others = {
                f"{method}_{key}": v for method in methods for key, v in result["methods"][method][budget].items()
            }
            rows.append({"pool": name, "budget": budget, "mu": mu, **others, **m})
        print(f"{name}: budgets {', '.join(budgets)} done", flush=True)
    return rows


def budget_rows(reps: int, seed: int) -> list[dict]:
    """MSE ratio to uniform and fixed-n coverage of the project's design at BUDGETS, per pool without signal
    (and shared gsm8k)."""
    return fixed_budget_rows(
        reps, seed, BUDGETS, ["uniform", "activegrade"], lambda name, auroc: auroc == 0.5 or name == "shared gsm8k"
    )


BIAS_BUDGETS = ("100", "400")
"""Budgets at which the bias of adaptive allocation is read on the pools with signal (the goal: n <= 400)."""


def bias_rows(reps: int, seed: int) -> list[dict]:
    """The estimate's bias at BIAS_BUDGETS on the synthetic pools of rare means (0.02, 0.1) whose surrogate
    carries signal, where the queue's allocation follows the grades and a stratum's few positives sway it."""
    return fixed_budget_rows(
        reps,
        seed,
        BIAS_BUDGETS,
        ["proportional", "activegrade"],
        lambda name, auroc: auroc not in (None, 0.5) and " mean 0.5," not in name,
    )


def bias_markdown(rows: list[dict]) -> str:
    """The bias table (`bias_rows`), with the goal read from it."""
    lines = [
        "",
        "## Bias under adaptive allocation",
        "",
        "The estimate's mean error at fixed budgets on the pools of rare means whose surrogate carries signal "
        "(the queue's allocation follows the grades there), ± its Monte Carlo s.e., as a share of the pool's mean, "
        "and over the estimate's own standard error (its spread over the replications); beside it the MSE over "
        "uniform's of the design and of proportional allocation, which reads no grade and so has no such bias. "
        "Goal: within 1% of the mean or 2 s.e., at n <= 400.",
        "",
        "| pool | budget | n | bias | bias / mean | bias / estimate's s.e. | MSE ratio | MSE ratio, proportional |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['pool']} | {r['budget']} | {r['n']:.0f} | {r['bias']:+.5f} ± {r['bias_se']:.5f} "
            f"| {r['bias'] / r['mu']:+.1%} | {_bias_ratio(r):+.2f} | {r['mse_ratio']:.3f} ± {r['mse_ratio_se']:.3f} "
            f"| {r['proportional_mse_ratio']:.3f} ± {r['proportional_mse_ratio_se']:.3f} |"
        )
    met = sum(abs(r["bias"]) <= max(0.01 * r["mu"], 2 * r["bias_se"]) for r in rows)
    worst = max(rows, key=lambda r: abs(r["bias"]) / r["mu"])
    ratio = max(abs(_bias_ratio(r)) for r in rows)
    z = stats.norm.ppf(0.975)
    lines += [
        "",
        f"- Bias within 1% of the mean or 2 s.e.: met on {met} of {len(rows)} (pool, budget) pairs; largest "
        f"{worst['bias'] / worst['mu']:+.1%} of the mean ({worst['pool']}, n {worst['n']:.0f}).",
        f"- Largest bias over the estimate's s.e.: {ratio:.2f}; a normal 95% interval off by that much covers "
        f"{stats.norm.cdf(z - ratio) - stats.norm.cdf(-z - ratio):.4f} (Cochran 1977, section 1.8). The MSE, bias "
        f"included, is at most proportional allocation's on {sum(r['mse_ratio'] <= r['proportional_mse_ratio'] for r in rows)} "
        f"of {len(rows)} pairs.",
    ]
    return "\n".join(lines) + "\n"


def _saving_summary(rows: list[dict]) -> str:
    """How the saving shown at the stop against a uniform fixed-n sample (the mean over the replications) reads
    against the realised one (the median stop against uniform's Wald size): same side of 0 (or within 10
    points), and above it by more than 15 points, i.e. a saving claimed that was not had."""
    pairs = [(r["activegrade"]["saving_shown_at_stop"], r["activegrade"]["saving_realised"]) for r in rows]
    agree = sum((shown >= 0) == (real >= 0) or abs(shown - real) <= 0.10 for shown, real in pairs)
    above = sum(shown > real + 0.15 for shown, real in pairs)
    return (
        f"The saving shown at the stop against uniform's fixed-n size, beside the realised one: on the same side "
        f"of 0 (or within 10 points) on {agree} of {len(pairs)} pairs; above it by more than 15 points on {above}."
    )


def _bias_ratio(row: dict) -> float:
    """The bias over the estimate's standard error, sqrt(MSE - bias^2)."""
    return row["bias"] / np.sqrt(max(row["mse"] - row["bias"] ** 2, 1e-300))


SKIP_WRONG = 0.3
"""Grade-dependent skips: the share of wrong items each grader passes over (the second one independently)."""
SKIP_POOLS = ("shared gsm8k", "binary, N 2000, mean 0.5, AUROC 0.9", "skewed, N 500, mean 0.5, AUROC 0.7")


def skip_rows(reps: int, seed: int) -> list[dict]:
    """Stops with SKIP_WRONG of wrong items skipped by each grader, on SKIP_POOLS at both targets."""
    rows = []
    for (name, _, items), target in itertools.product(pools(), TARGETS):
        if name not in SKIP_POOLS:
            continue
        result = simulate(
            items, ["10"], reps=reps, seed=seed, methods=["uniform"], target_half_width=target, skip_wrong=SKIP_WRONG
        )
        rows.append({"pool": name, "target": target, **result["stopping"]})
        print(f"{name} target {target} with skips: done", flush=True)
    return rows


def skip_markdown(rows: list[dict]) -> str:
    lines = [
        "",
        f"## Grade-dependent skips ({SKIP_WRONG:.0%} of wrong items, each grader)",
        "",
        "A skipped item goes to a second grader, who skips independently at the same rates; what both skip stays "
        "skipped and widens the interval the stopping rule reads by its worst case (core.stats.skips."
        "skip_widening). *stopped*: the share of replications that stopped before the replay's end (the rest "
        "are read at the end, with the last look's widened interval). Goal: coverage + 2 s.e. >= 0.935.",
        "",
        "| pool | target | grades at stop (median) | stopped | coverage of the rule's interval | bias |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        a = r["activegrade"]
        lines.append(
            f"| {r['pool']} | {r['target']} | {a['stop_n_median']:.0f} | {a['stopped']:.2f} "
            f"| {a['stop_coverage']:.3f} ± {a['stop_coverage_se']:.3f} | {a['stop_bias']:+.4f} |"
        )
    ok = sum(r["activegrade"]["stop_coverage"] + 2 * r["activegrade"]["stop_coverage_se"] >= 0.935 for r in rows)
    lines += ["", f"- Coverage + 2 s.e. >= 0.935 with skips: met on {ok} of {len(rows)}."]
    return "\n".join(lines) + "\n"


def stopping_mode(
    items, target: float, reps: int, seed: int, regime: str = DEFAULT_REGIME, n0: int | None = None
) -> dict:
    """The simulator's stopping mode (core.stats.simulate_stopping) for the design and uniform sampling at
    ``target``, with the manager's expected score a quarter above the pool's mean (``n0``: the anytime
    sequence's planned budget; None: tuned as a project tunes it): its ``stopping`` object."""
    mean = float(items["label"].mean())
    expected = min(0.99, 1.25 * mean)
    return simulate(
        items,
        ["10"],
        reps=reps,
        seed=seed,
        methods=["uniform"],
        regime=regime,
        target_half_width=target,
        expected=expected,
        planned=n0,
    )["stopping"]


def run(reps: int, regime: str, seed: int) -> tuple[list[dict], float]:
    rows = []
    start = time.perf_counter()
    for (name, auroc, items), target in itertools.product(pools(), TARGETS):
        mean = float(items["label"].mean())
        stopping = stopping_mode(items, target, reps, seed, regime)
        rows.append({"pool": name, "auroc": auroc, "target": target, "mu": mean, **stopping})
        print(f"{name} target {target}: {stopping['activegrade']['stop_n_ratio']:.2f}", flush=True)
    return rows, time.perf_counter() - start


def _ideal(row: dict) -> float:
    """The ideal allocation's grades (core.stats.simulate_stopping.ideal_grades) over uniform's Wilson size."""
    ideal = row["activegrade"]["stop_n_ideal"]
    return float("nan") if ideal is None else ideal / max(row["uniform_fixed_n_wilson"], 1)


def _hit_summary(rows: list[dict], field: str) -> str:
    hits = np.array([r["activegrade"][field] for r in rows])
    hits = hits[np.isfinite(hits)]
    return f"{hits.mean():.3f} (pools {hits.min():.2f} to {hits.max():.2f})"


def _spread_summary(rows: list[dict], spread: Callable[[dict], float], goal: float) -> str:
    """How many (pool, target) pairs have ``spread`` of their figures at most ``goal``, and its range."""
    values = np.array([spread(r["activegrade"]) for r in rows])
    values = values[np.isfinite(values)]
    return f"met on {int((values <= goal).sum())} of {values.size} pairs ({values.min():.1f} to {values.max():.1f})"


def _within(rows: list[dict], field: str, low: float, high: float) -> str:
    """How many (pool, target) pairs have ``field`` in [low, high] within 2 of its s.e. (pairs without it aside)."""
    scored = [r["activegrade"] for r in rows if np.isfinite(r["activegrade"][field])]
    met = sum(low - 2 * a[f"{field}_se"] <= a[field] <= high + 2 * a[f"{field}_se"] for a in scored)
    return f"within the goal (2 s.e.) on {met} of {len(scored)} pairs"


def markdown(rows: list[dict], reps: int, regime: str, seconds: float) -> str:
    lines = [
        "# Grades to stop, coverage at the stop, and the forecast",
        "",
        f"`python benchmarks/stopping.py --reps {reps} --regime {regime}`; {reps} replications per pool and target, "
        f"{platform.machine()}, {seconds / 60:.0f} min. Written by the script: do not edit by hand.",
        "",
        "Each replication grades a pool in the queue's order until the regime's rule says done "
        "(core.stats.stopping), as a manager who stops when the dashboard says so. *uniform n, Wald / Wilson*: the "
        "grades a uniform random sample needs for the same half-width with the usual fixed-n (Wald) interval and "
        "with Wilson's score interval, from the pool's true mean and variance (core.stats.stopping."
        "uniform_fixed_n_wilson: Wald's size is no valid interval where n p is small, e.g. 30 grades at p = 0.02 "
        "expect 0.6 positives; Brown, Cai and DasGupta 2001 recommend Wilson's); *ratio*: median grades at the "
        "stop (± its Monte Carlo s.e.) over Wilson's size, the goal's reference, and over Wald's; *ideal*: the "
        "grades the design's strata need with Neyman allocation at the pool's true stratum spreads, read with the "
        "same interval, over Wilson's size (core.stats.simulate_stopping.ideal_grades: the design's aim, which "
        "knows every stratum's spread before any grade and reads it without the floors of a few equal grades; a "
        "reference, not a bound, since a sample whose grades show a low spread stops sooner); "
        "*uniform, same regime*: uniform random sampling stopped by the "
        "same rule. Coverage: of the interval shown at the stop, ± its Monte Carlo s.e. *setup hit*: share of stops "
        "inside the setup's 80% range (from the manager's expected score, the pool's mean times 1.25; *surrogate*: "
        "from the surrogate alone); *projection hit*: inside the dashboard's 80% range after max(20, 2H) grades, "
        "± its Monte Carlo s.e., over the replications still grading then (*shown*: their share; one that stopped "
        "sooner has its queue closed and its dashboard shows the stop); *late high / low*: the projection's high over "
        "its low read again at 30% of the median stop (at least the first projection's grades), median over the "
        "replications still grading then. The dashboard's projection is made from the manager's expected score too, "
        "as the project's reading makes it (core.settings.ProjectSettings.expected_score).",
        "",
        "| pool | target | mu | uniform n, Wald / Wilson | grades at stop (median) | ratio (Wilson / Wald) | ideal | goal "
        "| uniform, same regime "
        "| coverage at stop | bias at stop | saving shown | setup range | setup hit | surrogate hit "
        "| projection range | projection hit | shown | late high / low |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, u = r["activegrade"], r["uniform"]
        goal = None if r["auroc"] is None else GOAL_RATIO.get(_strength(r["auroc"]))
        ratio, ratio_se = a["stop_n_ratio_wilson"], a["stop_n_median_se"] / max(r["uniform_fixed_n_wilson"], 1)
        mark = "" if goal is None else f"<= {goal}" + (" met" if ratio - 2 * ratio_se <= goal else " **missed**")
        lines.append(
            f"| {r['pool']} | {r['target']} | {r['mu']:.3f} | {r['uniform_fixed_n']} / {r['uniform_fixed_n_wilson']} "
            f"| {a['stop_n_median']:.0f} ± {a['stop_n_median_se']:.0f} "
            f"| {ratio:.2f} ± {ratio_se:.2f} / {a['stop_n_ratio']:.2f} | {_ideal(r):.2f} | {mark} "
            f"| {u['stop_n_median']:.0f} "
            f"| {a['stop_coverage']:.3f} ± {a['stop_coverage_se']:.3f} | {a['stop_bias']:+.4f} "
            f"| {a['saving_shown_at_stop']:+.0%} (realised {a['saving_realised']:+.0%}) "
            f"| {a['forecast_low']:.0f}-{a['forecast_high']:.0f} | {a['forecast_hit']:.2f} "
            f"| {a.get('forecast_surrogate_hit', float('nan')):.2f} "
            f"| {a['projection_low']:.0f}-{a['projection_high']:.0f} "
            f"| {a['projection_hit']:.2f} ± {a['projection_hit_se']:.2f} | {a['projection_shown']:.2f} "
            f"| {a['projection_late_spread']:.2f} at {a['projection_late_at']} |"
        )
    covered = np.array([r["activegrade"]["stop_coverage"] + 2 * r["activegrade"]["stop_coverage_se"] for r in rows])
    lines += [
        "",
        "## Goals",
        "",
        f"- Coverage at the stop + 2 s.e. >= 0.935: met on {int((covered >= 0.935).sum())} of {len(rows)} "
        f"(pool, target) pairs; lowest coverage {min(r['activegrade']['stop_coverage'] for r in rows):.3f}.",
        f"- Setup forecast, stops inside the 80% range over all pairs together: {_hit_summary(rows, 'forecast_hit')}"
        " (goal 0.70-0.90).",
        f"- The dashboard's projection after max(20, 2H) grades: {_hit_summary(rows, 'projection_hit')}; "
        f"{_within(rows, 'projection_hit', 0.70, 0.90)} (goal 0.70-0.90 on each pool).",
        f"- Setup range high / low at most {SETUP_SPREAD:g} (every pair: the manager gave a score): "
        f"{_spread_summary(rows, lambda a: a['forecast_high'] / max(a['forecast_low'], 1), SETUP_SPREAD)}.",
        f"- The projection's high / low at most {LATE_SPREAD:g} from 30% of the stop on (median over the "
        f"replications): {_spread_summary(rows, lambda a: a['projection_late_spread'], LATE_SPREAD)}.",
        f"- {_saving_summary(rows)}",
    ]
    met = [r for r in rows if r["auroc"] is not None]
    for auroc, goal in GOAL_RATIO.items():
        sub = [r for r in met if _strength(r["auroc"]) == auroc]
        ratios = [r["activegrade"]["stop_n_ratio_wilson"] for r in sub]
        ses = [r["activegrade"]["stop_n_median_se"] / max(r["uniform_fixed_n_wilson"], 1) for r in sub]
        met_here = [x - 2 * e <= goal for x, e in zip(ratios, ses)]
        beyond = sum(not ok and _ideal(r) > goal for ok, r in zip(met_here, sub))
        lines.append(
            f"- AUROC {auroc}{'' if auroc == 0.5 else f' or {1 - auroc:.1f}'}: median grades at the stop over uniform's Wilson size {min(ratios):.2f} to "
            f"{max(ratios):.2f} (goal at most {goal}, within 2 s.e.: met on {sum(met_here)} of {len(sub)}; of the "
            f"{len(sub) - sum(met_here)} missed, the ideal allocation misses it too on {beyond}); over Wald's "
            f"{min(r['activegrade']['stop_n_ratio'] for r in sub):.2f} to "
            f"{max(r['activegrade']['stop_n_ratio'] for r in sub):.2f}."
        )
    return "\n".join(lines) + "\n"


def budget_markdown(rows: list[dict]) -> str:
    """The MSE ratio and fixed-n coverage table (`budget_rows`), with the goals read from it."""
    lines = [
        "",
        "## Fixed budgets: MSE ratio to uniform and fixed-n coverage",
        "",
        "The project's design (queue and estimator) at fixed budgets, on the pools without signal and shared "
        "gsm8k: MSE over uniform's exact MSE at the same n, and coverage of the fixed-n interval, ± Monte Carlo "
        "s.e. Goals: MSE ratio at most 1 + 2 s.e. without signal; coverage + 2 s.e. >= 0.935.",
        "",
        "| pool | budget | n | MSE ratio | fixed-n coverage |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['pool']} | {r['budget']} | {r['n']:.0f} | {r['mse_ratio']:.3f} ± {r['mse_ratio_se']:.3f} "
            f"| {r['coverage']:.3f} ± {r['coverage_se']:.3f} |"
        )
    flat = [r for r in rows if r["pool"] != "shared gsm8k"]
    mse_ok = sum(r["mse_ratio"] <= 1 + 2 * r["mse_ratio_se"] for r in flat)
    cover_ok = sum(r["coverage"] + 2 * r["coverage_se"] >= 0.935 for r in rows)
    lines += [
        "",
        f"- MSE ratio <= 1 + 2 s.e. without signal: met on {mse_ok} of {len(flat)} (pool, budget) pairs; "
        f"highest {max(r['mse_ratio'] for r in flat):.3f}.",
        f"- Fixed-n coverage + 2 s.e. >= 0.935: met on {cover_ok} of {len(rows)}; lowest "
        f"{min(r['coverage'] for r in rows):.3f}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--regime", choices=REGIMES, default=DEFAULT_REGIME)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "stopping.md"))
    args = parser.parse_args()
    rows, seconds = run(args.reps, args.regime, args.seed)
    start = time.perf_counter()
    budgets = budget_rows(args.reps, args.seed)
    biases = bias_rows(args.reps, args.seed)
    skips = skip_rows(args.reps, args.seed)
    seconds += time.perf_counter() - start
    text = markdown(rows, args.reps, args.regime, seconds) + budget_markdown(budgets) + bias_markdown(biases)
    text += skip_markdown(skips)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
