"""Replay grading on a pool whose every item has a label, and compare sampling methods.

Each method is run `reps` times at every budget; the grader is replaced by the
pool's `label`. Replication r of every stratified method uses the same random
order of the pool, `core.stats.queue.item_order(N, seed_r)` (common random numbers).

Methods (docs/method.md, *Simulation*):
- uniform:        simple random sampling, the sample mean (a one-stratum design).
- proportional:   the prepared strata, proportional allocation, stratified estimator.
- neyman_paper:   entropy strata (the surrogate's, also when the items carry a proxy), approximate Neyman allocation from the
                  surrogate's spreads, stratified estimator (the paper's method).
- neyman_oracle:  entropy strata, Neyman allocation with the true spreads: it
                  reads every label (a ceiling, not a method).
- app_oracle:     the project's own strata, Neyman allocation with the true
                  spreads: reads every label too (the ceiling of this design).
- lure, active_inference: see core.stats.baselines (their papers' Wald intervals).
- activegrade:    what the app does: the project's design
                  (`core.stats.design.prepared_design`: strata as prepared with the
                  project's settings, never re-stratified, allocating as its settings ask:
                  for anytime stopping, or for a budget fixed in advance), the queue
                  (`next_item`, replayed here in a batch that gives the very
                  same order; tests/test_simulate.py checks it) and the
                  default estimator (`core.stats.estimate.estimate_batch`).

Metrics per method and budget: mse against the pool's true mean mu; mse_ratio
= mse / uniform's MSE at the same n; bias = mean(estimate - mu); coverage of
the nominal 95% fixed-n interval; ci_width, its mean width; budget_saving =
1 - n / m, with m the uniform sample size of equal MSE; coverage_anytime, the
share of replications whose confidence sequence (core.stats.confseq, tuned for the
planned budget n0) covered mu at every n up to the budget, and
ci_width_anytime, the mean width of its running intersection at the budget
(intersected over `core.stats.confseq.checkpoints`, so at least as wide as the
dashboard's, which intersects over every grade); the stratified methods grade
their sample in the replication's random order (a predictable order), the
baselines have none (null); saving_shown, the mean saving the dashboard would
show at the budget, over the replications where it is shown (null when
withheld in all), and saving_withheld, the share where it is withheld; skips,
the mean number of items skipped on the way (see `skip_mask`). Every figure
has a Monte Carlo standard error beside it, named FIGURE_se (the standard
deviation over replications / sqrt(reps); for mse_ratio and budget_saving the
delta method on the MSE's). Uniform's MSE is the exact variance of the sample mean
under simple random sampling, MSE_unif(m) = (1 - m/N) S^2 / m with
S^2 = sum_i (y_i - mu)^2 / (N - 1) (Cochran 1977, theorem 2.2), so
m = S^2 / (MSE + S^2/N); this avoids dividing by a noisy simulated MSE.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from core.errors import InputError
from core.stats import baselines
from core.stats.allocation import (
    Design,
    design_from_items,
    make_design,
    neyman_allocation,
    proportional_allocation,
    stratum_sd,
)
from core.stats.confseq import SequenceBatch, checkpoints, sequence_batch
from core.stats.design import planned_budget, prepared_design
from core.stats.estimate import DEFAULT_METHOD, estimate_batch
from core.stats.intervals import LEVEL
from core.stats.proxy import proxy_name
from core.stats.queue import item_order, queue_stratum
from core.stats.simulate_stopping import replay_cap, stopping_figures
from core.stats.stopping import DEFAULT_REGIME, FIXED, check_regime
from core.stats.strata import stratify

METHODS = (
    "uniform",
    "proportional",
    "neyman_paper",
    "neyman_oracle",
    "app_oracle",
    "lure",
    "active_inference",
    "activegrade",
)
METHOD_NOTES = {
    "uniform": "simple random sampling, sample mean",
    "proportional": "the project's strata, proportional allocation",
    "neyman_paper": "entropy strata, approximate Neyman from the surrogate (the paper's method)",
    "neyman_oracle": "reads every label: entropy strata, Neyman with the true spreads (a ceiling, not a method)",
    "app_oracle": "reads every label: the project's strata, Neyman with the true spreads (this design's ceiling)",
    "lure": "surrogate-weighted sampling, LURE estimator, its paper's Wald interval",
    "active_inference": "active inference (Poisson sampling), its paper's Wald interval",
    "activegrade": "the project's design, queue and estimator (what the app does)",
}
ORACLES = ("neyman_oracle", "app_oracle")
DESIGN_FIGURES = ("coverage_anytime", "ci_width_anytime", "saving_shown", "saving_withheld", "skips")
"""Figures of the stratified designs only (null for lure and active_inference)."""
SEQUENTIAL = ("uniform", "activegrade")
"""Methods whose sample at a smaller budget is the start of that at a larger one."""
DEFAULT_BUDGETS = ("0.02", "0.05", "0.1", "0.2")
AROUND_NEEDED = (0.25, 0.5, 1.0, 1.5, 2.0)
"""The Simulate page's default budgets, as multiples of the grades a project's plan needs for its target."""


def budgets_around(needed: int, n_items: int) -> tuple[str, ...]:
    """Budgets (counts of grades) around ``needed``, the grades the project's plan says its target needs
    (core.services.reading's forecast): AROUND_NEEDED times it, rounded, each from 2 to N, no repeats."""
    counts = sorted({min(n_items, max(2, round(m * needed))) for m in AROUND_NEEDED})
    return tuple(str(c) for c in counts)


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
    a quarter and clipped; entropy and strata as `surrogate_items` makes them. signal = 0 gives a surrogate
    that knows nothing.
    """
    rng = np.random.default_rng(seed)
    agreement = rng.integers(0, 6, n_items) / 5
    q = 0.5 + 0.45 * signal * (2 * agreement - 1)
    if likert:
        labels = np.clip(np.round((q + rng.normal(0, 0.25, n_items)) * 4) / 4, 0, 1)
    else:
        labels = (rng.random(n_items) < q).astype(float)
    return surrogate_items(labels, agreement, rng)


def surrogate_items(
    labels: np.ndarray, agreement: np.ndarray, rng: np.random.Generator, *, id_prefix: str = "item-"
) -> pd.DataFrame:
    """An items table as core.surrogate.prepare makes it, for generated labels and agreement (5 samples an item):
    semantic entropy 1.6 (1 - a) plus Normal(0, 0.2) noise, clipped at 0 and 0 where every sample agrees;
    strata by the default stratification (core.stats.strata)."""
    n_items = len(labels)
    entropy = np.clip(1.6 * (1 - agreement) + rng.normal(0, 0.2, n_items), 0, None) * (agreement < 1)
    return pd.DataFrame(
        {
            "id": [f"{id_prefix}{i:05d}" for i in range(n_items)],
            "label": labels,
            "n_samples": 5,
            "semantic_entropy": entropy,
            "agreement": agreement,
            "stratum": stratify(entropy, agreement),
        }
    )


def _shown_value(value: object) -> str:
    """A cell as a person reads it: 'nan' and 1.5, not np.float64(nan); text quoted."""
    return repr(value) if isinstance(value, str) else str(value.item() if hasattr(value, "item") else value)


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
            f"label {_shown_value(items['label'].iat[row])}{item} is not a number in [0, 1]",
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


def skip_mask(
    labels: np.ndarray, skip_wrong: float, skip_right: float, reps: int, seed: int, grader: int = 0
) -> np.ndarray:
    """(reps, N) bool: whether grader ``grader`` (0: the first) of replication r passes over item i when shown.

    Skips depend on the grade: an item with grade y is skipped with probability
    skip_wrong (1 - y) + skip_right y, independently (not at random when the two
    rates differ, the case that biases an estimate which ignores skips); each grader draws independently.
    """
    for name, rate in (("--skip-wrong", skip_wrong), ("--skip-right", skip_right)):
        if not 0 <= rate < 1:
            raise InputError(f"{name} must be in [0, 1), got {rate}", fix="give the share of items graders skip")
    rate = skip_wrong * (1 - labels) + skip_right * labels
    stream = [seed, 2] if grader == 0 else [seed, 2, grader]
    return np.random.default_rng(stream).random((reps, labels.size)) < rate


def skipped_last(orders: np.ndarray, skipped: np.ndarray) -> np.ndarray:
    """Each order with the items its grader skips moved behind the others (order kept within each group).

    This is where core.stats.queue.next_item puts a skipped item: after the
    stratum's other free items; so every design reads its sample from here.
    """
    return np.take_along_axis(orders, np.argsort(np.take_along_axis(skipped, orders, 1), axis=1, kind="stable"), 1)


def skips_on_the_way(design: Design, orders: np.ndarray, skipped: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(R,) items skipped before the sample was complete: per stratum, the skipped items that come,
    in the replication's original order, before the stratum's last graded item."""
    rank = np.argsort(orders, axis=1)
    rows = np.arange(orders.shape[0])[:, None]
    total = np.zeros(orders.shape[0])
    for h in range(design.H):
        in_h = design.stratum[positions] == h
        last = np.where(in_h, rank[rows, positions], -1).max(axis=1)
        total += (skipped & (design.stratum == h) & (rank < last[:, None])).sum(axis=1)
    return total


def skips_met(design: Design, orders: np.ndarray, lost: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(R, n): at each grade, the items of its stratum that the queue has met and that stay skipped (``lost``,
    (R, N) by position, passed over by every grader): those coming before the stratum's furthest graded item in
    the replication's ``orders``, less those the queue came back to and had graded (a stratum's last items).
    core.stats.stopping.run_looks reads them as a worst-case bound."""
    rank = np.argsort(orders, axis=1)
    rows = np.arange(orders.shape[0])[:, None]
    in_order_lost = np.take_along_axis(lost, orders, 1)
    strata = design.stratum[orders]
    at = rank[rows, positions]  # each graded position's place in the order
    was_lost = np.take_along_axis(lost, positions, 1)
    out = np.zeros(positions.shape, dtype=np.int64)
    for h in range(design.H):
        mine = design.stratum[positions] == h
        before = np.cumsum(in_order_lost & (strata == h), axis=1)
        reached = np.maximum.accumulate(np.where(mine & ~was_lost, np.take_along_axis(before, at, 1), 0), axis=1)
        came_back = np.cumsum(mine & was_lost, axis=1)
        out = np.where(mine, np.maximum(reached - came_back, 0), out)
    return out


def in_order(positions: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """A static sample's positions re-ordered as the replication's random order meets them: a predictable
    grading order in which the confidence sequence can be read."""
    rank = np.argsort(orders, axis=1)
    return np.take_along_axis(positions, np.argsort(np.take_along_axis(rank, positions, 1), axis=1), 1)


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
    """(R, n) positions in the order `core.stats.queue.next_item` hands them out, grading each at once.

    Per step: the app's step, `core.stats.queue.queue_stratum`, on all R replications at once (their
    per-stratum and pooled sums kept up to date here rather than recomputed from the grades), then the
    stratum's first free item in the replication's order, as next_item takes it for one project.
    """
    reps = orders.shape[0]
    grouped, offsets = _by_stratum(design, orders)
    counts = np.zeros((reps, design.H))
    sums = np.zeros((reps, design.H))
    sumsq = np.zeros((reps, design.H))
    pooled = np.zeros((6, reps))  # n, sum d, sum d^2, sum y, sum d y, sum y^2 (core.stats.spreads.pooled_sums)
    d_all = design.proxy - design.proxy.mean()
    rows = np.arange(reps)
    positions = np.empty((reps, n), dtype=np.int64)
    for step in range(n):
        h = queue_stratum(design, counts, (counts, sums, sumsq), tuple(pooled))
        pos = grouped[rows, offsets[h] + counts[rows, h].astype(np.int64)]
        positions[:, step] = pos
        y, d = labels[pos], d_all[pos]
        counts[rows, h] += 1
        sums[rows, h] += y
        sumsq[rows, h] += y * y
        pooled[0] += 1
        pooled[1:] += (d, d * d, y, d * y, y * y)
    return positions


@dataclass(frozen=True)
class Run:
    """One method at one budget over the replications: estimates, fixed-n interval, realised sample sizes,
    and for the stratified designs the design and graded positions (in grading order)."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    design: Design | None = None
    positions: np.ndarray | None = None


