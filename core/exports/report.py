"""Exports: the grades as CSV and JSONL, and a report (JSON, Markdown; HTML in core.exports.report_html) that lets
anyone check and reproduce the run.

The grades export carries each item's stratum h, the stratum's size N_h, its
weight W_h = N_h / N and the item's inclusion probability pi_h = n_h / N_h
(n_h: distinct graded items of stratum h), so that RECOMPUTE_FORMULA gives
the stratified estimate and its variance from that file alone. The report's
time stamp is the last grade's time (the data's own), never the clock: the
same grades give the same bytes, so a download link does not change on a rerun.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.inputs.io import spreadsheet_safe
from core.inputs.markup import one_line_plain
from core.rubric import Rubric
from core.services.criteria_reading import (
    CriterionReading,
    criteria_agreement,
    design_criterion_words,
    mean_grade_words,
)
from core.services.progress import (
    counted,
    counts,
    grader_pace,
    level_percent,
    waiting_for_review,
    with_working_time,
    without_grades,
)
from core.services.reading import (
    Interval,
    Reading,
    grades_words,
    interval_when,
    read_project,
    reported_estimate,
    reported_from,
    reported_level,
    saving_words,
    stopping_words,
)
from core.services.side_by_side import side_name
from core.services.tracking import estimate_path
from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.stats.confseq import AnytimeInterval, anytime_interval
from core.stats.estimate import Estimate, estimate
from core.stats.rater_agreement import agreement, final_grades, final_grades_by_part, part_keys
from core.stats.skips import SkipBound
from core.stats.stopping import ANYTIME, FIXED
from core.stats.validation import Validated
from core.store import ProjectInfo, json_safe
from core.store.store import REVIEW_KEY_COLUMNS
from core.version import version

TARGET_COLUMNS = ["target", "side"]
"""A comparison's export columns after ``item``: the model whose response the grade is of (grades.target) and
the side of the card it was on, by the name the grader saw (grades.side, core.services.side_by_side.side_name;
empty for a grade given on no side-by-side card)."""
CRITERION_COLUMN = "criterion"
"""A rubric's export column after ``item``: the criterion the grade answers (grades.criterion)."""
EXPORT_COLUMNS = [
    "item",
    "position",
    "stratum",
    "stratum_size",
    "weight",
    "inclusion_probability",
    "grade",
    "label",
    "grader",
    "time",
    "seconds",
    "comment",
    "final_grade",
    "reviewed",
]
"""The grades export's columns: ``final_grade`` is the grade its item enters the estimate with, the same on every
grade of the item (`item_final_grades`); ``reviewed`` whether a reviewer set it."""

RECOMPUTE_FORMULA = """\
From the grades export alone (the stratified estimator, docs/method.md, section 'Estimators'; Cochran 1977, eq. 5.7):

1. Each graded item enters once, with its final grade (column final_grade: the grade a reviewer set where one
   did, column reviewed; else the mean of its graders' grades): y_i.
2. Per stratum h (columns stratum, stratum_size N_h, weight W_h = N_h / N): n_h graded items,
   their mean ybar_h and sample variance s_h^2 (divisor n_h - 1; 0 for one item).
3. Estimate mu = sum_h W_h ybar_h (equivalently (1/N) sum_i y_i / pi_i, pi_i = n_h / N_h the
   inclusion_probability column).
4. Do the strata differ? The one-way F test of equal stratum means, F = [sum_h n_h (ybar_h - ybar)^2 / (H - 1)]
   / [sum_h (n_h - 1) t_h^2 / (n - H)], rejects at 5% (F above its 95% quantile on H - 1 and n - H df;
   t_h^2 = s_h^2, or p_h (1 - p_h) with p_h = (sum_h y_i + 1/2) / (n_h + 1) where the stratum's grades are all
   equal; docs/method.md, section 'Strata read as one until their grades differ').
5. If they differ, each stratum's own spread: s~_h^2 = s_h^2, and where a stratum's grades are all equal
   s~_h^2 = r p (1 - p), p = (sum y_i + 1/2) / (n + 1) over every stratum whose grades all equal that same value
   (one grade is information, not certainty; section 'Fixed-n intervals', all-equal strata), r the share of
   step 7 read over the strata of 2 items or more whose grades are not all equal (1 for 0/1 grades). If not, one pooled
   spread for all: s~^2 = sum_h (n_h - 1) s_h^2 / sum_h (n_h - 1), or p (1 - p) with p = (sum y_i + 1/2) / (n + 1)
   over all grades where they are all equal (or no stratum has 2).
6. Variance V = sum_h W_h^2 (1 - n_h / N_h) s~_h^2 / n_h, se = sqrt(V).
7. Unless every y_i is 0 or 1, V is at least the bounded variance (section 'Fixed-n intervals')
   rho sum_h W_h^2 (1 - n_h / N_h) m_h (1 - m_h) / n_h, with m_h = (sum_h y_i + 1/2) / (n_h + 1) if the strata
   differ (step 5's p for a stratum whose grades are all equal), else the whole sample's m = (sum y_i + 1/2) /
   (n + 1); rho = (sum_h (n_h - 1) s_h^2 + m (1 - m)) /
   (sum_h n_h ybar_h (1 - ybar_h) + m (1 - m)), at most 1, over the strata with 2 items or more.
The interval is Korn-Graubard's: Clopper-Pearson on the effective size mu (1 - mu) / V with df = n - H."""

RECOMPUTE_FILE = "Save the grades export (CSV) as `grades.csv` beside the script, which reads it by that name."
"""Where the recompute script finds the grades (a new user's download was named demo-grades.csv)."""

