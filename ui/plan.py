"""Cached items and design of a prepared project, and the setup section a manager reads: the headline (items to
grade for the target), the stratifying variable and its strata, the planned allocation as a picture beside the
reading's saving against uniform sampling (core.services.reading: the one forecast and the one saving)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.services import live, setup
from core.services.database import ProjectInfo
from core.services.overview import (
    NAME_OF,
    Warnings,
    histogram,
    preparation_warnings,
    strata_table,
    stratifying_columns,
)
from core.services.reading import Reading, headline_words, saving_metric, saving_note, saving_words
from core.services.setup import LEVEL, AnytimeInterval, Design
from core.services.tracking import estimate_path
from ui import state
from ui.glossary import term_help, terms_popover

NOTE = {"delta_color": "off", "delta_arrow": "off"}
"""A metric's ``delta`` used as a grey note under its value (what a figure is read against, why it is withheld),
not as a change: no colour, no arrow."""

MIN_BUDGET = 10


@st.cache_resource(max_entries=16, show_spinner="Loading items...")
def _items(url: str, project_id: int, prepared_at: str) -> pd.DataFrame:
    return state.store().load_items(project_id)


@st.cache_resource(max_entries=16, show_spinner=False)
def _design(key: tuple[str, int, str, str]) -> Design:
    url, project_id, prepared_at, regime = key
    return setup.design_of(_items(url, project_id, prepared_at), regime)


def _key(project: ProjectInfo) -> tuple[str, int, str]:
    # items change only when a preparation finishes, which also stamps updated_at
    return str(state.store().engine.url), project.id, project.updated_at.isoformat()


def _design_key(project: ProjectInfo) -> tuple[str, int, str, str]:
    """The items' key and the one setting the design reads besides them: the stopping regime
    (core.stats.design.prepared_design)."""
    return (*_key(project), project.settings.stopping)


def items(project: ProjectInfo) -> pd.DataFrame:
    """The project's prepared items (shared, read-only)."""
    return _items(*_key(project))


def design(project: ProjectInfo) -> Design:
    """The project's sampling design (shared, read-only)."""
    return _design(_design_key(project))


def live_of(project: ProjectInfo, method: str, graded: dict[int, float] | None = None) -> live.Live:
    """core.services.live.live_reading of the project's grades now (or ``graded``), with the cached design and
    anytime interval: what the live pages render."""
    return live.live_reading(
        state.store(), project.id, design(project), project.settings, method, lambda g: anytime_of(project, g), graded
    )


def reading_of(project: ProjectInfo, graded: dict[int, float], method: str = "default") -> Reading:
    """The reading of ``graded`` (``live_of``'s)."""
    return live_of(project, method, graded).reading


NO_SURROGATE = "No item has a surrogate sample: this design is uniform random sampling, and saves nothing against it."
"""Said in place of a saving, and of a forecast from the surrogate, where no item has a surrogate sample (a
manager's review: the setup page planned +1% and a range "from the surrogate alone" for a pool uploaded alone)."""


def headline(reading: Reading, expected: float | None, uniform: bool = False) -> None:
    """The setup's headline (core.services.reading.headline_words) and where its forecast comes from
    (``expected``: the mean grade the manager expects, None for the surrogate's guess; ``uniform``: no item has
    a surrogate sample, core.services.overview.Warnings.uniform)."""
    with st.container(border=True, key="setup-headline"):
        st.markdown(f"### {headline_words(reading, LEVEL)}", help=term_help("half-width (±)"))
        source = forecast_source(reading, expected)
        if uniform:
            source = f"{NO_SURROGATE} {source if reading.graded or expected is not None else ''}".strip()
        st.caption(
            f"Stopping: {reading.regime_name}. {source} "
            + (saving_words(reading) + " " if reading.saving_known and not uniform else "")
            + "The target is a grading setting below."
        )


def forecast_source(reading: Reading, expected: float | None) -> str:
    """Where the headline's range comes from, in words."""
    f = reading.forecast
    if reading.budget_fixed:
        return "The budget sets the precision; the target does not stop it."
    if reading.done:
        return f"The rule said done at {reading.stop_at:,} graded items."
    if f.graded:
        return f"An 80% range for the grades to the stop, from the {f.graded:,} grades so far."
    if expected is not None:
        return (
            f"An 80% range for the grades to the stop, from the mean grade you expect ({expected:.3f}), before any "
            "grade: only as good as that guess."
        )
    return (
        "An 80% range for the grades to the stop, from the surrogate alone, before any grade: only as good as the "
        "surrogate's idea of the pool's mean (give the mean grade you expect in the settings below if you know it)."
    )


