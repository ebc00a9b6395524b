"""Dashboard, "when are we done": the estimate and its interval now and along the way, grades and items counted
apart, throughput, the stopping rule and an ETA at the current pace, savings with units, skips, graders."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.exports.report import skips_section, skips_words
from core.inputs.markup import plain_text
from core.services import auth, review
from core.services.criteria_reading import (
    agreement_words,
    criteria_now,
    design_criterion_words,
    mean_grade_words,
    scale_words,
)
from core.services.live import DEFAULT_METHOD, ESTIMATORS, Design, Live, estimator_name
from core.services.progress import (
    IDLE_GAP_S,
    counted,
    counts,
    duration,
    eta,
    item_pace,
    throughput,
    without_grades,
)
from core.services.reading import (
    Reading,
    expected_score_words,
    grades_words,
    headline_words,
    interval_label,
    looks_level_words,
    looks_words,
    reported_estimate,
    saving_metric,
    saving_note,
    saving_words,
    stopping_words,
)
from core.services.setup import LEVEL
from core.services.tracking import PATH_NOTE
from ui import access, comparison_panel, plan, signin, state
from ui.charts import path_chart
from ui.graders_table import graders_table

store = state.store()
project = state.require_ready_project()
signin.require(auth.VIEW_DASHBOARD, project.id)
state.heading("Dashboard", project)
if project.settings.compares:  # a comparison of several models: its own panel
    comparison_panel.panel(store, project)
    st.stop()
method = st.sidebar.selectbox(
    "Estimator",
    ESTIMATORS,
    index=ESTIMATORS.index(project.settings.method),
    format_func=estimator_name,
    help=f"default: the {DEFAULT_METHOD} estimator (benchmarks/estimation.md). The report uses the "
    "project's estimator, set on the Projects page.",
)
REFRESH_S = 3.0


def shown(table, digits: int = 3):
    """A table to show: decimals to ``digits`` places and "–" for a value not known yet (a stratum's mean before
    its first grade, its sd before its second; one grade's pace), as text, since st.dataframe shows NaN as "None"."""
    return table.assign(
        **{
            column: table[column].map(lambda v: "–" if pd.isna(v) else f"{v:,.{digits}f}")
            for column in table.columns
            if pd.api.types.is_float_dtype(table[column])
        }
    )


def pace_row(grades, reading: Reading) -> None:
    """Grades and items counted apart, throughput, the stopping rule and the ETA at the current pace."""
    tally = counts(grades)
    f = reading.forecast
    when = eta(reading.graded + reading.items_left, tally.items, item_pace(grades))
    cols = st.columns(4)
    cols[0].metric(
        "Grades",
        f"{tally.grades:,}",
        help="Every grade given, a second grader's grade of the same item included. The estimate uses each "
        "graded item once, with the mean of its grades.",
    )
    cols[1].metric(
        "Throughput",
        f"{throughput(grades):,.0f} grades/h" if tally.grades > 1 else "n/a",
        help=f"Grades per hour of grading time: pauses longer than {IDLE_GAP_S // 60} minutes are left out.",
    )
    cols[2].metric(
        "Items still needed",
        f"{when.items_left:,}",
        help=f"Forecast of graded items to the stop ({reading.regime_name}): {grades_words(f.n, f.low, f.high)} "
        "in all (the range an 80% one, from the grades so far); a forecast, not a promise.",
    )
    cols[3].metric(
        "ETA at the current pace",
        "done" if reading.done else duration(when.hours),
        help=f"Items still needed / graded items per hour of grading time ({when.pace:,.1f} items/h).",
    )
    if reading.done:
        st.success(stopping_words(reading))
        if waits := review.waiting_words(store, project.id):  # the report is final once they are settled
            st.warning(waits)
    elif reading.held_by_skips:  # no forecast to give: the rule waits for the skipped items, not for more grades
        st.warning(stopping_words(reading))
    else:  # where grading stands and what is left first; how the looks are read under it, in small type
        st.info(
            f"{stopping_words(reading, brief=True)} About **{counted(when.items_left, 'more item')}**: "
            f"{grades_words(f.n, f.low, f.high)} in all, {duration(when.hours)} of grading at the current pace (ETA)."
        )
        if how := looks_words(reading):
            st.caption(how)
    if disagree := expected_score_words(reading, project.settings.expected_score):
        st.warning(disagree)


def validated_row(design) -> None:
    """The estimate corrected for graders' errors on the random reviewed sample, where the project has one."""
    if not review.validates(project.settings):
        return
    v = review.validated(store, project.id, design)
    if v.value != v.value:  # NaN: too few validation items yet (core.stats.validation.MIN_VALIDATION)
        st.caption("Corrected for graders' errors: waiting for double-graded or audited items to be checked.")
        return
    settled, disagree = review.disagreements_settled(store, project.id)
    st.caption(
        f"Corrected for graders' errors: **{v.value:.3f}**, {v.level:.0%} interval {v.ci_low:.3f} – "
        f"{v.ci_high:.3f} (first grades corrected by {v.correction:+.3f}, measured on {v.validation:,} "
        f"random double-graded or audited items; {settled:,} of their {counted(disagree, 'disagreement')} settled "
        "by a reviewer, the others read as the graders' mean). The estimand: the reviewed grade where a reviewer "
        "settled an item, the mean grader's grade elsewhere."
    )


def _missing_strata(now: Live, design: Design, strata: pd.DataFrame) -> None:
    """The strata still without a grade, and the strata table, in place of an estimate."""
    missing = now.estimate.missing
    share = float(design.weights[list(missing)].sum())
    st.warning(
        f"No estimate yet: {without_grades(missing, share)}. "
        f"The queue grades every stratum first, so the estimate appears within a few grades. "
        f"{headline_words(now.reading, LEVEL)}."
    )
    st.dataframe(shown(strata), hide_index=True, width="stretch")


def _headline_row(now: Live, design: Design) -> None:
    """The estimate, the interval the stopping rule reads (with the fixed-n and anytime intervals in its help),
    the graded items and the saving against uniform sampling."""
    e, anytime, reading = now.estimate, now.anytime, now.reading
    cols = st.columns(4)
    value, when = reported_estimate(reading, e)
    cols[0].metric(
        f"Estimated {mean_grade_words(project.settings)}" + (" at the stop" if when else ""),
        f"{value:.3f}",
        help=f"{e.method} estimator" + (f", {when}" if when else "") + scale_words(project.settings, value),
    )
    cols[1].metric(
        interval_label(reading),
        f"{reading.now.low:.3f} – {reading.now.high:.3f}",
        delta=f"{reading.now.half_width:.3f}",  # the half-width, not "±": the interval need not be centred
        delta_description=f"half-width, target {reading.target:.3f}",
        **plan.NOTE,
        help=f"Shown: {reading.now.name}. "
        + looks_level_words(reading)
        + ("Without the skipped items' worst case (as the chart draws them): " if reading.skipped else "")
        + f"fixed-n interval now {e.ci_low:.3f} – {e.ci_high:.3f}; anytime-valid {anytime.low:.3f} – "
        f"{anytime.high:.3f} (its bets tuned for n0 = {anytime.n0:,} grades, fixed before grading as its validity "
        "needs: the forecast since may differ).",
    )
    cols[2].metric(
        "Graded items", f"{e.n:,} of {design.N:,}", help="Distinct items with at least one grade (the estimate's n)."
    )
    cols[3].metric(*saving_metric(reading), delta=saving_note(reading), **plan.NOTE, help=saving_words(reading))


CRITERIA_PER_ROW = 4


def criteria_row(now: Live, design: Design) -> None:
    """A rubric's criteria, a panel each (estimate, the interval to report, graded items), under the sentence
    naming the criterion the stopping rule and the forecast read; nothing in a one-question project."""
    words = design_criterion_words(project.settings)
    if words is None:
        return
    st.header("Criteria")
    st.caption(words)
    readings = criteria_now(
        store, project.id, design, project.settings, method, anytime=lambda g: plan.anytime_of(project, g), primary=now
    )
    columns = []
    for k, r in enumerate(readings):
        if k % CRITERIA_PER_ROW == 0:
            columns = st.columns(CRITERIA_PER_ROW)
        with columns[k % CRITERIA_PER_ROW].container(border=True, key=f"criterion-{k}"):
            st.metric(r.name + (" (primary)" if r.primary else ""), r.value_words, help=r.estimand)
            st.caption(f"{r.interval_words}. {r.answered}.")


def _path_section(graded: dict[int, float]) -> None:
    """The estimate and its intervals against the number of grades."""
    st.header("Estimate against the number of grades")
    st.altair_chart(path_chart(plan.estimate_path_of(project, graded, method)), width="stretch")
    st.caption(PATH_NOTE)


def _strata_and_graders(now: Live, strata: pd.DataFrame, grades: pd.DataFrame) -> None:
    """The strata with the skips' bound, and under them the graders' pace with their agreement: each the page's
    width (side by side, at 1,280 px the strata's last column and the graders' "median s" and "last grade" were
    cut off: a manager's review)."""
    skips = now.skips
    st.header("Strata")
    st.dataframe(shown(strata), hide_index=True, width="stretch")
    st.caption(
        "*planned*: the grades per stratum the surrogate's spreads gave this many grades before any grade; "
        "*done*: those given, which follow the grades as they come (shares proportional to the strata's sizes "
        "until their grades differ, then the spreads the grades show) and the items skipped."
    )
    st.caption(skips_words(skips_section(skips, now.skip_steps), digits=3))
    st.header("Graders")
    graders_table(grades)
    st.caption(plain_text(agreement_words(store, project.id, grades, project.settings)))


@st.fragment(run_every=REFRESH_S)
def live() -> None:
    """Re-reads the grades every few seconds, so the page follows graders working elsewhere; and the
    viewer's account, role and assignment, since a fragment's reruns skip the page's gate."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    now = plan.live_of(project, method)
    if now.estimate.n == 0:
        st.info(f"No grade yet: grade a few items and the estimate appears here. {headline_words(now.reading, LEVEL)}.")
        return
    strata = now.estimate.strata.assign(skipped=now.skips.table["skipped"])
    if now.estimate.missing:
        _missing_strata(now, design, strata)
        return
    grades = store.grades(project.id)
    _headline_row(now, design)
    criteria_row(now, design)
    validated_row(design)
    pace_row(grades, now.reading)
    _path_section(now.graded)
    _strata_and_graders(now, strata, grades)


live()
