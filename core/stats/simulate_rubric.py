"""Replay grading of a rubric (several criteria graded on one card) and compare what the queue allocates for.

Pools (`rubric_pool`): N items with K criteria from a Gaussian copula. Item i has latent scores
z_ik = sqrt(r) F_i + sqrt(1 - r) e_ik (F, e independent standard normals: every pair of latents correlates at
r), and each criterion's grade cuts its latent at the standard normal quantiles of its levels' probabilities
(`PoolCriterion`). The surrogate predicts the first criterion only, s_i = c z_i1 + sqrt(1 - c^2) u_i, and its
5 samples agree with the target on a_i = min(floor(6 Phi(s_i)), 5) / 5 of them (the other criteria relate to
the surrogate through their correlation with the first); entropy and 5 strata as
core.stats.simulate.surrogate_items makes them. r is set by bisection so that the grades' mean pairwise
Pearson correlation is the one asked for (the cut grades correlate less than their latents).

Replications (`rubric_runs`, the same random orders as core.stats.simulate): the project's design
(core.stats.design.prepared_design), the queue (`replay_rubric_queue`: core.stats.queue.queue_stratum at
every step, as core.stats.queue.next_item draws) and the estimator (core.stats.estimate.estimate_batch) of
each criterion, under three allocations:

- ``all``: the queue allocates for every criterion together (core.rubric.ALL: the compromise of
  core.stats.allocation.compromise_spreads);
- ``primary``: for the first criterion alone (core.rubric.PRIMARY), every criterion read from that sample;
- ``alone``: for criterion k alone, criterion k read from it (the best the queue does for k).

Uniform sampling's MSE is exact, (1 - n/N) S_k^2 / n (Cochran 1977, theorem 2.2), as in core.stats.simulate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core.stats.allocation import Design
from core.stats.design import prepared_design
from core.stats.estimate import estimate_batch
from core.stats.intervals import LEVEL
from core.stats.queue import queue_stratum
from core.stats.simulate import _by_stratum, _mean_se, replication_orders, surrogate_items
from core.stats.stopping import DEFAULT_REGIME

ALLOCATIONS = ("all", "primary", "alone")


@dataclass(frozen=True)
class PoolCriterion:
    """A generated criterion: its name, its grades' values on [0, 1] and each value's probability."""

    name: str
    values: tuple[float, ...]
    probabilities: tuple[float, ...]

    def grades(self, latent: np.ndarray) -> np.ndarray:
        """The grades of standard normal ``latent`` scores: value j where the latent lies between the normal
        quantiles of the cumulated probabilities before and at j."""
        cuts = stats.norm.ppf(np.cumsum(self.probabilities)[:-1])
        return np.asarray(self.values)[np.searchsorted(cuts, latent)]


CRITERIA = (
    PoolCriterion("correct", (0.0, 1.0), (0.3, 0.7)),
    PoolCriterion("helpful", (0.0, 0.25, 0.5, 0.75, 1.0), (0.1, 0.15, 0.25, 0.3, 0.2)),
    PoolCriterion("safe", (0.0, 0.5, 1.0), (0.05, 0.15, 0.8)),
)
"""The benchmark's rubric: binary correctness, a 5-level Likert helpfulness, a 3-level safety mostly safe."""


@dataclass(frozen=True)
class RubricPool:
    """A generated rubric pool: the items table (its ``label`` the first criterion's grades), every criterion's
    grades (K, N), the criteria's names and the latent correlation r that gave the asked grade correlation."""

    items: pd.DataFrame
    labels: np.ndarray
    names: tuple[str, ...]
    latent: float

    @property
    def correlation(self) -> np.ndarray:
        """(K, K) the grades' Pearson correlations."""
        return np.corrcoef(self.labels)


def mean_correlation(labels: np.ndarray) -> float:
    """The mean over pairs of criteria of their grades' Pearson correlation; labels (K, N)."""
    c = np.corrcoef(labels)
    return float(c[np.triu_indices_from(c, k=1)].mean())


def rubric_pool(
    n_items: int,
    correlation: float,
    *,
    criteria: tuple[PoolCriterion, ...] = CRITERIA,
    surrogate: float = 0.7,
    seed: int = 0,
) -> RubricPool:
    """A pool of ``n_items`` graded on ``criteria`` whose grades' mean pairwise correlation is ``correlation``
    (module docstring; ``surrogate``: c, the surrogate's correlation with the first criterion's latent)."""
    rng = np.random.default_rng(seed)
    common, own = rng.normal(size=n_items), rng.normal(size=(len(criteria), n_items))

    def latent(r: float) -> np.ndarray:
        return np.sqrt(r) * common + np.sqrt(1 - r) * own

    def grades(z: np.ndarray) -> np.ndarray:
        return np.stack([c.grades(z_k) for c, z_k in zip(criteria, z)])

    low, high = 0.0, 1.0
    for _ in range(40):  # bisection: the grades' correlation grows with r
        mid = (low + high) / 2
        low, high = (mid, high) if mean_correlation(grades(latent(mid))) < correlation else (low, mid)
    r = (low + high) / 2
    z = latent(r)
    labels = grades(z)
    score = surrogate * z[0] + np.sqrt(1 - surrogate**2) * rng.normal(size=n_items)
    agreement = np.minimum(np.floor(6 * stats.norm.cdf(score)), 5) / 5
    items = surrogate_items(labels[0], agreement, rng)
    return RubricPool(items, labels, tuple(c.name for c in criteria), r)


