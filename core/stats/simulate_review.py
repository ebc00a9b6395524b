"""Replay grading with graders who err and a reviewer who settles disagreements, and compare the estimators.

Each of R replications grades n items of a labelled pool, drawn by the design's planned allocation
(core.stats.allocation.planned_allocation: the queue's plan before any grade, so the sample does not
depend on the noisy grades) in the replication's random order. Every grade is the item's label flipped
(binary: 1 - y; other grades: a uniform draw from [0, 1]) independently with probability ``flip``; a random
``overlap`` share of the pool (the app's double-graded share, core.services.reservations) gets a second
grade, and every double-graded item whose two grades differ is settled by a reviewer who gives its label.
Three estimates per replication, all with the stratified design:

- ``mean of two``: today's rule before review, an item enters with the mean of its grades
  (core.stats.estimate, Korn-Graubard interval);
- ``reviewed where exists``: the final grades of core.stats.rater_agreement.final_grades (the
  reviewed grade, else the mean), the same estimator;
- ``validated``: core.stats.validation, first grades corrected on the random double-graded sample.

Figures per estimator: bias against the pool's true mean mu (its share of mu, with the Monte Carlo s.e.),
coverage of mu by the nominal 95% interval, the interval's mean width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.stats.allocation import Design, planned_allocation
from core.stats.estimate import estimate_batch
from core.stats.rater_agreement import final_grades
from core.stats.simulate import replication_orders, static_sample
from core.stats.validation import validated_batch

ESTIMATORS = ("mean of two", "reviewed where exists", "validated")


@dataclass(frozen=True)
class ReviewRuns:
    """Each estimator's (R,) estimates and interval bounds."""

    mu: float
    estimates: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def noisy(labels: np.ndarray, flip: float, rng: np.random.Generator) -> np.ndarray:
    """A grader's grades of items whose true grades are ``labels``: each wrong with probability ``flip``
    (binary grades flipped, others replaced by a uniform draw)."""
    wrong = rng.random(labels.shape) < flip
    binary = np.isin(labels, (0.0, 1.0))
    other = np.where(binary, 1.0 - labels, rng.random(labels.shape))
    return np.where(wrong, other, labels)


def review_runs(
    design: Design, labels: np.ndarray, n: int, *, reps: int, flip: float, overlap: float, seed: int = 0
) -> ReviewRuns:
    """The module's replications on one pool at one budget."""
    rng = np.random.default_rng(seed)
    positions = static_sample(design, planned_allocation(design, n), replication_orders(design.N, seed, reps))
    truth = labels[positions]
    first, second = noisy(truth, flip, rng), noisy(truth, flip, rng)
    double = np.stack([np.isin(row, rng.permutation(design.N)[: round(overlap * design.N)]) for row in positions])
    disagree = double & (first != second)
    mean_two = np.where(double, (first + second) / 2, first)
    final = np.empty_like(first)
    for r in range(reps):  # the one rule for an item's final grade, as the app applies it
        d = np.flatnonzero(double[r])
        rows = np.concatenate([positions[r], positions[r, d]])
        values = np.concatenate([first[r], second[r, d]])
        reviewed = {int(positions[r, i]): float(truth[r, i]) for i in np.flatnonzero(disagree[r])}
        grades = final_grades(rows, values, reviewed)
        final[r] = [grades[int(p)] for p in positions[r]]
    estimates = {}
    for name, values in (("mean of two", mean_two), ("reviewed where exists", final)):
        batch = estimate_batch(design, positions, values)
        estimates[name] = (batch.value, *batch.interval())
    corrected = validated_batch(design, positions, first, double, final)
    estimates["validated"] = (corrected.value, *corrected.interval())
    return ReviewRuns(float(labels.mean()), estimates)


def figures(runs: ReviewRuns) -> dict[str, dict[str, float]]:
    """Per estimator: bias, bias_share (of mu), bias_share_se, coverage, coverage_se, width, and the share of
    replications without an estimate (``missing``)."""
    result = {}
    for name, (value, low, high) in runs.estimates.items():
        ok = np.isfinite(value)
        error = value[ok] - runs.mu
        covered = ((low <= runs.mu) & (runs.mu <= high)).astype(float)
        result[name] = {
            "bias": float(error.mean()),
            "bias_share": float(error.mean() / runs.mu),
            "bias_share_se": float(error.std(ddof=1) / np.sqrt(error.size) / runs.mu),
            "coverage": float(covered.mean()),
            "coverage_se": float(covered.std(ddof=1) / np.sqrt(covered.size)),
            "width": float((high - low)[ok].mean()),
            "missing": float(1 - ok.mean()),
        }
    return result