def _wald(value: np.ndarray, variance: np.ndarray, n: np.ndarray) -> Run:
    half = stats.norm.ppf(0.5 + LEVEL / 2) * np.sqrt(variance)
    return Run(value, np.clip(value - half, 0, 1), np.clip(value + half, 0, 1), n)


def _stratified_run(design: Design, positions: np.ndarray, labels: np.ndarray, method: str) -> Run:
    batch = estimate_batch(design, positions, labels[positions], method)
    low, high = batch.interval(LEVEL)
    return Run(batch.value, low, high, np.full(positions.shape[0], positions.shape[1]), design, positions)


def shown_saving(design: Design, positions: np.ndarray, labels: np.ndarray, method: str) -> np.ndarray:
    """(R,) the live saving the dashboard shows after these grades (core.stats.savings through
    core.stats.estimate.estimate_batch); NaN where it is withheld."""
    return estimate_batch(design, positions, labels[positions], method).saving.share


def _mean_se(values: np.ndarray) -> tuple[float | None, float | None]:
    """Mean and its Monte Carlo standard error over the finite values; (None, None) where there is none."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None, None
    se = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else None
    return float(values.mean()), se


def _figures(prefix: str, values: np.ndarray) -> dict:
    mean, se = _mean_se(values)
    return {prefix: mean, f"{prefix}_se": se}


@dataclass(frozen=True)
class _Pool:
    """The replications every method reads: the pool's ``labels``, each replication's random order of it
    (``original``, (R, N)), the items its grader skips (``skipped``, see skip_mask, drawn at ``skip_rates``
    (skip_wrong, skip_right) from ``seed``) and the order with them behind (``orders``, see skipped_last); the
    project's design ``app``, the paper's entropy strata ``paper``, one stratum ``one``; the queue's positions
    (``queue``, (R, n) at the largest budget, None when activegrade is not run) and the baselines' ``rng``."""

    labels: np.ndarray
    original: np.ndarray
    skipped: np.ndarray
    orders: np.ndarray
    app: Design
    paper: Design
    one: Design
    queue: np.ndarray | None
    rng: np.random.Generator
    seed: int
    skip_rates: tuple[float, float]

    @classmethod
    def of(
        cls,
        items: pd.DataFrame,
        labels: np.ndarray,
        design: Design | None,
        regime: str,
        n_strata: int,
        queue_size: int | None,
        *,
        reps: int,
        seed: int,
        skips: tuple[float, float],
    ) -> _Pool:
        """``reps`` replications of ``items`` (labels ``labels``) from ``seed``, graders skipping at ``skips``
        (skip_wrong, skip_right); the project's design ``design`` (default: prepared_design for ``regime``), the
        paper's in ``n_strata`` entropy strata; the queue replayed to ``queue_size`` grades when given."""
        n_items = labels.size
        skipped = skip_mask(labels, *skips, reps, seed)
        original = replication_orders(n_items, seed, reps)
        orders = skipped_last(original, skipped)
        rng = np.random.default_rng([seed, 1])
        app = prepared_design(items, regime) if design is None else design
        paper = design_from_items(items, stratify_by="entropy", n_strata=n_strata, proxy_column="agreement")
        one = make_design(np.zeros(n_items, dtype=np.int64), items["agreement"].to_numpy(dtype=float))
        queue = replay_queue(app, labels, orders, queue_size) if queue_size else None
        return cls(labels, original, skipped, orders, app, paper, one, queue, rng, seed, skips)

    @property
    def mu(self) -> float:
        """The pool's true mean grade."""
        return float(self.labels.mean())

    @property
    def s2(self) -> float:
        """The labels' variance S^2 (divisor N - 1; 0 for a pool of one item)."""
        return float(self.labels.var(ddof=1)) if self.labels.size > 1 else 0.0

    def true_sd(self, d: Design) -> np.ndarray:
        """(H,) the labels' standard deviation in each stratum of ``d`` (0 in a stratum of one item)."""
        return stratum_sd(d, self.labels)

    def static(self, d: Design, alloc: np.ndarray) -> Run:
        """A static allocation ``alloc`` of design ``d``, graded in each replication's order."""
        return _stratified_run(
            d, in_order(static_sample(d, alloc, self.orders), self.orders), self.labels, "stratified"
        )

    def run(self, method: str, n: int) -> Run:
        """Method ``method`` (METHODS) at ``n`` grades, over every replication."""
        app, paper, labels, reps = self.app, self.paper, self.labels, self.orders.shape[0]
        if method == "uniform":
            return _stratified_run(self.one, self.orders[:, :n], labels, "stratified")
        if method == "proportional":
            return self.static(app, proportional_allocation(app.sizes, n, app.floor))
        if method == "neyman_paper":
            return self.static(paper, neyman_allocation(paper.sizes, paper.prior_sd, n, paper.floor))
        if method == "neyman_oracle":
            return self.static(paper, neyman_allocation(paper.sizes, self.true_sd(paper), n, paper.floor))
        if method == "app_oracle":
            return self.static(app, neyman_allocation(app.sizes, self.true_sd(app), n, app.floor))
        if method == "lure":
            return _wald(*baselines.lure(labels, app.proxy, n, self.rng, reps))
        if method == "active_inference":
            return _wald(*baselines.active_inference(labels, app.proxy, n, self.rng, reps))
        return _stratified_run(app, self.queue[:, :n], labels, DEFAULT_METHOD)