def stratifying_overview(project: ProjectInfo, warned: Warnings) -> None:
    """The stratifying variable's histogram, coloured by stratum, beside the strata with that variable's ranges,
    and the preparation's ``warned`` warnings (core.services.overview.preparation_warnings, read once a page)."""
    items_ = items(project)
    by = project.settings.stratify_by
    column = stratifying_columns(by)[-1]  # "both": the agreement split within entropy strata is shown
    term = "semantic entropy" if column == "semantic_entropy" else "agreement"
    left, right = st.columns([2, 3])  # the table's columns need more room than the chart (cut at 1,280 px halved)
    with left:
        st.subheader(f"Stratified by {NAME_OF[column]}", help=term_help(term))
        chart = (
            alt.Chart(histogram(items_, column))
            .mark_bar()
            .encode(
                x=alt.X("from:Q", bin="binned", title=NAME_OF[column]),
                x2="to:Q",
                y=alt.Y("sum(items):Q", title="items"),
                color=alt.Color("stratum:N", title="stratum"),
                tooltip=[
                    "stratum:N",
                    alt.Tooltip("from:Q", format=".2f"),
                    alt.Tooltip("to:Q", format=".2f"),
                    "items:Q",
                ],
            )
        )
        st.altair_chart(chart.properties(height=260), width="stretch")
        st.caption(
            "Bars coloured by stratum show where each stratum's items lie. "
            + (
                "Semantic entropy peaks at ln K when all K samples disagree."
                if column == "semantic_entropy"
                else "Agreement 1: every sample agrees with the graded answer; 0: none does."
            )
        )
        if warned.design:
            (st.warning if warned.uniform else st.caption)(f"{warned.design}.")
        for words in (warned.strata, warned.pool):
            if words:
                st.warning(f"{words}.")
    with right:
        st.subheader("Strata", help=term_help("stratum"))
        table = strata_table(items_, by).round(3)
        st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            column_config={  # one variable's range as "from" and "to": "agreement from" was cut at 1,280 px
                c: st.column_config.NumberColumn(
                    c.split()[-1] if len(stratifying_columns(by)) == 1 and c.endswith((" from", " to")) else c,
                    width="small" if c in ("stratum", "items", "share") else None,
                    help=c,
                )
                for c in table.columns
            },
        )
        count = design(project).H
        st.caption(
            "One stratum: the surrogate's doubt does not split this pool, so the queue is a uniform random sample."
            if count == 1
            else f"{count} strata, numbered from the least to the most surrogate doubt."
        )


def allocation_chart(table: pd.DataFrame) -> alt.Chart:
    """Grades per stratum: the planned (Neyman-like) allocation beside the proportional one."""
    long = table.melt(id_vars="stratum", value_vars=["planned grades", "proportional"], var_name="plan")
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("stratum:N", title="stratum", axis=alt.Axis(labelAngle=0)),
            xOffset="plan:N",
            y=alt.Y("value:Q", title="grades"),
            color=alt.Color("plan:N", title=None, legend=alt.Legend(orient="top")),
            tooltip=["stratum:N", "plan:N", "value:Q"],
        )
        .properties(height=240)
    )