RECOMPUTE_SCRIPT = """\
import numpy as np, pandas as pd
from scipy import stats
g = pd.read_csv("grades.csv")
items = g.groupby(["stratum", "position"], as_index=False).agg(y=("final_grade", "first"), N=("stratum_size", "first"),
                                                                W=("weight", "first"))
s = items.groupby("stratum").agg(n=("y", "size"), mean=("y", "mean"), s2=("y", "var"), total=("y", "sum"),
                                 N=("N", "first"), W=("W", "first")).fillna({"s2": 0.0})
n, H, y = len(items), len(s), items.y
jeffreys = lambda total, count: (total + 0.5) / (count + 1)  # half a pseudo-grade at each end (steps 4, 5, 7)
m = jeffreys(y.sum(), n)
share = lambda used: min(1.0, (((s.n - 1) * s.s2)[used].sum() + m * (1 - m))  # steps 5 and 7
                         / ((s.n * s["mean"] * (1 - s["mean"]))[used].sum() + m * (1 - m)))
equal = items.groupby("stratum")["y"].agg(lambda v: v.max() - v.min() < 1e-9)
own = jeffreys(s.total, s.n)
t2 = np.where(equal, np.maximum(s.s2, own * (1 - own)), s.s2)  # step 4
within = ((s.n - 1) * t2).sum() / max(n - H, 1)
F = (s.n * (s["mean"] - y.mean()) ** 2).sum() / max(H - 1, 1) / within if within > 0 else 0.0
apart = H > 1 and n > H and stats.f.sf(F, H - 1, n - H) < 0.05
if apart:  # step 5: each stratum's own spread; strata equal on one value share one prior
    agree = s[equal].groupby(s["mean"][equal].round(9))[["total", "n"]].transform("sum")
    p = jeffreys(agree.total, agree.n).reindex(s.index)
    s2 = np.where(equal, share((s.n > 1) & ~equal) * p * (1 - p), s.s2)
else:  # one pooled spread
    df = (s.n - 1).sum()
    floor = m * (1 - m) if df == 0 or y.max() - y.min() < 1e-9 else 0.0
    s2 = max(((s.n - 1) * s.s2).sum() / df if df > 0 else 0.0, floor)
mu = (s.W * s["mean"]).sum()
V = (s.W**2 * (1 - s.n / s.N) * s2 / s.n).sum()  # step 6
if not y.isin([0, 1]).all():  # step 7: finer than 0/1, at least the bounded variance
    smooth = np.where(equal, p, own) if apart else m
    V = max(V, share(s.n > 1) * (s.W**2 * (1 - s.n / s.N) * smooth * (1 - smooth) / s.n).sum())
print(mu, V, np.sqrt(V))"""

ESTIMATORS_TEXT = {
    "stratified": "The estimate weights each stratum's mean grade by its share of the pool",
    "difference": (
        "The estimate (the difference estimator) weights each stratum's mean residual by its share of the "
        "pool: a grade minus its prediction from the surrogate's signals, a within-stratum regression fitted on "
        "the other half of the stratum's grades (cross-fitting), whose known pool means it adds back "
        "(docs/method.md, section 'Estimators'; Sarndal, Swensson and Wretman 1992, ch. 6)"
    ),
}


def method_text(method: str) -> str:
    """How the result was reached, for the estimator ``method`` (core.stats.estimate.METHODS)."""
    return (
        "Stratified sampling by the surrogate's signals: the pool is cut into strata of similar surrogate "
        "doubt, and the queue spends the grades where the predicted spread of grades is largest (approximate "
        f"Neyman allocation, every stratum graded first). {ESTIMATORS_TEXT[method]}; its variance is the "
        "stratified sampling variance with the finite-population correction; the fixed-n interval is "
        "Korn-Graubard's, and the interval valid whenever grading stops is a confidence sequence "
        "(docs/method.md, section 'The confidence sequence'). Savings compare the grades to the stop with what uniform "
        "random sampling needs for the same half-width, read with its usual fixed-n interval and stopped by the "
        "same rule; with a budget fixed in advance, with a uniform sample of the same precision "
        "(docs/method.md, section 'Savings')."
    )


def item_final_grades(
    grades: pd.DataFrame, reviews: pd.DataFrame | None, criterion: str = ""
) -> tuple[np.ndarray, np.ndarray]:
    """(final grade, reviewed) of each grade's item, one pair per row of ``grades``: its key's final grade
    (core.stats.rater_agreement.final_grades_by_part: the grade a reviewer set, ``reviews`` being
    Store.active_reviews, else the mean of the key's active grades, as the estimate reads them), and whether a
    reviewer set it. ``criterion``: the criterion of grades that have no ``criterion`` column (the design's
    grades of a rubric project)."""
    reviews = pd.DataFrame(columns=[*REVIEW_KEY_COLUMNS, "value"]) if reviews is None else reviews
    finals = final_grades_by_part(grades, reviews, criterion)
    settled = {(int(p), t, c) for p, t, c in reviews[REVIEW_KEY_COLUMNS].itertuples(index=False)}
    keys = part_keys(grades, criterion)
    rows = list(zip(grades["position"].astype(int), keys["target"], keys["criterion"]))
    final = np.array([finals[(t, c)][p] for p, t, c in rows], dtype=float)
    return final, np.array([row in settled for row in rows], dtype=bool)


def grades_table(
    grades: pd.DataFrame,
    items: pd.DataFrame,
    design: Design,
    reviews: pd.DataFrame | None = None,
    criterion: str = "",
) -> pd.DataFrame:
    """Active grades with the item's id and its design: EXPORT_COLUMNS, in submission order; a comparison's
    with TARGET_COLUMNS and a rubric's with CRITERION_COLUMN after ``item``. A grade's inclusion probability is
    n_h / N_h, n_h its stratum's distinct graded items (of its criterion in a rubric: each criterion's own); its
    final grade and whether a reviewer set it are `item_final_grades`' of ``reviews`` (Store.active_reviews; None:
    no review), ``criterion`` the grades' own where they have no criterion column."""
    key_columns = [column for column in (*TARGET_COLUMNS, CRITERION_COLUMN) if column in grades.columns]
    if grades.empty:
        return pd.DataFrame(columns=[EXPORT_COLUMNS[0], *key_columns, *EXPORT_COLUMNS[1:]])
    positions = grades["position"].to_numpy(dtype=int)
    strata = design.stratum[positions]
    by = [CRITERION_COLUMN, "stratum"] if CRITERION_COLUMN in key_columns else ["stratum"]
    graded = grades[key_columns].assign(stratum=strata, position=positions)
    n_h = graded.groupby(by)["position"].transform("nunique").to_numpy()
    final, reviewed = item_final_grades(grades, reviews, criterion)
    table = pd.DataFrame(
        {
            "item": items["id"].to_numpy()[positions],
            "position": grades["position"],
            "stratum": strata,
            "stratum_size": design.sizes[strata],
            "weight": design.weights[strata],
            "inclusion_probability": n_h / design.sizes[strata],
            "grade": grades["value"],
            "label": grades["label"],
            "grader": grades["grader"],
            "time": pd.to_datetime(grades["created_at"], utc=True).map(lambda t: t.isoformat()),
            "seconds": grades["seconds"],
            "comment": grades["comment"],
            "final_grade": final,
            "reviewed": reviewed,
        }
    )
    for column in key_columns:  # whose response and which side (a comparison's), which criterion (a rubric's)
        table[column] = grades[column].to_numpy()
    if "side" in key_columns:  # the name the card showed: the side's number counted from 0 read as Response 1
        table["side"] = [None if pd.isna(side) else side_name(int(side)) for side in grades["side"]]
    return table[[EXPORT_COLUMNS[0], *key_columns, *EXPORT_COLUMNS[1:]]]


