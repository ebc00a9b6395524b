"""Agreement between graders, and how several grades of one item enter the estimate.

When a project double-grades a share of its items (core.services.reservations), the
items graded by two or more graders measure how reliable the grading is:

- Cohen's kappa (Cohen 1960), kappa = (p_o - p_e) / (1 - p_e), with p_o the
  observed and p_e the chance agreement from each rater's label frequencies,
  computed by ``sklearn.metrics.cohen_kappa_score``. It is defined for two
  raters; with several graders the two raters are an item's first and second
  grade (the usual convention for double coding). Ordered scales use the
  linearly weighted kappa (Cohen 1968).
- Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability"), alpha = 1 - D_o / D_e over every pair of grades of the
  same item, for any number of graders and missing grades, computed by the
  ``krippendorff`` package at the scale's level of measurement.

The rule for an item's final grade (``final_grades``, the one place it is decided): the grade a
reviewer set (core.services.review) where there is one, otherwise the mean of the item's active
grades. Each item enters the estimate once, with its final grade. The estimand is
then the pool's mean final grade: the reviewed grade where a reviewer settled the item, the mean
grader's grade elsewhere. Averaging two grades only lowers the item's rater noise, so the stratified
estimator stays unbiased for the mean grader's grade and its variance estimate (which treats the final
grade as the item's one value) stays valid; core.stats.validation corrects it towards the reviewed
grade on a random reviewed sample. ``FinalGrades`` keeps the same rule grade by grade, to the bit, for the
reader that follows a live project (core.store.grade_cache: core.store.Store.graded_positions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import krippendorff
import numpy as np
import pandas as pd


def summary(result: Agreement) -> str:
    """One line for the app, e.g. "12 items graded twice: same grade 83%, Cohen's kappa 0.61,
    Krippendorff's alpha 0.62 (nominal)"."""
    if result.items == 0:
        return "No item graded twice yet."
    kappa, alpha = (("n/a" if np.isnan(x) else f"{x:.2f}") for x in (result.kappa, result.alpha))
    return (
        f"{result.items} items graded twice: same grade {result.observed:.0%}, "
        f"Cohen's kappa {kappa}, Krippendorff's alpha {alpha} ({result.level})"
    )


KAPPA_WEIGHTS = {"nominal": None, "ordinal": "linear", "interval": "quadratic", "ratio": "quadratic"}


def final_grades(positions: Iterable[int], values: Iterable[float], reviewed: Mapping[int, float]) -> dict[int, float]:
    """Item position -> final grade: ``reviewed[p]`` where a reviewer set one, else the mean of the item's
    ``values``. ``positions``/``values``: the active grades, one pair per grade, in grading order; the result
    keeps the order of each item's first grade. A reviewed item without any grade is not graded (left out)."""
    p = np.fromiter(positions, dtype=np.int64)
    v = np.fromiter(values, dtype=float)
    if p.size != v.size:
        raise ValueError(f"{p.size} positions but {v.size} grades")
    items, first, index = np.unique(p, return_index=True, return_inverse=True)
    means = np.bincount(index, weights=v, minlength=items.size) / np.bincount(index, minlength=items.size)
    order = np.argsort(first, kind="stable")
    return {int(items[k]): float(reviewed.get(int(items[k]), means[k])) for k in order}


PARTS = ["target", "criterion"]
"""What a grade is of besides its item: a comparison's target, a rubric's criterion ("" where a project has none)."""


def part_keys(grades: pd.DataFrame, criterion: str = "") -> pd.DataFrame:
    """Each grade's PARTS, "" where ``grades`` has no such column, and ``criterion`` for grades without a
    criterion column (the design's grades of a rubric project)."""
    keys = grades.reindex(columns=PARTS, fill_value="")
    if "criterion" not in grades.columns:
        keys["criterion"] = criterion
    return keys


def final_grades_by_part(
    grades: pd.DataFrame, reviews: pd.DataFrame, criterion: str = ""
) -> dict[tuple[str, str], dict[int, float]]:
    """`final_grades` of each (target, criterion) the active ``grades`` are of (columns position, value and
    PARTS where the project has them: `part_keys`), with the ``reviews`` of the same key (columns position,
    PARTS, value): the final grades of every model of a comparison, every criterion of a rubric."""
    settled = {
        tuple(key): dict(zip(rows["position"].astype(int), rows["value"].astype(float)))
        for key, rows in reviews.groupby(PARTS)
    }
    positions, values = grades["position"].to_numpy(dtype=np.int64), grades["value"].to_numpy(dtype=float)
    return {
        tuple(key): final_grades(positions[rows], values[rows], settled.get(tuple(key), {}))
        for key, rows in part_keys(grades, criterion).groupby(PARTS).indices.items()
    }