def _checked_n0(n0: int | None, n_items: int) -> int:
    """The planned budget: ``n0`` as given, else core.stats.design.planned_budget of an unset project;
    InputError unless it is between 1 and the pool's size."""
    n0 = planned_budget(None, n_items) if n0 is None else int(n0)
    if not 1 <= n0 <= n_items:
        raise InputError(
            f"the planned budget n0 = {n0} is not between 1 and the pool's {n_items} items",
            fix=f"give --n0 from 1 to {n_items}",
        )
    return n0


def _check_methods(methods: Sequence[str], reps: int) -> None:
    """InputError for a method not in METHODS, or fewer than 2 replications."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(f"unknown method {unknown[0]!r}", fix=f"use some of {', '.join(METHODS)}")
    if reps < 2:
        raise InputError(
            f"reps must be at least 2, got {reps}", fix="give --reps 2 or more (200 reads a figure to a few %)"
        )


def _every_method(
    pool: _Pool,
    methods: Sequence[str],
    sizes: dict[str, int],
    n0: int,
    progress: Callable[[int, int], None] | None,
) -> dict[str, dict[str, dict]]:
    """{METHOD: {BUDGET: metrics}} (see _metrics), ``progress(done, total)`` told after each method."""
    n_items, mu, s2, labels = pool.labels.size, pool.mu, pool.s2, pool.labels
    top = max(sizes.values())
    results: dict[str, dict[str, dict]] = {}
    for done, method in enumerate(methods, start=1):
        # uniform and the queue grade in one order whatever the budget: one sequence serves every budget
        shared = _sequence(pool.run(method, top), labels, n0, sizes.values()) if method in SEQUENTIAL else None
        results[method] = {
            budget: _metrics(pool.run(method, n), n, n_items, mu, s2, labels, shared, n0, pool.original, pool.skipped)
            for budget, n in sizes.items()
        }
        if progress:
            progress(done, len(methods))
    return results


def _stopping(
    pool: _Pool, target_half_width: float, regime: str, n0: int | None, expected: float | None
) -> dict[str, Any]:
    """The stopping mode's figures (core.stats.simulate_stopping.stopping_figures) for activegrade and uniform;
    ``n0`` the planned budget, None where none was given."""
    labels, reps = pool.labels, pool.orders.shape[0]
    cap = replay_cap(labels, target_half_width)
    designs = {"activegrade": pool.app, "uniform": pool.one}
    # a skipped item goes to a second grader, who skips independently at the same rates; what both skip
    # stays skipped, goes behind its stratum's other items, and bounds the interval the rule reads
    lost = pool.skipped & skip_mask(labels, *pool.skip_rates, reps, pool.seed, grader=1)
    kept = skipped_last(pool.original, lost)
    replays = {"activegrade": replay_queue(pool.app, labels, kept, cap), "uniform": kept[:, :cap]}
    met = {m: skips_met(designs[m], pool.original, lost, r) for m, r in replays.items()} if lost.any() else None
    return stopping_figures(designs, replays, labels, target_half_width, regime, n0, expected, skipped=met)


def simulate(
    items: pd.DataFrame,
    budgets: Sequence[str | float] = DEFAULT_BUDGETS,
    *,
    reps: int = 1000,
    seed: int = 0,
    methods: Sequence[str] = METHODS,
    n_strata: int = 5,
    n0: int | None = None,
    skip_wrong: float = 0.0,
    skip_right: float = 0.0,
    design: Design | None = None,
    regime: str = DEFAULT_REGIME,
    target_half_width: float | None = None,
    planned: int | None = None,
    expected: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Run every method at every budget (``progress(done, total)`` told after each method); returns {"N", "mu", "n0", "kappa", "notes", "methods": {METHOD: {BUDGET: metrics}}}.

    `items` is core.surrogate.prepare.prepare_items's table with a `label` column; its
    `stratum` column is the prepared stratification, which the project's design
    (`design`, default `core.stats.design.prepared_design(items)`) and proportional
    use; kappa is the design's allocation term (`core.stats.allocation.allocation_kappa`: 0 for a budget
    fixed in advance). n0: the budget the fixed budgets' confidence sequences are tuned for (default:
    `core.stats.design.planned_budget` of an unset project). planned: the project's planned budget, for the
    stopping mode (None: each method tunes its own, as a project without one does, core.stats.forecast.tuned_n0;
    the Simulate page and the command line read the same rule so). skip_wrong,
    skip_right: see `skip_mask`. regime: the project's stopping regime (core.stats.stopping; the design's
    allocation follows it unless ``design`` is given). target_half_width: the stopping mode
    (core.stats.simulate_stopping): the result gains a ``stopping`` object; expected: the score the manager
    expects, for its forecast (None: the surrogate's).
    """
    _check_methods(methods, reps)
    labels = labels_of(items)
    check_regime(regime)
    if expected is not None and not 0 < expected < 1:
        raise InputError(
            f"the expected score {expected:g} is not between 0 and 1",
            fix="give --expected as the mean grade you expect, between 0 and 1 (exclusive)",
        )
    sizes = budget_sizes(budgets, labels.size)
    budgets_n0 = _checked_n0(n0, labels.size)  # the fixed budgets' (default: an unset project's)
    queue_size = max(sizes.values()) if "activegrade" in methods else None
    pool = _Pool.of(
        items, labels, design, regime, n_strata, queue_size, reps=reps, seed=seed, skips=(skip_wrong, skip_right)
    )
    if planned is not None:
        planned = _checked_n0(planned, labels.size)
        if target_half_width is not None and regime == FIXED and planned < pool.app.H:
            raise InputError(
                f"the budget n0 = {planned} is below the design's {pool.app.H} strata, each of which needs a grade "
                "before there is an estimate",
                fix=f"give --n0 of at least {pool.app.H}",
            )
    result = {
        "N": labels.size,
        "mu": pool.mu,
        "proxy": proxy_name(items),
        "n0": budgets_n0,
        "kappa": pool.app.kappa,
        "regime": regime,
        "notes": {m: METHOD_NOTES[m] for m in methods},
        "methods": _every_method(pool, methods, sizes, budgets_n0, progress),
    }
    if target_half_width is not None:
        result["stopping"] = _stopping(pool, target_half_width, regime, planned, expected)
    return result


