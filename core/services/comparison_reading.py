"""What a comparison project's grades say so far: each model's estimate, each difference mean(A) - mean(B)
with its interval, win / tie / loss counts, and which differences are resolved.

Read-only (the Dashboard, the CLI and the export read it). An item counts once it is graded for every target
("graded items", docs/compare.md); a response's grade is its final grade, a reviewer's where one settled it,
else its graders' mean. The estimates are
core.stats.compare.difference_batch's stratified ones over the project's strata (the design for the
difference); a model's own mean is the one-target stratified estimate of its grades y in [0, 1]
(core.stats.estimate.estimate_batch), whose interval stays in [0, 1].
Intervals are the fixed-n Korn-Graubard ones at 1 - 0.05 / P per pair (Bonferroni, P pairs), so all pairs
hold together at 95%.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.stats.allocation import Design
from core.stats.compare import difference_batch, pair_key, pairs, resolved, simultaneous_level
from core.stats.estimate import estimate_batch
from core.stats.intervals import LEVEL
from core.stats.rater_agreement import final_grades_by_part
from core.store import Store


@dataclass(frozen=True)
class PairReading:
    """One difference "A - B": estimate, interval (at the simultaneous level), statement, wins/ties/losses of A."""

    pair: str
    estimate: float
    low: float
    high: float
    statement: str
    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class ComparisonReading:
    graded_items: int
    level: float
    """The per-pair level of the intervals (core.stats.compare.simultaneous_level)."""
    models: dict[str, tuple[float, float, float]]
    """model -> (estimate, low, high), each interval at `level`."""
    pairs: list[PairReading]

    def table(self) -> pd.DataFrame:
        """The differences as a table (the dashboard's and the export's)."""
        return pd.DataFrame([vars(p) for p in self.pairs])


def graded_matrix(grades: pd.DataFrame, targets: list[str], reviews: pd.DataFrame | None = None) -> pd.DataFrame:
    """Positions graded for every target (rows, in position order) x targets: each response's final grade
    (core.stats.rater_agreement.final_grades: a reviewer's, from ``reviews`` (Store.active_reviews) keyed by its
    target, else the mean of its graders' grades)."""
    reviews = pd.DataFrame(columns=["position", "target", "criterion", "value"]) if reviews is None else reviews
    finals = final_grades_by_part(grades, reviews)
    columns = {target: pd.Series(finals.get((target, ""), {}), dtype=float) for target in targets}
    return pd.DataFrame(columns, columns=targets).dropna().sort_index()


def comparison_reading(store: Store, project_id: int, design: Design) -> ComparisonReading:
    """The comparison's reading from the stored grades (module docstring); ``design`` the project's strata."""
    targets = store.project(project_id).settings.targets
    y = graded_matrix(store.target_grades(project_id), targets, store.active_reviews(project_id))
    positions = y.index.to_numpy(dtype=np.int64)
    level = simultaneous_level(LEVEL, len(pairs(tuple(targets))))

    def estimate(values: np.ndarray, batch: Callable[..., Any], bounds: tuple[float, float]) -> tuple[float, ...]:
        if positions.size == 0:
            return (float("nan"), *bounds)
        read = batch(design, positions[None, :], values[None, :])
        low, high = read.interval(level)
        return float(read.value[0]), float(low[0]), float(high[0])

    # a model's grades lie in [0, 1]: the one-target estimate and interval (read as differences in [-1, 1], a
    # model's interval went below 0: 0.223 [-0.384, 0.724], a grader's and manager's review)
    models = {m: estimate(y[m].to_numpy(dtype=float), estimate_batch, (0.0, 1.0)) for m in targets}
    readings = []
    for a, b in pairs(tuple(targets)):
        d = (y[a] - y[b]).to_numpy(dtype=float)
        value, low, high = estimate(d, difference_batch, (-1.0, 1.0))
        readings.append(
            PairReading(
                pair_key(a, b),
                value,
                low,
                high,
                resolved(low, high),
                int((d > 0).sum()),
                int((d == 0).sum()),
                int((d < 0).sum()),
            )
        )
    return ComparisonReading(int(positions.size), level, models, readings)


def statement(reading: ComparisonReading) -> str:
    """The plain statement of which differences are resolved, e.g. "alpha - beta: alpha better; ..."."""
    parts = []
    for p in reading.pairs:
        a, b = p.pair.split(" - ", 1)
        said = {"A better": f"{a} better", "B better": f"{b} better"}.get(p.statement, "not resolved yet")
        parts.append(f"{p.pair}: {said}")
    return "; ".join(parts) if parts else "no pair"