@dataclass
class FinalGrades:
    """``final_grades`` kept grade by grade: ``add`` each active grade in grading order, ``review`` when the
    reviewed grades change; ``graded`` is then ``final_grades`` of the grades added, to the bit (each item's
    grades summed in grading order from 0.0 and divided by their count, as np.bincount does). ``sums``: position
    -> (sum, count) of the item's grades, in the order of each item's first grade."""

    sums: dict[int, tuple[float, int]] = field(default_factory=dict)
    graded: dict[int, float] = field(default_factory=dict)

    def add(self, position: int, value: float, reviewed: Mapping[int, float]) -> None:
        """The next active grade in grading order, with the reviewed grades ``reviewed`` (position -> grade)."""
        total, count = self.sums.get(position, (0.0, 0))
        self.sums[position] = (total + value, count + 1)
        self.graded[position] = reviewed.get(position, (total + value) / (count + 1))

    def review(self, reviewed: Mapping[int, float]) -> None:
        """The final grades again with the reviewed grades now ``reviewed`` (position -> grade)."""
        self.graded = {p: reviewed.get(p, total / count) for p, (total, count) in self.sums.items()}


def cohen_kappa(first: Iterable[float], second: Iterable[float], level: str = "nominal") -> float:
    """Cohen's kappa of two raters' grades of the same items (weighted for ordered levels).

    NaN when it is undefined: fewer than two items, or both raters always
    giving the one same grade (chance agreement 1).
    """
    a, b = np.asarray(list(first), dtype=float), np.asarray(list(second), dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"{a.size} grades from the first rater but {b.size} from the second")
    if a.size < 2 or np.unique(np.concatenate([a, b])).size < 2:
        return float("nan")
    from sklearn.metrics import cohen_kappa_score  # here: the store reads final_grades, and sklearn loads slowly

    # grades are floats in [0, 1]; sklearn wants discrete labels, so compare them as rounded strings
    return float(
        cohen_kappa_score(
            _labels(a), _labels(b), weights=KAPPA_WEIGHTS[level], labels=_labels(np.unique(np.concatenate([a, b])))
        )
    )


def _labels(values: np.ndarray) -> np.ndarray:
    # rank-preserving integer codes of the grade values, so weighted kappa sees their order
    return np.round(values * 1_000_000).astype(np.int64)


def krippendorff_alpha(reliability: np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's alpha of a graders x items matrix (NaN for a missing grade).

    NaN when undefined: no item with two grades, or one single value in all grades.
    """
    data = np.asarray(reliability, dtype=float)
    pairable = (np.isfinite(data).sum(axis=0) >= 2) if data.ndim == 2 else np.zeros(0, bool)
    if not pairable.any() or np.unique(data[:, pairable][np.isfinite(data[:, pairable])]).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data[:, pairable], level_of_measurement=level))


@dataclass(frozen=True)
class Agreement:
    """Agreement over the items with at least two active grades."""

    items: int  # items graded by two or more graders
    graders: int  # distinct graders among those grades
    observed: float  # share of items whose first two grades are equal
    kappa: float  # Cohen's kappa, first vs second grade of each item
    alpha: float  # Krippendorff's alpha over all their grades
    level: str


def agreement(grades: pd.DataFrame, level: str = "nominal") -> Agreement:
    """Agreement from active grades as ``Store.grades`` returns them (``position``, ``grader``, ``value``, in order)."""
    multi = grades[grades.groupby("position")["position"].transform("size") >= 2]
    if multi.empty:
        nan = float("nan")
        return Agreement(0, 0, nan, nan, nan, level)
    # one row per grader, one column per item; a grader who graded an item twice keeps the last grade
    matrix = multi.pivot_table(index="grader", columns="position", values="value", aggfunc="last")
    rank = multi.groupby("position").cumcount()
    pairs = multi[rank < 2].assign(rank=rank).pivot(index="position", columns="rank", values="value")
    firsts, seconds = pairs[0].to_numpy(), pairs[1].to_numpy()
    return Agreement(
        items=int(matrix.shape[1]),
        graders=int(matrix.shape[0]),
        observed=float(np.mean(firsts == seconds)),
        kappa=cohen_kappa(firsts, seconds, level),
        alpha=krippendorff_alpha(matrix.to_numpy(), level),
        level=level,
    )