def grades_csv(table: pd.DataFrame) -> bytes:
    """CSV (UTF-8) with every text cell made inert for spreadsheets (core.inputs.io.spreadsheet_safe)."""
    return table.map(spreadsheet_safe).to_csv(index=False).encode("utf-8")


def grades_jsonl(table: pd.DataFrame) -> bytes:
    """One JSON object per grade; values as stored (JSON is not a spreadsheet)."""
    lines = (json.dumps(json_safe(row), ensure_ascii=False) for row in table.to_dict(orient="records"))
    return ("\n".join(lines) + ("\n" if len(table) else "")).encode("utf-8")


def grades_parquet(table: pd.DataFrame) -> bytes:
    """The grades as a Parquet file, which Hugging Face `datasets.load_dataset("parquet", data_files=...)`
    and the Hub's dataset viewer read as they are (values unchanged: Parquet runs no formulas)."""
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    return buffer.getvalue()


def as_of(project: ProjectInfo, grades: pd.DataFrame, reviewed_at: pd.Series | None = None) -> str:
    """The report's time: its last grade's or review's (``reviewed_at``: when each active review was made), else
    the project's last change (never the clock). A review changes the figures: two reports of one time showed
    different numbers where only the last grade's counted (an integrator's review)."""
    times = pd.concat([grades["created_at"], pd.Series([] if reviewed_at is None else reviewed_at, dtype=object)])
    if not times.empty:
        return pd.to_datetime(times, utc=True).max().isoformat()
    return project.updated_at.isoformat()


def graders_section(grades: pd.DataFrame, settings: ProjectSettings) -> dict[str, Any]:
    agreed = agreement(grades, settings.grading_scale.level)
    pace = grader_pace(grades).drop(columns=["last grade"])
    return {
        "by_grader": pace.to_dict(orient="records"),
        "agreement": {
            "items_graded_twice": agreed.items,
            "graders": agreed.graders,
            "same_grade_share": agreed.observed,
            "cohen_kappa": agreed.kappa,
            "krippendorff_alpha": agreed.alpha,
            "level": agreed.level,
        },
    }


@dataclass(frozen=True)
class ChainCheck:
    """The audit trail's hash chain as checked for a report (core.store.audit_chain.verify): ``broken_at``, the id
    of the first sealed event whose link does not hold; None when the chain holds."""

    broken_at: int | None


@dataclass(frozen=True)
class _Graded:
    """What the report reads from the grades: each graded item's final grade (``positions``, ``values``, in
    grading order: each item's first grade's, core.stats.rater_agreement.final_grades; ``graded``, position ->
    final grade, as the reading takes them), the planned budget ``n0``, the project's reading
    (core.services.reading) and the anytime interval the estimate's path draws (None when the budget is fixed or
    nothing is graded)."""

    positions: np.ndarray
    values: np.ndarray
    graded: dict[int, float]
    n0: int
    reading: Reading
    anytime: AnytimeInterval | None


def _graded(
    project: ProjectInfo,
    design: Design,
    result: Estimate,
    grades: pd.DataFrame,
    reviewed: Mapping[int, float],
    skips: SkipBound | None,
    skip_steps: Mapping[int, int] | None = None,
    others: bool = False,
) -> _Graded:
    """The items' final grades (core.stats.rater_agreement.final_grades), their anytime interval and the
    project's reading of them (``skip_steps``, ``others``: core.services.reading.read_project's)."""
    item_grades = final_grades(grades["position"], grades["value"], reviewed)
    positions = np.fromiter(item_grades, dtype=int, count=len(item_grades))
    values = np.fromiter(item_grades.values(), dtype=float, count=len(item_grades))
    n0 = project.settings.anytime_n0(design)
    anytime = anytime_interval(design, positions, values, n0) if len(positions) else None
    graded = dict(zip(positions.tolist(), values.tolist()))
    reading = read_project(
        design, project.settings, graded, result, anytime, skips=skips, skip_steps=skip_steps, others=others
    )
    stopping_by = None if reading.regime == FIXED else anytime  # the path's anytime lines, unless the budget is fixed
    return _Graded(positions, values, graded, n0, reading, stopping_by)


