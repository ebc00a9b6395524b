"""The Dashboard of a comparison project: each model's estimate, each difference with its interval, win / tie /
loss counts and the plain statement of which differences are resolved (core.services.comparison_reading), the
graders' pace and the items waiting for review. Rendered only."""

from __future__ import annotations

import streamlit as st

from core.inputs.markup import one_line_plain
from core.services import review
from core.services.comparison_reading import DECIDED_WORDS, comparison_reading, statement
from core.services.database import ProjectInfo, Store
from core.services.progress import level_percent
from ui import plan
from ui.graders_table import graders_table

THREE_DECIMALS = {
    c: st.column_config.NumberColumn(format="%.3f")
    for c in ("estimate", "se", "low", "high", "anytime_low", "anytime_high")
}
"""Every estimate and end with three decimals ("0.080" beside "0.405", not "0.08")."""


CENSUS = (
    "Every item is graded for every model: these are the pool's own scores, with no sampling error left, so each "
    "interval is a single point."
)
"""What the panel says once the whole pool is graded (a grader's review read the intervals' zero width as a fault)."""


def panel(store: Store, project: ProjectInfo) -> None:
    design = plan.design(project)
    reading = comparison_reading(store, project.id, design)
    level = level_percent(reading.level)
    st.metric("Items graded for every model", f"{reading.graded_items:,}")
    if project.settings.budget_fixed:  # the comparison's stopping rule: its fixed-n intervals hold at the budget
        budget = project.settings.budget(design.N)
        st.caption(
            f"Budget fixed in advance: {budget:,} items, at which the queue closes and these fixed-n intervals are "
            f"read; {'done' if reading.graded_items >= budget else f'{budget - reading.graded_items:,} to go'}."
        )
    st.header("Models")
    st.caption(f"Each model's mean grade on the items graded for every model, stratified; intervals at {level}.")
    if reading.graded_items == design.N:
        st.caption(CENSUS)
    st.dataframe(
        reading.model_table(),
        hide_index=True,
        column_config=THREE_DECIMALS,
    )
    st.header("Differences")
    st.caption(
        f"mean(A) - mean(B) on the items graded for both, stratified; intervals at {level} each so that all "
        "pairs hold together at 95%. low and high: the fixed-n interval, valid read once at a size chosen before "
        "grading; anytime low and high: valid however often it is read and whenever grading stops. Wins, ties "
        "and losses count A's items."
    )
    st.dataframe(reading.table(), hide_index=True, column_config=THREE_DECIMALS)
    st.markdown(f"**{one_line_plain(statement(reading))}**")  # models' names as written, never markdown
    st.caption(f"Which difference is resolved is {DECIDED_WORDS[reading.decided_by]}.")
    st.header("Graders")
    graders_table(store.target_grades(project.id))
    st.caption(f"A grade is one response graded. {review.waiting_words(store, project.id)}")
