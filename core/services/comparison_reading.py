"""What a comparison project's grades say so far: each model's estimate, each difference mean(A) - mean(B)
with its interval, win / tie / loss counts, and which differences are resolved.

Read-only (the Dashboard, the CLI and the export read it). An item counts once it is graded for every target
("graded items", docs/compare.md); a response's grade is its final grade, a reviewer's where one settled it,
else its graders' mean. The estimates are
core.stats.compare.difference_batch's stratified ones over the project's strata (the design for the
difference); a model's own mean is the one-target stratified estimate of its grades y in [0, 1]
(core.stats.estimate.estimate_batch), whose interval stays in [0, 1].
Intervals at 1 - 0.05 / P per pair (Bonferroni, P pairs), so all pairs hold together at 95%: the fixed-n
Korn-Graubard one, valid read once at a size chosen before grading, and the anytime-valid one (the stratified
betting confidence sequence of z = (1 + d) / 2 over the items in the order they were graded, core.stats.confseq,
tuned for the project's planned n0), valid however often it is read and whenever grading stops. Which
difference is resolved is read from the anytime-valid interval, since a manager reads the statement while
grading goes on; from the fixed-n one once the budget fixed in advance is graded (the size chosen before
grading) or every item is (no sampling error left). The statement read from the fixed-n interval at every
grade would let a manager who stops at the first "A better" see one where there is none far more often than
5% of the time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.stats.compare import difference_batch, pair_key, pairs, resolved, simultaneous_level
from core.stats.confseq import anytime_interval
from core.stats.estimate import estimate_batch
from core.stats.intervals import LEVEL
from core.stats.rater_agreement import final_grades_by_part
from core.stats.stopping import ANYTIME, FIXED
from core.store import Store


@dataclass(frozen=True)
class PairReading:
    """One difference "A - B": estimate, its standard error, fixed-n and anytime-valid intervals (at the
    simultaneous level), the
    statement the reading's ``decided_by`` interval makes, wins/ties/losses of A."""

    pair: str
    estimate: float
    se: float
    low: float
    high: float
    anytime_low: float
    anytime_high: float
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
    decided_by: str = ANYTIME
    """The interval the statements read (`decided_by`): ANYTIME, or FIXED once the budget fixed in advance or
    every item is graded."""
    model_se: dict[str, float] = field(default_factory=dict)
    """model -> its estimate's standard error (an evaluation engineer had none to carry into other tools)."""

    def table(self) -> pd.DataFrame:
        """The differences as a table (the dashboard's and the export's), each with what it ``says`` in words,
        naming the model (the column "A better" left the reader to map A to a name: a manager's review)."""
        return pd.DataFrame([{**vars(p), "says": pair_words(p)} for p in self.pairs])

    def model_table(self) -> pd.DataFrame:
        """Each model's estimate, standard error and interval as a table (the dashboard's and the report's)."""
        rows = [
            {"model": m, "estimate": e, "se": self.model_se.get(m, float("nan")), "low": lo, "high": hi}
            for m, (e, lo, hi) in self.models.items()
        ]
        return pd.DataFrame(rows, columns=["model", "estimate", "se", "low", "high"])


def graded_matrix(grades: pd.DataFrame, targets: list[str], reviews: pd.DataFrame | None = None) -> pd.DataFrame:
    """Positions graded for every target (rows, in position order) x targets: each response's final grade
    (core.stats.rater_agreement.final_grades: a reviewer's, from ``reviews`` (Store.active_reviews) keyed by its
    target, else the mean of its graders' grades)."""
    reviews = pd.DataFrame(columns=["position", "target", "criterion", "value"]) if reviews is None else reviews
    finals = final_grades_by_part(grades, reviews)
    columns = {target: pd.Series(finals.get((target, ""), {}), dtype=float) for target in targets}
    return pd.DataFrame(columns, columns=targets).dropna().sort_index()