def _estimate_section(design: Design, result: Estimate, read: _Graded, grades_given: int) -> dict[str, Any]:
    """The report's ``estimate``: the estimate, its fixed-n interval, the anytime interval and the interval the
    stopping rule reads (None before every stratum has a grade or when the budget is fixed), ``reported``: the
    one of them to quote, with its estimate (the stopping rule's, else the fixed-n one), and the standard error
    and grades that estimate reads (core.services.reading.reported_from), and the savings. A
    script reading ``estimate.ci_low`` got the fixed-n interval, which the app itself says is not valid for a
    project read as grades come in (evaluation engineer's review)."""
    saving, now = result.saving, read.reading.now
    anytime = None if read.anytime is None else read.reading.anytime
    _, value_when = reported_estimate(read.reading, result)
    reported = reported_from(design, read.reading, read.graded, result)
    stopping = (
        None
        if read.reading.regime == FIXED or result.missing
        else {
            "ci_low": now.low,
            "ci_high": now.high,
            "level": now.level,
            "reported_level": reported_level(read.reading),
            "interval": now.name,
            "when": interval_when(read.reading),
            "value": reported.value,
            "value_when": value_when,
            "se": reported.se,
            "grades": reported.n,
        }
    )
    fixed_n = {
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "level": result.level,
        "interval": INTERVAL,
        "value": result.value,
        "se": result.se,
        "grades": result.n,
    }
    return {
        **fixed_n,
        "se": result.se,
        "anytime": None  # the reading's: widened by the skipped items' worst case where some stand, as shown
        if anytime is None or result.missing
        else {"ci_low": anytime.low, "ci_high": anytime.high, "interval": anytime.name},
        "stopping_interval": stopping,
        "reported": stopping or fixed_n,
        "method": result.method,
        "grades": result.n,
        "grades_given": grades_given,
        "missing_strata": list(result.missing),
        "precision_now": None
        if saving is None
        else {
            "what": PRECISION_NOW,
            "design_effect": result.deff,
            "uniform_grades": result.uniform_labels,
            "grades_saved": result.labels_saved,
            "saving": saving.share,
            "saving_range": [saving.low, saving.high],
        },
    }


PRECISION_NOW = (
    "the grades given against a uniform random sample of the same precision now (the ratio of the fixed-n "
    "variances, docs/method.md); the saving the pages show is stopping_rule.saving, the grades at the stop "
    "against uniform random sampling's to reach the target"
)
"""What the estimate's ``precision_now`` is, and which saving the pages show (a manager's review read 53% here
beside the pages' 48%, under the name ``saving_share``)."""


def _stopping_section(reading: Reading, result: Estimate) -> dict[str, Any]:
    """The report's ``stopping_rule``: the regime, its target and decision, the looks, the forecast and the
    saving against uniform sampling (None until it is known)."""
    return {
        "regime": reading.regime,
        "rule": reading.regime_name,
        "budget": reading.budget,
        "graded": reading.graded,
        "target_half_width": reading.target,
        "half_width": None if reading.rule is None or result.missing else reading.rule.half_width,
        "met": reading.done,
        "stop_at": reading.stop_at,
        "looks_taken": list(reading.looks_taken),
        "interval": "no planned look yet" if reading.rule is None else reading.rule.name,
        "words": stopping_words(reading),
        "forecast": {"n": reading.forecast.n, "low": reading.forecast.low, "high": reading.forecast.high},
        "saving": None
        if not reading.saving_known
        else {
            "against_uniform_fixed_n": reading.saving.fixed_n,
            "uniform_fixed_n": reading.saving.uniform_fixed,
            "against_uniform_same_rule": reading.saving.same_regime,
            "uniform_same_rule": reading.saving.uniform_same,
            "words": saving_words(reading),
        },
    }


def criterion_rows(criteria: Sequence[CriterionReading]) -> list[dict[str, Any]]:
    """One flat row per criterion (core.services.criteria_reading): the report's ``criteria`` and the estimates
    export. ``interval_*``: the interval to report (``when`` it holds); ``fixed_n_*`` and ``anytime_*``: the
    fixed-n and anytime-valid intervals (anytime None where the budget is fixed in advance); every bound None
    while the criterion has no estimate (a stratum without a grade of it)."""
    return [_criterion_row(r) for r in criteria]


def _criterion_row(r: CriterionReading) -> dict[str, Any]:
    def ends(name: str, interval: Interval | None) -> dict[str, float | None]:
        shown = r.known and interval is not None
        return {f"{name}_low": interval.low if shown else None, f"{name}_high": interval.high if shown else None}

    return {
        "criterion": r.name,
        "primary": r.primary,
        "required": r.criterion.required,
        "scale": r.criterion.scale.kind,
        "graded_items": r.graded,
        "of_graded_items": r.cards,
        "method": r.estimate.method,
        "estimate": r.value,
        "se": r.estimate.se,
        "missing_strata": len(r.estimate.missing),
        "interval": None if r.now is None else r.now.name,
        "when": r.when,
        "interval_level": None if r.now is None else r.now.level,
        **ends("interval", r.now),
        "fixed_n_level": r.fixed_n.level,
        **ends("fixed_n", r.fixed_n),
        **ends("anytime", r.anytime),
        "estimand": r.estimand,
    }


def _criteria_section(
    settings: ProjectSettings, criteria: Sequence[CriterionReading], rubric_grades: pd.DataFrame | None
) -> dict[str, Any]:
    """The report's ``criteria`` in a rubric project (as a mapping to merge: empty for a one-question project,
    whose report is unchanged): the design criterion, the sentence naming it, each criterion's row and, from
    ``rubric_grades``, each criterion's agreement between graders (at its scale's level)."""
    words = design_criterion_words(settings)
    if words is None:
        return {}
    section = {
        "design_criterion": settings.design_criterion,
        "allocate_for": settings.allocate_for,
        "words": words,
        "by_criterion": criterion_rows(criteria),
        "agreement": {} if rubric_grades is None else _criteria_agreement(settings.rubric, rubric_grades),
    }
    return {"criteria": section}