def show_planned_allocation(project: ProjectInfo, reading: Reading, uniform: bool = False) -> None:
    """The budget and where its grades will go (picture and table), beside the reading's saving against uniform
    sampling at the stop (or the forecast stop); none where no item has a surrogate sample (``uniform``)."""
    d = design(project)
    st.subheader("Planned allocation", help=term_help("Neyman allocation"))
    if d.N > MIN_BUDGET:
        start = reading.forecast.n  # the headline's: the stop itself once the rule has said done
        budget = st.slider(  # keyed by its default too: a new forecast resets it
            "Grading budget (items)",
            MIN_BUDGET,
            d.N,
            min(max(MIN_BUDGET, start), d.N),
            key=f"budget-{project.id}-{start}",
            help="Where a budget of this many grades would go (the picture and the table). It starts at the "
            "headline's figure: the forecast stop (the stop, once the rule has said done; a budget fixed in "
            "advance, where one is); the saving beside it is at the stop, whatever this says.",
        )
    else:  # a slider from MIN_BUDGET to N would have no range
        budget = d.N
        st.caption(f"Grading budget: all {d.N:,} items.")
    table = setup.allocation_table(d, budget)
    left, right = st.columns([3, 1])
    left.altair_chart(allocation_chart(table), width="stretch")
    expected = project.settings.expected_score
    left.caption(
        "Where the grades will go: more to strata whose grades are predicted to vary most (planned), against "
        "spreading them by stratum size (proportional, what uniform sampling does on average)."
        + (
            f" The predicted means are the surrogate's, which the queue starts from; the forecast reads the mean "
            f"you expect ({expected:.3f}) instead, and the grades take over both."
            if expected is not None
            else ""
        )
    )
    left.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            name: st.column_config.NumberColumn(name, help=term_help(term))
            for name, term in (
                ("predicted mean grade", "predicted mean grade"),
                ("predicted spread", "predicted spread"),
                ("planned grades", "Neyman allocation"),
                ("proportional", "proportional"),
            )
        },
    )
    s = reading.saving
    if uniform:
        right.metric("Planned saving", "none", help=NO_SURROGATE)
        return
    right.metric(
        *saving_metric(reading),
        delta=saving_note(reading),
        **NOTE,
        help=f"{term_help('saving vs uniform')} "
        + (
            saving_words(reading)
            if reading.saving_known
            else "Planned before any grade: the forecast stop against uniform random sampling with its usual "
            "fixed-n interval and stopped by the same rule, both for correct/incorrect grades at the surrogate's "
            "predicted mean (or the one you expect); withheld once grading has begun until every stratum has 2 "
            "grades, as on the dashboard."
        ),
    )
    if s.uniform_fixed is not None and (reading.saving_known or reading.graded == 0):
        if reading.budget_half_width is not None:  # a budget fixed in advance
            at = f"the budget ({reading.forecast.n:,} grades)"
        else:
            at = (
                f"the stop ({reading.stop_at:,} graded items)"
                if reading.done
                else f"the forecast stop ({reading.forecast.n:,})"
            )
        right.caption(
            f"At {at}: uniform random sampling would need about {s.uniform_fixed:,} grades for the same "
            "precision (with its usual fixed-n interval)."
        )


def project_reading(project: ProjectInfo) -> Reading:
    """The project's reading of its grades now with its own estimator: the setup section's and the settings'."""
    return reading_of(project, state.store().graded_positions(project.id), project.settings.method)


def show_setup(project: ProjectInfo, reading: Reading) -> None:
    """The setup section of a prepared project, for those who may see its strata, from its ``reading``
    (project_reading, read once for the page)."""
    warned = preparation_warnings(items(project), project.settings.proxy)
    headline(reading, project.settings.expected_score, warned.uniform)
    terms_popover()
    stratifying_overview(project, warned)
    show_planned_allocation(project, reading, warned.uniform)


@st.cache_data(max_entries=64, show_spinner=False)
def _path(key: tuple, positions: tuple, grades: tuple, method: str, n0: int | None) -> pd.DataFrame:
    anytime = None if n0 is None else _anytime(key, positions, grades, n0)
    return estimate_path(_design(key), list(positions), list(grades), method=method, anytime=anytime)


@st.cache_data(max_entries=64, show_spinner=False)
def _anytime(key: tuple, positions: tuple, grades: tuple, n0: int) -> AnytimeInterval:
    return setup.anytime_after(_design(key), positions, grades, n0)


def anytime_n0_of(project: ProjectInfo) -> int:
    """The n0 the project's anytime interval is tuned for (ProjectSettings.anytime_n0: a forecast before any
    grade unless a budget is planned, which core keeps per design and settings)."""
    return project.settings.anytime_n0(design(project))


def anytime_of(project: ProjectInfo, graded: dict[int, float]) -> AnytimeInterval:
    """core.stats.confseq's anytime interval after ``graded``, tuned for the project's n0 (`anytime_n0_of`),
    computed once per set of grades: the interval of the live dashboard and its stopping rule."""
    return _anytime(_design_key(project), tuple(graded), tuple(graded.values()), anytime_n0_of(project))


def estimate_path_of(project: ProjectInfo, graded: dict[int, float], method: str) -> pd.DataFrame:
    """core.services.tracking.estimate_path, computed once per set of grades (the dashboard refreshes often),
    with the stopping rule's anytime interval unless the budget is fixed in advance."""
    n0 = setup.path_n0(project.settings, anytime_n0_of(project))
    return _path(_design_key(project), tuple(graded), tuple(graded.values()), method, n0)