def decided_by(settings: ProjectSettings, graded_items: int, n_items: int) -> str:
    """Which interval says whether a difference is resolved (module docstring): FIXED once the budget fixed in
    advance is graded or every item is, else ANYTIME."""
    budget = settings.budget(n_items)
    return FIXED if graded_items >= n_items or (budget is not None and graded_items >= budget) else ANYTIME


def comparison_reading(store: Store, project_id: int, design: Design) -> ComparisonReading:
    """The comparison's reading from the stored grades (module docstring); ``design`` the project's strata."""
    settings = store.project(project_id).settings
    targets = settings.targets
    grades = store.target_grades(project_id)
    y = graded_matrix(grades, targets, store.active_reviews(project_id))
    positions = y.index.to_numpy(dtype=np.int64)
    graded_order = pd.unique(grades["position"][grades["position"].isin(y.index)]).astype(np.int64)
    level = simultaneous_level(LEVEL, len(pairs(tuple(targets))))
    decides = decided_by(settings, int(positions.size), design.N)

    def estimate(values: np.ndarray, batch: Callable[..., Any], bounds: tuple[float, float]) -> tuple[float, ...]:
        """(estimate, low, high, standard error) of ``values`` by ``batch``; NaN and ``bounds`` before a grade."""
        if positions.size == 0:
            return (float("nan"), *bounds, float("nan"))
        read = batch(design, positions[None, :], values[None, :])
        low, high = read.interval(level)
        value = float(read.value[0])  # NaN while a stratum has no grade: no standard error either
        return value, float(low[0]), float(high[0]), float(np.sqrt(read.variance[0])) if np.isfinite(value) else value

    def anytime(d: pd.Series) -> tuple[float, float]:
        """The anytime-valid interval of d (in [-1, 1]) from that of z = (1 + d) / 2 in [0, 1]."""
        z = ((1.0 + d[graded_order]) / 2.0).to_numpy(dtype=float)
        read = anytime_interval(design, graded_order, z, settings.anytime_n0(design), level)
        return 2.0 * read.low - 1.0, 2.0 * read.high - 1.0

    # a model's grades lie in [0, 1]: the one-target estimate and interval (read as differences in [-1, 1], a
    # model's interval went below 0: 0.223 [-0.384, 0.724], a grader's and manager's review)
    read = {m: estimate(y[m].to_numpy(dtype=float), estimate_batch, (0.0, 1.0)) for m in targets}
    readings = []
    for a, b in pairs(tuple(targets)):
        d = y[a] - y[b]
        value, low, high, se = estimate(d.to_numpy(dtype=float), difference_batch, (-1.0, 1.0))
        any_low, any_high = anytime(d)
        readings.append(
            PairReading(
                pair_key(a, b),
                value,
                se,
                low,
                high,
                any_low,
                any_high,
                resolved(*((low, high) if decides == FIXED else (any_low, any_high))),
                int((d > 0).sum()),
                int((d == 0).sum()),
                int((d < 0).sum()),
            )
        )
    models = {m: r[:3] for m, r in read.items()}
    model_se = {m: r[3] for m, r in read.items()}
    return ComparisonReading(int(positions.size), level, models, readings, decides, model_se)


DECIDED_WORDS = {
    ANYTIME: "read from the anytime-valid intervals, which hold however often they are read: a difference they "
    "resolve stays resolved whenever grading stops",
    FIXED: "read from the fixed-n intervals, valid at the size chosen before grading",
}
"""How the statement was read, by the reading's ``decided_by``."""


def pair_words(pair: PairReading) -> str:
    """What one difference says, naming the model: "alpha better", "beta better" or "not resolved yet"."""
    a, b = pair.pair.split(" - ", 1)
    return {"A better": f"{a} better", "B better": f"{b} better"}.get(pair.statement, "not resolved yet")


def statement(reading: ComparisonReading) -> str:
    """The plain statement of which differences are resolved, e.g. "alpha - beta: alpha better; ..."."""
    return "; ".join(f"{p.pair}: {pair_words(p)}" for p in reading.pairs) or "no pair"