def _criteria_agreement(rubric: Rubric, grades: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Criterion -> its agreement between graders over the items graded twice (criteria_reading.criteria_agreement)."""
    return {
        name: {
            "items_graded_twice": agreed.items,
            "same_grade_share": agreed.observed,
            "cohen_kappa": agreed.kappa,
            "krippendorff_alpha": agreed.alpha,
            "level": agreed.level,
        }
        for name, agreed in criteria_agreement(rubric, grades).items()
    }


def criteria_table(section: dict[str, Any]) -> pd.DataFrame:
    """The criteria as the Markdown and HTML reports show them: estimate, the interval to report, the fixed-n
    interval and the graded items, as text (4 decimals; "no estimate yet" while a stratum has no grade)."""

    def span(low: float | None, high: float | None) -> str:
        return f"[{low:.4f}, {high:.4f}]"

    rows = []
    for row in section["by_criterion"]:
        known = not row["missing_strata"] and row["estimate"] is not None
        rows.append(
            {
                "criterion": row["criterion"] + (" (primary)" if row["primary"] else ""),
                "scale": row["scale"],
                "estimate": f"{row['estimate']:.4f}" if known else "no estimate yet",
                "interval": f"{level_percent(row['interval_level'])} {span(row['interval_low'], row['interval_high'])}, "
                f"{row['when']}"
                if known
                else "–",
                "fixed-n interval": f"{row['fixed_n_level']:.0%} {span(row['fixed_n_low'], row['fixed_n_high'])}"
                if known
                else "–",
                "graded items": f"{row['graded_items']:,} of {row['of_graded_items']:,}",
                "agreement": _agreement_words(section.get("agreement", {}).get(row["criterion"])),
            }
        )
    return pd.DataFrame(rows)


def _agreement_words(agreed: dict[str, Any] | None) -> str:
    """A criterion's agreement for the table: Krippendorff's alpha and the items it rests on, or why none."""
    if not agreed or not agreed["items_graded_twice"]:
        return "no item graded twice"
    alpha = agreed["krippendorff_alpha"]
    value = "undefined" if alpha is None or not np.isfinite(alpha) else f"{alpha:.2f}"
    return f"alpha {value} over {counted(agreed['items_graded_twice'], 'item')}"


def estimand_lines(section: dict[str, Any]) -> list[str]:
    """Each criterion's estimand, one line each."""
    return [f"{row['criterion']}: {row['estimand']}." for row in section["by_criterion"]]


def _criteria_lines(section: dict[str, Any] | None) -> list[str]:
    if section is None:
        return []
    estimands = [f"- {markdown_line(line)}" for line in estimand_lines(section)]
    words = markdown_line(section["words"])
    return ["## Criteria", "", words, "", markdown_table(criteria_table(section)), "", *estimands, ""]


def skips_section(skips: SkipBound | None, skip_steps: Mapping[int, int] | None) -> dict[str, Any] | None:
    """The report's ``skips``: how many stay skipped, how many were skipped at some time (``skip_steps``, every
    skip not taken back: those graded since included), the estimate's worst-case range had those left been
    graded, per stratum."""
    if skips is None:
        return None
    return {
        "skipped": skips.skipped,
        "ever_skipped": max(len(skip_steps or {}), skips.skipped),
        "estimate_if_all_skipped_were_0": skips.low,
        "estimate_if_all_skipped_were_1": skips.high,
        "by_stratum": skips.table.to_dict(orient="records"),
    }


def inputs_section(input_files: dict[str, tuple[str, bytes]]) -> dict[str, dict[str, str]]:
    """The report's ``inputs``: each input file's name and SHA-256, by its role."""
    return {
        role: {"file": name, "sha256": hashlib.sha256(content).hexdigest()}
        for role, (name, content) in input_files.items()
    }


def audit_chain_section(chain: ChainCheck | None) -> dict[str, Any] | None:
    """The report's ``audit_chain``: whether the hash chain holds and its first broken event; None unchecked."""
    return None if chain is None else {"intact": chain.broken_at is None, "first_broken_event": chain.broken_at}


def recompute_script(criterion: str | None) -> str:
    """RECOMPUTE_SCRIPT, reading only ``criterion``'s grades where the grades export holds a rubric's (its
    ``criterion`` column; None: a one-question project's export, every row)."""
    if criterion is None:
        return RECOMPUTE_SCRIPT
    lines = RECOMPUTE_SCRIPT.split("\n")
    read = next(k for k, line in enumerate(lines) if line.startswith("g = pd.read_csv("))
    lines.insert(
        read + 1, f"g = g[g['criterion'] == {criterion!r}]  # the criterion the estimate reads (a rubric's rows)"
    )
    return "\n".join(lines)


def _recompute_section(design: Design, read: _Graded, result: Estimate, criterion: str | None) -> dict[str, Any]:
    """The report's ``recompute``: RECOMPUTE_FORMULA and the script (`recompute_script` of ``criterion``, the
    rubric's primary or None) with the stratified estimate and variance they give, and a note where the
    report's estimator is another."""
    stratified = estimate(design, read.positions, read.values, method="stratified", level=result.level)
    notes = []
    if result.method != "stratified":
        notes.append(
            f"The estimate above is the {result.method} estimator's: it adjusts the stratified estimate "
            "recomputed here by the regression on the surrogate's signals (Method)."
        )
    stop_at = read.reading.stop_at
    if stop_at is not None and stop_at < len(read.positions):  # a manager's review: the two did not match
        notes.append(
            f"The estimate quoted above is the stop's, from the first {stop_at:,} grades in the order they were "
            f"given; this reads all {len(read.positions):,} in the export (the rows after the first {stop_at:,} by "
            "time came after the stop)."
        )
    note = " ".join(notes) or None
    return {
        "formula": RECOMPUTE_FORMULA,
        "script": recompute_script(criterion),
        "value": stratified.value,
        "variance": stratified.se**2,
        "note": note,
    }


def report(
    project: ProjectInfo,
    design: Design,
    result: Estimate,
    input_files: dict[str, tuple[str, bytes]],
    grades: pd.DataFrame,
    skips: SkipBound | None = None,
    reviewed: Mapping[int, float] | None = None,
    validated: Validated | None = None,
    chain: ChainCheck | None = None,
    criteria: Sequence[CriterionReading] = (),
    rubric_grades: pd.DataFrame | None = None,
    skip_steps: Mapping[int, int] | None = None,
    waiting: int = 0,
    reviewed_at: pd.Series | None = None,
    settled: tuple[int, int] = (0, 0),
    others: bool = False,
) -> dict[str, Any]:
    """Everything needed to read and reproduce the result: method, estimate, interval, stopping rule,
    strata, savings, graders and their agreement, skips (per stratum and their worst-case bound,
    `core.stats.skips`), review (the estimand, reviewed items, each grader's agreement with the reviewed
    grades, the estimate corrected on the validation sample: ``validated``), the audit trail's hash chain
    (``chain``; None when not checked), settings, seed, the input files by name and SHA-256, the estimate's
    path, and the stratified estimate recomputed by RECOMPUTE_FORMULA; in a rubric project, ``criteria``:
    each criterion's reading (core.services.criteria_reading), the estimate, the stopping rule and the rest
    being the design criterion's, and with ``rubric_grades`` (Store.rubric_grades) each criterion's agreement
    between graders.
    ``grades``: the active grades (``Store.grades``); ``reviewed``: position -> reviewed grade; ``skip_steps``:
    when each skipped item was skipped (Store.skip_steps), for a stop the skips held; ``waiting``: the items
    waiting for a final grade (core.services.review.waiting); ``reviewed_at``: when each active review was made
    (`as_of`); ``settled``: (settled, disagreements) of the double-graded items whose grades disagree
    (core.services.review.disagreements_settled), which the correction reads as far as they are settled;
    ``others``: someone besides the skippers grades here (Store.others_grade), for the forecast's range."""
    grades = (
        pd.DataFrame(columns=["position", "grader", "value", "seconds", "created_at"]) if grades is None else grades
    )
    reviewed = reviewed or {}
    read = _graded(project, design, result, grades, reviewed, skips, skip_steps, others)
    path = estimate_path(design, list(read.positions), list(read.values), method=result.method, anytime=read.anytime)
    return json_safe(
        {
            "project": project.name,
            "generated_at": as_of(project, grades, reviewed_at),
            "activegrade_version": version(),
            "method": method_text(result.method),
            "inputs": inputs_section(input_files),
            "items": design.N,
            "allocation": allocation_text(project.settings, read.n0),
            "estimate": _estimate_section(design, result, read, counts(grades).grades),
            "stopping_rule": _stopping_section(read.reading, result),
            **_criteria_section(project.settings, criteria, rubric_grades),
            "strata": result.strata.to_dict(orient="records"),
            "graders": graders_section(grades, project.settings),
            "review": _review(grades, reviewed, validated, waiting, settled)
            | {"reviewed_criterion": None if project.settings.rubric is None else project.settings.design_criterion},
            "skips": skips_section(skips, skip_steps),
            "audit_chain": audit_chain_section(chain),
            "recompute": _recompute_section(
                design, read, result, None if project.settings.rubric is None else project.settings.design_criterion
            ),
            "path": path.to_dict(orient="records"),
            "settings": project.settings.shared_dict(),
            "seed": project.settings.seed,
        }
    )


INTERVAL = "fixed-n Korn-Graubard, valid for a number of grades decided in advance"


def allocation_text(settings: ProjectSettings, n0: int) -> str:
    """What the queue allocated for, from the project's stopping regime (core.stats.stopping.allocation_kappa)."""
    regime = settings.stopping
    if regime == FIXED:
        return (
            f"for a budget fixed in advance of {n0:,} grades: Neyman allocation for the fixed-n interval read at "
            "that budget"
        )
    if regime == ANYTIME:
        return (
            f"for anytime stopping (planned budget {n0:,} grades): Neyman allocation that also gives strata with "
            "few grades what the anytime interval needs; stop by the anytime interval"
        )
    return (
        "for stopping at planned looks on information: Neyman allocation for the fixed-n interval the looks read, "
        "with the small-n term of strata whose grades all agree"
    )


def skips_words(skips: dict[str, Any], digits: int = 4) -> str:
    """The report's ``skips`` in words for people (the Markdown and HTML reports, the Dashboard at ``digits``
    3): how many stay skipped and how many were graded since, and the estimate's worst-case range had those left
    been graded, once every stratum has a grade (before, there is no estimate)."""
    ever = skips.get("ever_skipped", skips["skipped"])
    graded_since = f"{counted(ever - skips['skipped'], 'item')} skipped and graded since"
    if not skips["skipped"]:
        return f"{graded_since}; none stays skipped." if ever else "No item was skipped."
    low, high = skips["estimate_if_all_skipped_were_0"], skips["estimate_if_all_skipped_were_1"]
    lead = f"{counted(skips['skipped'], 'item')} skipped and not graded" + (
        f" ({graded_since})." if ever > skips["skipped"] else "."
    )
    if low is None or high is None or not np.isfinite([low, high]).all():
        return f"{lead} Their worst-case range is known once every stratum has a grade."
    return (
        f"{lead} Had {'it' if skips['skipped'] == 1 else 'they'} been graded, the estimate would lie between "
        f"{low:.{digits}f} (all 0) and {high:.{digits}f} (all 1), before sampling error."
    )


def _skips_lines(skips: dict[str, Any] | None) -> list[str]:
    if skips is None:
        return []
    lines = ["## Skips", "", skips_words(skips), ""]
    return lines + ([markdown_table(pd.DataFrame(skips["by_stratum"])), ""] if skips["skipped"] else [])


def audit_chain_line(chain: dict[str, Any]) -> str:
    """The audit trail's hash chain (the report's ``audit_chain``) in words for people."""
    if chain["intact"]:
        return (
            "Audit trail: its hash chain holds. No sealed event (of any project in this database) was changed, "
            "removed or slipped in after it was sealed."
        )
    return (
        f"Audit trail: its hash chain is broken at event {chain['first_broken_event']}. That event was changed or "
        "slipped in, or the one before it removed, after they were sealed, so the trail cannot be trusted from "
        "there on (activegrade status --audit names the same event)."
    )


def audit_chain_lines(chain: dict[str, Any] | None) -> list[str]:
    return [] if chain is None else ["## Audit trail", "", audit_chain_line(chain), ""]


def settings_table(settings: dict[str, Any], seed: Any, strata_used: int | None = None) -> pd.DataFrame:
    """Settings as rows of (setting, value): nested values as compact JSON, "not set" for none (a planned budget
    left to the forecast read "null"), the guidelines left out (long text with its own place), the seed once,
    and in a rubric project the one-question scale it does not use. Where the design has ``strata_used`` strata,
    not the number asked, n_strata says both and why (tied surrogate scores and strata under min_stratum_size
    items merge; items without samples add one: core.stats.strata), so the table never reads as the design used."""
    read = ProjectSettings.from_dict(settings)
    left_out = ("guidelines", "seed", *(("scale",) if read.rubric else ()))
    rows = [
        {"setting": k, "value": v if isinstance(v, str) else "not set" if v is None else json.dumps(v)}
        for k, v in settings.items()
        if k not in left_out
    ]
    asked = read.n_strata
    if strata_used is not None and strata_used != asked:
        used = (
            f"{asked} asked, {strata_used} used: strata with tied surrogate scores or under "
            f"min_stratum_size items are merged, and items without samples form one more (see Strata)"
        )
        rows = [{**row, "value": used} if row["setting"] == "n_strata" else row for row in rows]
    return pd.DataFrame([*rows, {"setting": "seed", "value": json.dumps(seed)}], columns=["setting", "value"])


def stopping_line(rule: dict[str, Any]) -> str:
    """The stopping rule's status in one sentence (core.services.reading.stopping_words), its forecast and saving."""
    forecast = rule["forecast"]
    line = f"Stopping: {rule['rule']}. {rule['words']}"
    if not rule["met"]:
        line += f" Forecast: {grades_words(forecast['n'], forecast['low'], forecast['high'], '80% range')} graded items in all."
    if rule["saving"] is not None:
        line += f" {rule['saving']['words']}"
    return line


ESTIMAND = (
    "the pool's mean final grade: the grade a reviewer set where one settled the item, the mean of the "
    "graders' grades where none did (docs/review.md, section 'The final grade, decided once')"
)


def _review(
    grades: pd.DataFrame,
    reviewed: Mapping[int, float],
    validated: Validated | None,
    waiting: int,
    settled: tuple[int, int],
) -> dict[str, Any]:
    """The estimand, the reviewed items, the ``waiting`` ones (core.services.review.queue), each grader's
    agreement with the reviewed grades (the share of their grades of reviewed items equal to the final grade),
    and the validated estimate where it exists, with how many of the validation sample's disagreements a
    reviewer has settled (``settled``: the others are read at the graders' mean, so the correction measures
    graders' errors only as far as they are settled; the report said "from 31 validation items" with none
    settled and 10 waiting: an integrator's review)."""
    final = grades["position"].map(reviewed)
    checked = grades.assign(agrees=grades["value"] == final)[final.notna()]
    by_grader = checked.groupby("grader")["agrees"].agg(["size", "mean"]).reset_index()
    corrected = None
    if validated is not None and np.isfinite(validated.value):
        corrected = {
            "value": validated.value,
            "se": validated.se,
            "ci_low": validated.ci_low,
            "ci_high": validated.ci_high,
            "level": validated.level,
            "correction": validated.correction,
            "validation_items": validated.validation,
            "disagreements_settled": settled[0],
            "disagreements": settled[1],
            "method": "first grades' stratified estimate + the mean of (final - first grade) on the random "
            "double-graded and audited items (docs/review.md, section 'The estimate that uses review: a validation sample')",
        }
    return {
        "estimand": ESTIMAND,
        "reviewed_items": len(reviewed),
        "waiting_items": waiting,
        "graders_vs_review": [
            {"grader": g, "reviewed_items": int(k), "agree_with_review": float(m)}
            for g, k, m in by_grader.itertuples(index=False)
        ],
        "validated": corrected,
    }


def review_lines(review: dict[str, Any] | None) -> list[str]:
    """The review section, as Markdown lines."""
    if review is None:
        return []
    lines = ["## Review", "", f"Estimand: {review['estimand']}.", ""]
    criterion = review.get("reviewed_criterion")  # a rubric's items are counted on the criterion the estimate reads
    on = f" on {one_line_plain(criterion)}, the criterion the estimate reads" if criterion else ""
    lines.append(f"{counted(review['reviewed_items'], 'item')} settled by a reviewer{on}.")
    if waiting := waiting_for_review(review.get("waiting_items", 0)):
        lines.append(
            f"{waiting} (flagged, grades that disagree, or audited); until then each enters with the mean of its grades."
        )
    for row in review["graders_vs_review"]:
        lines.append(
            f"- {row['grader']}: {row['agree_with_review']:.0%} of {row['reviewed_items']} reviewed items graded as the reviewer did."
        )
    v = review.get("validated")
    lines += [
        "",
        "Corrected for graders' errors: no validation sample yet (double grading or an audit share, reviewed)."
        if v is None
        else f"Corrected for graders' errors: **{v['value']:.4f}**, {v['level']:.0%} interval "
        f"[{v['ci_low']:.4f}, {v['ci_high']:.4f}] (standard error {v['se']:.4f}; correction {v['correction']:+.4f} "
        f"from {v['validation_items']} validation items, {v['disagreements_settled']:,} of their "
        f"{counted(v['disagreements'], 'disagreement')} settled by a reviewer, the others read as the graders' "
        f"mean; {v['method']}).",
        "",
    ]
    return lines


def agreement_line(graders: dict[str, Any]) -> str:
    """The graders' agreement in words, over what ``graders["unit"]`` names (items; a comparison's responses)."""
    a, unit = graders["agreement"], graders.get("unit", "item")
    if not a["items_graded_twice"]:
        return f"No {unit} was graded twice, so agreement between graders is not measured."
    return (
        f"{a['items_graded_twice']} {unit}s graded by two or more graders: same grade "
        f"{a['same_grade_share']:.0%}, Cohen's kappa {number(a['cohen_kappa'])}, "
        f"Krippendorff's alpha {number(a['krippendorff_alpha'])} ({a['level']})."
    )


def graders_lines(graders: dict[str, Any]) -> list[str]:
    """Graders' pace and their agreement, as Markdown lines."""
    table = grader_rows(graders["by_grader"])
    return [
        "## Graders",
        "",
        markdown_table(table) if not table.empty else "(no grade)",
        "",
        agreement_line(graders),
        "",
    ]


def grader_rows(by_grader: list[dict[str, Any]]) -> pd.DataFrame:
    """The graders' table as the report shows it: working time as a duration ('< 1 min', '1 h 05 min'), grades
    per hour whole and median seconds to a tenth (a pace of '354.051' claims a precision it does not have)."""
    table = pd.DataFrame(by_grader)
    if table.empty:
        return table
    return with_working_time(table).assign(
        **{
            "grades per hour": table["grades per hour"].map(lambda v: _rounded(v, "{:,.0f}")),
            "median seconds": table["median seconds"].map(lambda v: _rounded(v, "{:.1f}")),
        }
    )


def _rounded(value: float | None, form: str) -> str:
    """``value`` in ``form``, or '–' where it is unknown (None, NaN)."""
    return "–" if value is None or value != value else form.format(value)


def number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def as_of_line(data: dict[str, Any]) -> str:
    """When the report's figures hold, for people: the last grade's time to the minute, in UTC."""
    moment = pd.Timestamp(data["generated_at"])
    moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
    return f"As of {moment:%Y-%m-%d %H:%M} UTC (the last grade's or review's time)"


def sources_line(data: dict[str, Any]) -> str:
    """The report's time and its input files with their SHA-256, as a Markdown line."""
    files = ", ".join(
        f"{role} {one_line_plain(f['file'])} (SHA-256 `{f['sha256']}`)" for role, f in data["inputs"].items()
    )  # a file's name shown literally: in backticks, a name holding one closed them (an attacker's review)
    return f"{as_of_line(data)}, from {files}."


def report_markdown(data: dict[str, Any]) -> str:
    """The report as a short Markdown document."""
    strata = pd.DataFrame(data["strata"])
    lines = [
        f"# ActiveGrade report: {one_line_plain(data['project'])}",  # a name shown literally, in any viewer
        "",
        sources_line(data),
        "",
        markdown_line(estimate_line(data)),
        "",
        f"Allocation: {data['allocation']}.",
        "",
        stopping_line(data["stopping_rule"]),
        "",
        *_criteria_lines(data.get("criteria")),
        "## Method",
        "",
        data["method"],
        "",
        f"Design proxy (strata and predicted grades): {design_proxy(data['settings'])}.",
        "",
        "## Strata",
        "",
        markdown_table(strata) if not strata.empty else "(none)",
        "",
        *graders_lines(data["graders"]),
        *review_lines(data.get("review")),
        *_skips_lines(data.get("skips")),
        *audit_chain_lines(data.get("audit_chain")),
        "## Recompute the estimate from the grades export",
        "",
        RECOMPUTE_FILE,
        "",
        data["recompute"]["formula"],
        "",
        recompute_line(data["recompute"]),
        "",
        "```python",
        data["recompute"]["script"],
        "```",
        "",
        "## Settings",
        "",
        markdown_table(settings_table(data["settings"], data["seed"], len(data["strata"]))),
        "",
    ]
    return "\n".join(lines)


def _float(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6g}"


def recompute_line(recompute: dict[str, Any]) -> str:
    """The recomputed stratified estimate, and how it stands to the report's estimate."""
    line = f"Result (stratified): mu = {_float(recompute['value'])}, V = {_float(recompute['variance'])}."
    return line if recompute.get("note") is None else f"{line} {recompute['note']}"


def estimate_line(data: dict[str, Any]) -> str:
    """The estimate and its interval: the stopping rule's (valid whenever grading stops) first where it has
    one, then the fixed-n interval."""
    e = data["estimate"]
    if e["missing_strata"]:
        return (
            f"No estimate yet: {without_grades(e['missing_strata'])} ({counted(e['grades'], 'graded item')} of "
            f"{data['items']:,})."
        )
    se = "not known: the grades show no spread yet" if e["se"] is None else f"{e['se']:.4f}"
    fixed = f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}] ({e['interval']}; standard error {se})"
    rule = e.get("stopping_interval")
    when = None if rule is None else rule["when"].split(" (")[0]  # the look is in the interval's name that follows
    if rule is not None and rule.get("value_when"):  # the looks said done before the grades given now
        return (
            f"**Estimated {mean_grade_words(data['settings'])}: {rule['value']:.4f}** {rule['value_when']}, "
            f"{level_percent(rule['reported_level'])} interval {when} [{rule['ci_low']:.4f}, {rule['ci_high']:.4f}] "
            f"({rule['interval']}), with the {e['method']} estimator; fixed-n interval of all of them {fixed}."
        )
    interval = (
        f"{e['level']:.0%} interval {fixed}"
        if rule is None
        else f"{level_percent(rule['reported_level'])} interval {when} [{rule['ci_low']:.4f}, {rule['ci_high']:.4f}] "
        f"({rule['interval']}); fixed-n interval {fixed}"
    )
    return (
        f"**Estimated {mean_grade_words(data['settings'])}: {e['value']:.4f}**, {interval}, from {counted(e['grades'], 'graded item')} of "
        f"{data['items']:,} with the {e['method']} estimator."
    )


