"""Replay grading on a pool whose every item has a label, and compare sampling methods.

Each method is run `reps` times at every budget; the grader is replaced by the
pool's `label`. Replication r of every stratified method uses the same random
order of the pool, `core.queue.item_order(N, seed_r)` (common random numbers).

Methods (METHOD.md section 6):
- uniform:        simple random sampling, the sample mean (a one-stratum design).
- proportional:   the prepared strata, proportional allocation, stratified estimator.
- neyman_paper:   entropy strata (the surrogate's, also when the items carry a proxy), approximate Neyman allocation from the
                  surrogate's spreads, stratified estimator (the paper's method).
- neyman_oracle:  entropy strata, Neyman allocation with the true spreads (a ceiling).
- lure, active_inference: see core.baselines.
- activegrade:    what the app does by default: `design_from_items(items)`, the
                  anytime queue (`next_item`, replayed here in a batch that
                  gives the very same order; tests/test_simulate.py checks it)
                  and the default estimator (`core.estimate.estimate_batch`).

Metrics per method and budget: mse against the pool's true mean mu; mse_ratio
= mse / uniform's MSE at the same n; coverage of the nominal 95% interval;
ci_width, its mean width; budget_saving = 1 - n / m, with m the uniform sample
size of equal MSE. Uniform's MSE is the exact variance of the sample mean
under simple random sampling, MSE_unif(m) = (1 - m/N) S^2 / m with
S^2 = sum_i (y_i - mu)^2 / (N - 1) (Cochran 1977, theorem 2.2), so
m = S^2 / (MSE + S^2/N); this avoids dividing by a noisy simulated MSE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core import baselines
from core.allocation import (
    Design,
    design_from_items,
    make_design,
    next_stratum,
    neyman_allocation,
    proportional_allocation,
)
from core.errors import InputError
from core.estimate import DEFAULT_METHOD, estimate_batch
from core.proxy import proxy_name
from core.queue import item_order
from core.spreads import adaptive_sd, calibrated_prior_sd
from core.strata import stratify

METHODS = ("uniform", "proportional", "neyman_paper", "neyman_oracle", "lure", "active_inference", "activegrade")
DEFAULT_BUDGETS = ("0.02", "0.05", "0.1", "0.2")
LEVEL = 0.95


def budget_sizes(budgets: Sequence[str | float], n_items: int) -> dict[str, int]:
    """Budget as given -> number of grades: a fraction of N when <= 1 (rounded, at least 2), else a count."""
    sizes = {}
    for budget in budgets:
        try:
            value = float(budget)
        except ValueError:
            raise InputError(
                f"budget {budget!r} is not a number", fix="give fractions of the pool like 0.05 or counts like 50"
            ) from None
        if not value > 0 or (value > 1 and not value.is_integer()):  # is_integer: False for inf, where int() raises
            raise InputError(
                f"budget {budget!r} is neither a fraction in (0, 1] nor a whole count",
                fix="give fractions of the pool like 0.05 or counts like 50",
            )
        n = int(round(value * n_items)) if value <= 1 else int(value)
        if n > n_items:
            raise InputError(
                f"budget {budget!r} is more than the pool's {n_items} items",
                fix=f"give at most {n_items} or a fraction of the pool",
            )
        sizes[str(budget)] = max(n, 2)
    return sizes


def synthetic_items(n_items: int = 600, *, signal: float = 1.0, likert: bool = False, seed: int = 0) -> pd.DataFrame:
    """A labelled items table with surrogate signals, for tests and demonstrations.

    Agreement a takes the values 0, 0.2, ..., 1 (as with 5 surrogate samples);
    the label is Bernoulli(q) with q = 0.5 + 0.45 signal (2a - 1), or with
    `likert` a 5-point grade mapped onto [0, 1]: q + Normal(0, 0.25) rounded to
    a quarter and clipped. Semantic entropy falls with agreement, plus noise;
    strata by entropy as core.prepare makes them. signal = 0 gives a surrogate
    that knows nothing.
    """
    rng = np.random.default_rng(seed)
    agreement = rng.integers(0, 6, n_items) / 5
    q = 0.5 + 0.45 * signal * (2 * agreement - 1)
    if likert:
        labels = np.clip(np.round((q + rng.normal(0, 0.25, n_items)) * 4) / 4, 0, 1)
    else:
        labels = (rng.random(n_items) < q).astype(float)
    entropy = np.clip(1.6 * (1 - agreement) + rng.normal(0, 0.2, n_items), 0, None) * (agreement < 1)
    return pd.DataFrame(
        {
            "id": [f"item-{i:05d}" for i in range(n_items)],
            "label": labels,
            "n_samples": 5,
            "semantic_entropy": entropy,
            "agreement": agreement,
            "stratum": stratify(entropy, agreement),
        }
    )


def labels_of(items: pd.DataFrame, file: str | None = None) -> np.ndarray:
    """The pool's labels as floats in [0, 1]; InputError naming the first bad item by its id,
    and by its 1-based row in `items`, or by `file` when given (whose row numbering
    depends on the format, so no row is claimed there)."""
    if "label" not in items.columns:
        raise InputError(
            "the pool has no 'label' column", file=file, column="label", fix="the simulator needs every item's grade"
        )
    labels = pd.to_numeric(items["label"], errors="coerce").to_numpy(dtype=float)
    bad = ~((labels >= 0) & (labels <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        item = f" of item '{items['id'].iat[row]}'" if "id" in items.columns else ""
        raise InputError(
            f"label {items['label'].iat[row]!r}{item} is not a number in [0, 1]",
            file=file,
            row=None if file else row + 1,
            column="label",
            fix="give every item a grade in [0, 1]",
        )
    return labels


def replication_orders(n_items: int, seed: int, reps: int) -> np.ndarray:
    """(reps, N): replication r's random order of the pool, item_order(N, seed_r)."""
    seeds = np.random.SeedSequence(seed).generate_state(reps)
    return np.stack([item_order(n_items, int(s)) for s in seeds])


