"""Replay a comparison of targets on a pool whose every response has a label (the simulator's `comparisons`).

Methods:
- uniform_paired: items uniform at random without replacement, every target graded on each; the paired mean.
- activegrade:    the comparison's design and queue (core.stats.compare_design: strata where the targets'
                  answers differ, each next item to the stratum that lowers the pairs' summed variance most,
                  spreads re-estimated from the grades; `replay_comparison`), the estimator and intervals of
                  core.stats.compare.

Budget units: a grade is one response graded, so an item graded for every target costs K grades (absolute
grading, or one side-by-side card of K responses) and P = K (K - 1) / 2 grades in pairwise mode (one card a
pair). A budget <= 1 is a share of K x N grades, else a count of grades; the items graded are
floor(grades / cost). Modes absolute and side-by-side grade the same responses and differ only on screen, so
their statistics are the same; pairwise estimates A's win rate (ties 1/2) from a `preference` column of the
pool (two targets: the first model's preference over the second, 1, 1/2 or 0) or, without one, from the labels
(core.stats.compare.preference).

Figures per pair, method and budget, each with its Monte Carlo s.e. (FIGURE_se): mse, mse_ratio (to
uniform_paired's exact MSE (1 - m/N) S^2 / m, S^2 the pool variance of the paired values, Cochran 1977,
theorem 2.2), bias, coverage and ci_width of the fixed-n interval, coverage_anytime (the confidence sequence
covered at every grade up to the budget) and ci_width_anytime, all in the estimand's units; with P > 1 pairs
every interval is at the Bonferroni level (core.stats.compare.simultaneous_level) and `comparisons_joint`
gives the share of replications in which every pair's interval covered. Absolute and side-by-side add
`targets`: each target's own mean from the same sample (truth, mse, bias, coverage, ci_width); pairwise grades
give no per-model estimate.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.errors import InputError
from core.stats.allocation import make_design
from core.stats.compare import (
    DEFAULT_MODE,
    MODES,
    Comparison,
    difference_batch,
    pair_key,
    pairs,
    preference,
    simultaneous_level,
)
from core.stats.compare_design import comparison_design, comparison_stratum
from core.stats.confseq import checkpoints, sequence_batch
from core.stats.design import planned_budget
from core.stats.estimate import estimate_batch
from core.stats.simulate import LEVEL, labels_of, replication_orders
from core.stats.stopping import DEFAULT_REGIME, allocation_kappa, check_regime

COMPARE_METHODS = ("uniform_paired", "activegrade")
ESTIMANDS = {
    "absolute": "mean(A) - mean(B)",
    "side-by-side": "mean(A) - mean(B)",
    "pairwise": "win rate of A (ties 1/2)",
}


def grade_cost(mode: str, n_models: int) -> int:
    """Grades one item costs when graded for every target (module docstring)."""
    return n_models * (n_models - 1) // 2 if mode == "pairwise" else n_models


def compare_budget_items(budgets: Sequence[str | float], mode: str, n_models: int, n_items: int) -> dict[str, int]:
    """Budget as given -> items graded for every target: a share of K x N grades when <= 1, else a count."""
    total, cost = n_models * n_items, grade_cost(mode, n_models)
    sizes = {}
    for budget in budgets:
        try:
            value = float(budget)
        except ValueError:
            raise InputError(
                f"budget {budget!r} is not a number", fix="give shares of K x N grades or counts"
            ) from None
        if not value > 0 or (value > 1 and not value.is_integer()):
            raise InputError(f"budget {budget!r} is neither a share in (0, 1] nor a whole count of grades")
        grades = value * total if value <= 1 else value
        items = int(grades // cost)
        if grades > n_items * cost:
            raise InputError(
                f"budget {budget!r} is {int(grades)} grades, more than the {n_items * cost} a full comparison takes",
                fix=f"give at most {n_items * cost} grades or a share of them",
            )
        sizes[str(budget)] = max(items, 2)
    return sizes


def paired_values(comparison: Comparison, mode: str) -> dict[str, np.ndarray]:
    """Pair key -> (N,) values in [-1, 1] whose mean is the estimand: d = y_A - y_B, or in pairwise mode
    s = 2 w - 1 with w the preference (module docstring)."""
    if mode not in MODES:
        raise InputError(f"unknown comparison mode {mode!r}", fix=f"use one of {', '.join(MODES)}")
    labels = {m: labels_of(comparison.items[m]) for m in comparison.models}
    first = comparison.items[comparison.models[0]]
    if mode == "pairwise" and "preference" in first.columns:
        if len(comparison.models) != 2:
            raise InputError(
                "a 'preference' column serves two targets only",
                column="preference",
                fix="drop it to simulate the preferences of every pair from the labels",
            )
        w = labels_of(first.assign(label=first["preference"]))
        if not np.isin(w, (0.0, 0.5, 1.0)).all():
            raise InputError(
                "a preference is not 1, 0.5 or 0",
                column="preference",
                fix="1: the first model better, 0.5: tie, 0: the second",
            )
        return {pair_key(*comparison.models): 2 * w - 1}
    values = {}
    for a, b in pairs(comparison.models):
        values[pair_key(a, b)] = (
            2 * preference(labels[a], labels[b]) - 1 if mode == "pairwise" else labels[a] - labels[b]
        )
    return values


def simulate_comparisons(
    comparison: Comparison,
    budgets: Sequence[str | float],
    *,
    mode: str = DEFAULT_MODE,
    reps: int = 1000,
    seed: int = 0,
    regime: str = DEFAULT_REGIME,
    n0: int | None = None,
    methods: Sequence[str] = COMPARE_METHODS,
) -> dict:
    """{"compare_mode", "models", "comparisons": {PAIR: {METHOD: {BUDGET: figures}}}, "comparisons_joint"}."""
    check_regime(regime)
    unknown = [m for m in methods if m not in COMPARE_METHODS]
    if unknown:
        raise InputError(f"unknown comparison method {unknown[0]!r}", fix=f"use some of {', '.join(COMPARE_METHODS)}")
    values = paired_values(comparison, mode)
    N, K = comparison.N, len(comparison.models)  # noqa: N806
    n_pairs = len(values)
    level = simultaneous_level(LEVEL, n_pairs)
    sizes = compare_budget_items(budgets, mode, K, N)
    n0 = planned_budget(None, N) if n0 is None else int(n0)
    orders = replication_orders(N, seed, reps)
    by_pair = comparison_design(comparison, kappa=allocation_kappa(regime))
    designs = {pair_key(a, b): d for (a, b), d in by_pair.items()}
    design = next(iter(designs.values()))
    one = make_design(np.zeros(N, dtype=np.int64), np.full(N, 0.5), kappa=design.kappa)
    top = max(sizes.values())
    queue = replay_comparison([designs[k] for k in values], [(1 + v) / 2 for v in values.values()], orders, top)

    def positions(method: str, n: int) -> np.ndarray:
        return (orders if method == "uniform_paired" else queue)[:, :n]

    out: dict[str, dict] = {key: {} for key in values}
    joint: dict[str, dict] = {}
    for method in methods:
        covered_all = {b: np.ones(reps, dtype=bool) for b in sizes}
        anytime_all = {b: np.ones(reps, dtype=bool) for b in sizes}
        for key, v in values.items():
            d = one if method == "uniform_paired" else designs[key]
            cs = _sequence(d, positions(method, top), v, n0, 1 - level, sizes.values())
            rows = {}
            for budget, n in sizes.items():
                pos = positions(method, n)
                rows[budget], covered, anytime = _figures(d, pos, v, n, cs, level, mode, grade_cost(mode, K))
                covered_all[budget] &= covered
                anytime_all[budget] &= anytime
            out[key][method] = rows
        joint[method] = {
            b: {**_mean_se("coverage", covered_all[b]), **_mean_se("coverage_anytime", anytime_all[b])} for b in sizes
        }
    result = {
        "compare_mode": mode,
        "models": list(comparison.models),
        "grades_per_item": grade_cost(mode, K),
        "level_per_pair": level,
        "comparisons": out,
        "comparisons_joint": joint,
    }
    if mode != "pairwise":
        result["targets"] = {
            model: {method: per_model(comparison, model, design, positions, method, sizes) for method in methods}
            for model in comparison.models
        }
    return result


def per_model(comparison: Comparison, model: str, design, positions, method: str, sizes: dict[str, int]) -> dict:
    """One target's mean from the comparison's sample: the stratified estimator on the design's strata
    (core.stats.estimate), its bias, MSE and fixed-n coverage at 95% per budget."""
    y = labels_of(comparison.items[model])
    strata = np.zeros(y.size, dtype=np.int64) if method == "uniform_paired" else design.stratum
    own = make_design(strata, comparison.items[model]["agreement"].to_numpy(dtype=float))
    rows = {}
    for budget, n in sizes.items():
        pos = positions(method, n)
        batch = estimate_batch(own, pos, y[pos], "stratified")
        low, high = batch.interval(LEVEL)
        err = batch.value - y.mean()
        rows[budget] = {
            "truth": float(y.mean()),
            **_mean_se("mse", err**2),
            **_mean_se("bias", err),
            **_mean_se("coverage", (low <= y.mean()) & (y.mean() <= high)),
            **_mean_se("ci_width", high - low),
        }
    return rows


def replay_comparison(designs: list, grades: list[np.ndarray], orders: np.ndarray, n: int) -> np.ndarray:
    """(R, n) positions in the order the comparison's queue hands them out, each item graded for every target
    at once: per step core.stats.compare_design.comparison_stratum on all R replications (each pair's
    per-stratum and pooled sums kept up to date, as core.stats.simulate.replay_queue does for one), then the
    stratum's first free item in the replication's order. With one pair it is replay_queue."""
    first = designs[0]
    reps = orders.shape[0]
    grouped = np.take_along_axis(orders, np.argsort(first.stratum[orders], axis=1, kind="stable"), axis=1)
    offsets = np.concatenate([[0], np.cumsum(first.sizes)[:-1]])
    counts = np.zeros((reps, first.H))
    sums = [np.zeros((reps, first.H)) for _ in designs]
    sumsq = [np.zeros((reps, first.H)) for _ in designs]
    pooled = [np.zeros((6, reps)) for _ in designs]  # core.stats.spreads.pooled_sums, per pair
    centred = [d.proxy - d.proxy.mean() for d in designs]
    rows = np.arange(reps)
    positions = np.empty((reps, n), dtype=np.int64)
    for step in range(n):
        moments = [(counts, sums[p], sumsq[p]) for p in range(len(designs))]
        h = comparison_stratum(designs, counts, moments, [tuple(x) for x in pooled])
        pos = grouped[rows, offsets[h] + counts[rows, h].astype(np.int64)]
        positions[:, step] = pos
        counts[rows, h] += 1
        for p, (z, c) in enumerate(zip(grades, centred)):
            y, x = z[pos], c[pos]
            sums[p][rows, h] += y
            sumsq[p][rows, h] += y * y
            pooled[p][0] += 1
            pooled[p][1:] += (x, x * x, y, x * y, y * y)
    return positions


def _sequence(design, positions: np.ndarray, v: np.ndarray, n0: int, alpha: float, budgets):
    """The confidence sequence of z = (1 + v) / 2 over the graded positions, checked against the true stratum means."""
    z = (1 + v) / 2
    truth = np.array([z[design.stratum == h].mean() for h in range(design.H)])
    steps = checkpoints(positions.shape[1], budgets)
    return sequence_batch(design, positions, z[positions], n0, alpha, steps=steps, truth=truth)


def _mean_se(name: str, values: np.ndarray) -> dict:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return {name: None, f"{name}_se": None}
    return {name: float(values.mean()), f"{name}_se": float(values.std(ddof=1) / np.sqrt(values.size))}


def _figures(design, pos: np.ndarray, v: np.ndarray, n: int, cs, level: float, mode: str, cost: int):
    """One pair's figures at one budget (module docstring), in the estimand's units, and the (R,) coverage
    of the fixed-n and anytime intervals (for the joint figures)."""
    N = v.size  # noqa: N806
    scale = 0.5 if mode == "pairwise" else 1.0  # s -> win rate (1 + s) / 2
    shift = 0.5 if mode == "pairwise" else 0.0
    truth = float(v.mean())
    batch = difference_batch(design, pos, v[pos])
    low, high = batch.interval(level)
    err = scale * (batch.value - truth)
    covered = (low <= truth) & (truth <= high)
    z_low, z_high = cs.at(n)
    anytime = cs.covered[:, n - 1]
    s2 = float(v.var(ddof=1))
    uniform_mse = scale**2 * (1 - n / N) * s2 / n
    mse, mse_se = float((err**2).mean()), float((err**2).std(ddof=1) / np.sqrt(err.size))
    ratio = mse / uniform_mse if uniform_mse > 0 else float("nan")
    row = {
        "estimand": ESTIMANDS[mode],
        "truth": scale * truth + shift,
        "items": n,
        "grades": n * cost,
        "mse": mse,
        "mse_se": mse_se,
        "mse_ratio": ratio,
        "mse_ratio_se": mse_se / uniform_mse if uniform_mse > 0 else float("nan"),
        **_mean_se("bias", err),
        **_mean_se("coverage", covered),
        **_mean_se("ci_width", scale * (high - low)),
        **_mean_se("coverage_anytime", anytime),
        **_mean_se("ci_width_anytime", scale * 2 * (z_high - z_low)),
    }
    return row, covered, anytime


def format_comparisons(result: dict) -> str:
    """The comparisons as a plain-text table, one row per pair, method and budget, figures ± Monte Carlo s.e."""

    def cell(row: dict, name: str, fmt: str) -> str:
        return f"{row[name]:{fmt}}±{row[name + '_se']:{fmt.lstrip('+')}}"

    lines = [
        f"comparisons ({result['compare_mode']}, {result['grades_per_item']} grades an item, "
        f"intervals at {result['level_per_pair']:.4f} per pair)",
        f"{'pair':<30} {'method':<15} {'budget':>7} {'items':>6} {'MSE ratio':>13} {'bias':>15} {'cover':>13} "
        f"{'width':>6} {'anytime':>13}",
    ]
    for pair, by_method in result["comparisons"].items():
        for method, by_budget in by_method.items():
            for budget, row in by_budget.items():
                lines.append(
                    f"{pair:<30} {method:<15} {budget:>7} {row['items']:>6} {cell(row, 'mse_ratio', '.3f'):>13} "
                    f"{cell(row, 'bias', '+.4f'):>15} {cell(row, 'coverage', '.3f'):>13} {row['ci_width']:>6.3f} "
                    f"{cell(row, 'coverage_anytime', '.3f'):>13}"
                )
    return "\n".join(lines)