def design_proxy(stored: dict[str, Any]) -> str:
    """Which proxy a project's design used, from the report's settings (``ProjectSettings.to_dict``): its pool
    column, or the surrogate's agreement."""
    proxy = ProjectSettings.from_dict(stored).proxy
    return f"pool column '{proxy}'" if proxy else "agreement of the surrogate samples"


def markdown_line(line: str) -> str:
    """A line of the report's prose as Markdown that shows it literally (core.inputs.markup.one_line_plain: a
    model's or criterion's name can hold markup, which a viewer rendering inline HTML ran: an attacker's review),
    its **bold** kept, and the spaces either side of a bold part (each part is read on its own, and "**0.6450**
    at the stop" lost its space: an integrator's review)."""

    def literal(part: str, outside: bool) -> str:
        shown = one_line_plain(part)
        if not outside or not shown:
            return shown
        return (" " if part[:1].isspace() else "") + shown + (" " if part[-1:].isspace() else "")

    return "**".join(literal(part, k % 2 == 0) for k, part in enumerate(line.split("**")))


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; floats to 3 decimals, NaN as an empty cell, text shown literally."""

    def cell(value: object) -> str:
        if value is None or (isinstance(value, float) and value != value):
            return "–"
        if isinstance(value, float):
            return f"{value:.3f}"
        return one_line_plain(str(value))  # names (models, criteria, graders) shown literally, in any viewer

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])
