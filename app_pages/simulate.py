"""Simulate: on a project whose pool has known labels, replay every method many times and compare them."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.errors import InputError
from core.simulate import DEFAULT_BUDGETS, METHODS, simulate
from ui import plan, state

project = state.require_ready_project()
st.title("Simulate")
items = plan.items(project)
if "label" not in items.columns or items["label"].isna().all():
    st.info(f"Project **{project.name}** has no `label` column: the simulator needs a pool whose every item is graded.")
    st.stop()
st.caption(
    f"Replays the grading of **{project.name}** ({len(items):,} items) with the pool's labels standing in for the "
    "grader: every method, at every budget, many times. Error is the mean squared error against the true mean."
)

with st.form("simulate"):
    cols = st.columns(3)
    budgets = cols[0].multiselect(
        "Budgets (share of the pool, or a count)",
        ["0.02", "0.05", "0.1", "0.2", "0.3", "0.5"],
        default=list(DEFAULT_BUDGETS),
    )
    reps = cols[1].number_input("Repetitions", 10, 5000, 200, step=50)
    seed = cols[2].number_input("Seed", 0, 2**31 - 1, int(project.settings["seed"]))
    methods = st.multiselect("Methods", METHODS, default=list(METHODS))
    run = st.form_submit_button("Run the simulation", type="primary")

key = f"simulation-{project.id}"
if run and not (budgets and methods):
    st.error("Choose at least one budget and one method to simulate.")
elif run:
    try:
        with st.spinner("Simulating..."):
            st.session_state[key] = simulate(items, budgets, reps=int(reps), seed=int(seed), methods=methods)
    except InputError as exc:
        st.error(str(exc))
result = st.session_state.get(key)
if result is None:
    st.stop()

frame = pd.DataFrame(
    [
        {"method": m, "budget": float(b), **row}
        for m, by_budget in result["methods"].items()
        for b, row in by_budget.items()
    ]
)
frame["budget share"] = frame["n"] / result["N"]
st.markdown(f"Pool of **{result['N']:,}** items, true mean grade **{result['mu']:.4f}**.")


def chart(column: str, title: str, fmt: str) -> alt.Chart:
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("budget share:Q", title="budget (share of the pool)", axis=alt.Axis(format="%")),
            y=alt.Y(f"{column}:Q", title=title, axis=alt.Axis(format=fmt)),
            color=alt.Color("method:N", legend=alt.Legend(orient="bottom", columns=4, title=None)),
            tooltip=["method", "n", alt.Tooltip(f"{column}:Q", format=fmt)],
        )
        .properties(height=300, title=title)
    )


left, middle, right = st.columns(3)
left.altair_chart(chart("mse_ratio", "MSE / uniform's MSE", ".2f"), width="stretch")
middle.altair_chart(chart("coverage", "coverage of the 95% interval", ".0%"), width="stretch")
right.altair_chart(chart("budget_saving", "budget saved vs uniform", ".0%"), width="stretch")
st.dataframe(frame.round(4), hide_index=True, width="stretch")