def _sequence(r: Run, labels: np.ndarray, n0: int, budgets) -> SequenceBatch:
    """The run's confidence sequences over its graded positions, coverage checked against the true stratum means."""
    truth = np.array([labels[r.design.stratum == h].mean() for h in range(r.design.H)])
    steps = checkpoints(r.positions.shape[1], budgets)
    return sequence_batch(r.design, r.positions, labels[r.positions], n0, 1 - LEVEL, steps=steps, truth=truth)


def _metrics(r: Run, n: int, N: int, mu: float, s2: float, labels, shared, n0, original, skipped) -> dict:  # noqa: N803
    """The figures of one method at one budget, each with its Monte Carlo standard error."""
    reps = r.value.size
    err2 = (r.value - mu) ** 2
    mse, mse_se = float(err2.mean()), float(err2.std(ddof=1) / np.sqrt(reps))
    n_mean = float(r.n.mean())
    uniform_mse = (1 - n_mean / N) * s2 / n_mean
    m = s2 / (mse + s2 / N) if s2 > 0 else float("nan")  # equal grades: any sample's MSE is 0, no saving to read
    row = {
        "n": n_mean,
        "mse": mse,
        "mse_se": mse_se,
        "mse_ratio": mse / uniform_mse if uniform_mse > 0 else float("nan"),
        "mse_ratio_se": mse_se / uniform_mse if uniform_mse > 0 else float("nan"),
        **_figures("bias", r.value - mu),
        **_figures("coverage", ((r.low <= mu) & (mu <= r.high)).astype(float)),
        **_figures("ci_width", r.high - r.low),
        "budget_saving": 1 - n_mean / m,
        "budget_saving_se": n_mean * mse_se / s2 if s2 > 0 else float("nan"),
    }
    if r.design is None:
        return row | {f"{name}{se}": None for name in DESIGN_FIGURES for se in ("", "_se")}
    cs = shared if shared is not None else _sequence(r, labels, n0, [n])
    low, high = cs.at(n)
    saving = shown_saving(r.design, r.positions, labels, DEFAULT_METHOD)
    return row | {
        **_figures("coverage_anytime", cs.covered[:, n - 1].astype(float)),
        **_figures("ci_width_anytime", high - low),
        **_figures("saving_shown", saving),
        **_figures("saving_withheld", np.isnan(saving).astype(float)),
        **_figures("skips", skips_on_the_way(r.design, original, skipped, r.positions)),
    }