def replay_rubric_queue(design: Design, labels: np.ndarray, orders: np.ndarray, n: int) -> np.ndarray:
    """(R, n) positions in the order core.stats.queue.next_item hands them out when the queue allocates for
    every criterion of ``labels`` (K, N), the first the design criterion, every item graded on all of them at
    once; with K = 1 the very order of core.stats.simulate.replay_queue. Per step the app's step,
    core.stats.queue.queue_stratum, on all R replications, each criterion's per-stratum and pooled sums kept up
    to date here; then the stratum's first free item in the replication's order."""
    labels = np.atleast_2d(labels)
    reps = orders.shape[0]
    grouped, offsets = _by_stratum(design, orders)
    counts = np.zeros((reps, design.H))
    sums = np.zeros((labels.shape[0], reps, design.H))
    sumsq = np.zeros_like(sums)
    pooled = np.zeros((labels.shape[0], 6, reps))  # per criterion: core.stats.spreads.pooled_sums
    d_all = design.proxy - design.proxy.mean()
    rows = np.arange(reps)
    positions = np.empty((reps, n), dtype=np.int64)
    for step in range(n):
        first, *others = [((counts, s, q), tuple(p)) for s, q, p in zip(sums, sumsq, pooled)]
        h = queue_stratum(design, counts, *first, others)
        pos = grouped[rows, offsets[h] + counts[rows, h].astype(np.int64)]
        positions[:, step] = pos
        y, d = labels[:, pos], d_all[pos]
        counts[rows, h] += 1
        sums[:, rows, h] += y
        sumsq[:, rows, h] += y * y
        pooled[:, 0] += 1
        pooled[:, 1:] += np.stack([np.broadcast_to(d, y.shape), np.broadcast_to(d * d, y.shape), y, d * y, y * y], 1)
    return positions


def _ratio(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """mean(a) / mean(b) and its delta-method s.e. for paired replications, sqrt(var(a - R b) / reps) / mean(b)
    (the ratio estimator's variance, Cochran 1977, eq. 6.9)."""
    ratio = a.mean() / b.mean()
    return float(ratio), float((a - ratio * b).std(ddof=1) / np.sqrt(a.size) / b.mean())


def rubric_runs(
    pool: RubricPool, budgets: tuple[int, ...], *, reps: int, seed: int = 0, regime: str = DEFAULT_REGIME
) -> dict[str, dict[int, dict[str, float]]]:
    """{criterion: {n: figures}} over ``reps`` replications, each figure with its Monte Carlo s.e. (FIGURE_se):
    coverage (the ``all`` allocation's nominal 95% fixed-n interval covering the criterion's true mean),
    all_vs_alone and primary_vs_alone (MSE over the ``alone`` allocation's, paired replications),
    all_vs_uniform and alone_vs_uniform (MSE over uniform's exact MSE)."""
    design = prepared_design(pool.items, regime)
    orders = replication_orders(design.N, seed, reps)
    top = max(budgets)
    alone = [replay_rubric_queue(design, labels, orders, top) for labels in pool.labels]
    together = replay_rubric_queue(design, pool.labels, orders, top) if len(alone) > 1 else alone[0]
    result: dict[str, dict[int, dict[str, float]]] = {}
    for k, (name, labels) in enumerate(zip(pool.names, pool.labels)):
        mu, s2 = labels.mean(), labels.var(ddof=1)
        samples = dict(zip(ALLOCATIONS, (together, alone[0], alone[k])))
        result[name] = {}
        for n in budgets:
            batches = {a: estimate_batch(design, p[:, :n], labels[p[:, :n]]) for a, p in samples.items()}
            err2 = {a: (b.value - mu) ** 2 for a, b in batches.items()}
            low, high = batches["all"].interval(LEVEL)
            uniform = (1 - n / design.N) * s2 / n
            figures = {
                "coverage": _mean_se(((low <= mu) & (mu <= high)).astype(float)),
                "all_vs_alone": _ratio(err2["all"], err2["alone"]),
                "primary_vs_alone": _ratio(err2["primary"], err2["alone"]),
                "all_vs_uniform": _mean_se(err2["all"] / uniform),
                "alone_vs_uniform": _mean_se(err2["alone"] / uniform),
            }
            result[name][n] = {
                f"{key}{suffix}": v for key, pair in figures.items() for suffix, v in zip(("", "_se"), pair)
            }
    return result