def _by_stratum(design: Design, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each order regrouped by stratum (order kept within a stratum), and the strata's offsets."""
    grouped = np.take_along_axis(orders, np.argsort(design.stratum[orders], axis=1, kind="stable"), axis=1)
    offsets = np.concatenate([[0], np.cumsum(design.sizes)[:-1]])
    return grouped, offsets


def static_sample(design: Design, alloc: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """(R, n) positions: the first alloc_h items of each stratum in each replication's order."""
    grouped, offsets = _by_stratum(design, orders)
    columns = np.concatenate([np.arange(o, o + a) for o, a in zip(offsets, alloc)])
    return grouped[:, columns]


def replay_queue(design: Design, labels: np.ndarray, orders: np.ndarray, n: int) -> np.ndarray:
    """(R, n) positions in the order `core.queue.next_item` hands them out, grading each at once.

    Per step: the spreads of `queue_spreads` (calibrated_prior_sd and
    adaptive_sd of the grades so far), the stratum of `next_stratum`, and the stratum's first free item in
    the replication's order, exactly as next_item does for one project.
    """
    reps = orders.shape[0]
    grouped, offsets = _by_stratum(design, orders)
    counts = np.zeros((reps, design.H), dtype=np.int64)
    sums = np.zeros((reps, design.H))
    sumsq = np.zeros((reps, design.H))
    pooled = np.zeros((5, reps))  # sum d, sum d^2, sum y, sum d y, sum y^2 over the graded items (pooled_sums)
    d_all = design.proxy - design.proxy.mean()
    rows = np.arange(reps)
    positions = np.empty((reps, n), dtype=np.int64)
    for step in range(n):
        prior = calibrated_prior_sd(design, np.full(reps, step), *pooled)
        sds = adaptive_sd(prior, design.prior_strength, counts, sums, sumsq)
        h = next_stratum(design.weights, sds, counts, design.sizes, design.floor)
        pos = grouped[rows, offsets[h] + counts[rows, h]]
        positions[:, step] = pos
        counts[rows, h] += 1
        sums[rows, h] += labels[pos]
        sumsq[rows, h] += labels[pos] ** 2
        d, y = d_all[pos], labels[pos]
        pooled += (d, d * d, y, d * y, y * y)
    return positions


@dataclass(frozen=True)
class Run:
    """One method at one budget: estimates, interval and realised sample sizes over the replications."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray


def _wald(value: np.ndarray, variance: np.ndarray, n: np.ndarray) -> Run:
    half = stats.norm.ppf(0.5 + LEVEL / 2) * np.sqrt(variance)
    return Run(value, np.clip(value - half, 0, 1), np.clip(value + half, 0, 1), n)


def _stratified_run(design: Design, positions: np.ndarray, labels: np.ndarray, method: str) -> Run:
    batch = estimate_batch(design, positions, labels[positions], method)
    low, high = batch.interval(LEVEL)
    return Run(batch.value, low, high, np.full(positions.shape[0], positions.shape[1]))


def simulate(
    items: pd.DataFrame,
    budgets: Sequence[str | float] = DEFAULT_BUDGETS,
    *,
    reps: int = 1000,
    seed: int = 0,
    methods: Sequence[str] = METHODS,
    n_strata: int = 5,
) -> dict:
    """Run every method at every budget; returns {"N", "mu", "methods": {METHOD: {BUDGET: metrics}}}.

    `items` is core.prepare.prepare_items's table with a `label` column; its
    `stratum` column is the prepared stratification (used by proportional).
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"unknown method {unknown[0]!r}", fix=f"use some of {', '.join(METHODS)}")
    if reps < 2:
        raise InputError(f"reps must be at least 2, got {reps}")
    labels = labels_of(items)
    N = labels.size  # noqa: N806
    sizes = budget_sizes(budgets, N)
    mu = float(labels.mean())
    s2 = float(labels.var(ddof=1)) if N > 1 else 0.0
    orders = replication_orders(N, seed, reps)
    rng = np.random.default_rng([seed, 1])
    app = design_from_items(items)
    prepared = design_from_items(items, stratify_by=None)
    paper = design_from_items(items, stratify_by="entropy", n_strata=n_strata, proxy_column="agreement")
    one = make_design(np.zeros(N, dtype=np.int64), items["agreement"].to_numpy(dtype=float))
    true_sd = np.array([labels[paper.stratum == h].std(ddof=1) if paper.sizes[h] > 1 else 0.0 for h in range(paper.H)])
    predicted = app.proxy
    queue = replay_queue(app, labels, orders, max(sizes.values())) if "activegrade" in methods else None

    def run(method: str, n: int) -> Run:
        if method == "uniform":
            return _stratified_run(one, orders[:, :n], labels, "stratified")
        if method == "proportional":
            return _stratified_run(
                prepared,
                static_sample(prepared, proportional_allocation(prepared.sizes, n, prepared.floor), orders),
                labels,
                "stratified",
            )
        if method == "neyman_paper":
            return _stratified_run(
                paper,
                static_sample(paper, neyman_allocation(paper.sizes, paper.prior_sd, n, paper.floor), orders),
                labels,
                "stratified",
            )
        if method == "neyman_oracle":
            return _stratified_run(
                paper,
                static_sample(paper, neyman_allocation(paper.sizes, true_sd, n, paper.floor), orders),
                labels,
                "stratified",
            )
        if method == "lure":
            return _wald(*baselines.lure(labels, predicted, n, rng, reps))
        if method == "active_inference":
            return _wald(*baselines.active_inference(labels, predicted, n, rng, reps))
        return _stratified_run(app, queue[:, :n], labels, DEFAULT_METHOD)

    results: dict[str, dict[str, dict[str, float]]] = {}
    for method in methods:
        results[method] = {}
        for budget, n in sizes.items():
            r = run(method, n)
            mse = float(np.mean((r.value - mu) ** 2))
            n_mean = float(r.n.mean())
            uniform_mse = (1 - n_mean / N) * s2 / n_mean
            m = s2 / (mse + s2 / N) if s2 > 0 else float(N)
            results[method][budget] = {
                "n": n_mean,
                "mse": mse,
                "mse_ratio": mse / uniform_mse if uniform_mse > 0 else float("nan"),
                "coverage": float(np.mean((r.low <= mu) & (mu <= r.high))),
                "ci_width": float(np.mean(r.high - r.low)),
                "budget_saving": 1 - n_mean / m,
            }
    return {"N": N, "mu": mu, "proxy": proxy_name(items), "methods": results}


def format_table(result: dict) -> str:
    """The simulation as a plain-text table, one row per method and budget."""
    header = f"{'method':<17} {'budget':>7} {'n':>7} {'mse':>10} {'ratio':>6} {'cover':>6} {'width':>6} {'saving':>7}"
    lines = [f"N = {result['N']}, mu = {result['mu']:.4f}, design proxy: {result.get('proxy', 'agreement')}", header]
    for method, by_budget in result["methods"].items():
        for budget, row in by_budget.items():
            lines.append(
                f"{method:<17} {budget:>7} {row['n']:>7.1f} {row['mse']:>10.3g} {row['mse_ratio']:>6.3f} "
                f"{row['coverage']:>6.3f} {row['ci_width']:>6.3f} {row['budget_saving']:>+7.1%}"
            )
    return "\n".join(lines)