def figure_cell(value, se, fmt: str) -> str:
    """A figure ± its s.e.; "-" where there is none (None or NaN: a pool whose every grade is equal has no MSE
    ratio, and printed "nan±nan")."""
    if value is None or value != value:
        return "-"
    return f"{value:{fmt}}" + ("" if se is None or se != se else f"±{se:{fmt.lstrip('+')}}")


def format_table(result: dict) -> str:
    """The simulation as a plain-text table, one row per method and budget, figures ± Monte Carlo s.e."""
    header = (
        f"{'method':<17} {'budget':>7} {'n':>7} {'MSE ratio':>13} {'bias':>15} {'cover':>13} {'width':>6} "
        f"{'saving':>7} {'anytime':>13} {'width':>6} {'shown':>6} {'skips':>6}"
    )
    lines = [
        f"N = {result['N']}, mu = {result['mu']:.4f}, design proxy: {result.get('proxy', 'agreement')}, "
        f"fixed budgets' n0 = {result['n0']}",
        header,
    ]
    for method, by_budget in result["methods"].items():
        for budget, row in by_budget.items():
            lines.append(
                f"{method:<17} {budget:>7} {row['n']:>7.1f} {figure_cell(row['mse_ratio'], row['mse_ratio_se'], '.3f'):>13} "
                f"{figure_cell(row['bias'], row['bias_se'], '+.4f'):>15} {figure_cell(row['coverage'], row['coverage_se'], '.3f'):>13} "
                f"{row['ci_width']:>6.3f} {figure_cell(row['budget_saving'], None, '+.1%'):>7} "
                f"{figure_cell(row['coverage_anytime'], row['coverage_anytime_se'], '.3f'):>13} "
                f"{figure_cell(row['ci_width_anytime'], None, '.3f'):>6} {figure_cell(row['saving_shown'], None, '+.0%'):>6} "
                f"{figure_cell(row['skips'], None, '.1f'):>6}"
            )
    lines += [f"{m}: {note}" for m, note in result["notes"].items() if m in ORACLES]
    return "\n".join(lines + _stopping_lines(result.get("stopping")))


def _stopping_lines(stop: dict | None) -> list[str]:
    """The stopping mode's figures (core.stats.simulate_stopping) as text, under the table; none without it."""
    if not stop:
        return []
    lines = [
        f"Stopping at ±{stop['target_half_width']:g} ({stop['regime']}); uniform's fixed-n size "
        f"{stop['uniform_fixed_n']} (Wald) / {stop['uniform_fixed_n_wilson']} (Wilson)",
        f"{'method':<17} {'n0':>6} {'stop median':>15} {'ideal':>6} {'coverage':>13} {'bias':>15} {'forecast':>13} "
        f"{'hit':>5}",
    ]
    for method in ("activegrade", "uniform"):
        row = stop[method]
        forecast = f"{row['forecast_low']:.0f}-{row['forecast_high']:.0f}"
        ideal = "–" if row["stop_n_ideal"] is None else str(row["stop_n_ideal"])
        lines.append(
            f"{method:<17} {row['n0']:>6} {figure_cell(row['stop_n_median'], row['stop_n_median_se'], '.0f'):>15} {ideal:>6} "
            f"{figure_cell(row['stop_coverage'], row['stop_coverage_se'], '.3f'):>13} "
            f"{figure_cell(row['stop_bias'], row['stop_bias_se'], '+.4f'):>15} {forecast:>13} {row['forecast_hit']:>5.2f}"
        )
    return lines
