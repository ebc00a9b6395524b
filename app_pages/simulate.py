"""Simulate: on a project whose pool has known labels, replay every method many times and compare them."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.design import planned_budget
from core.errors import InputError
from core.simulate import DEFAULT_BUDGETS, METHODS, ORACLES, simulate
from ui import plan, state

project = state.require_ready_project()
st.title("Simulate")
items = plan.items(project)
if "label" not in items.columns or items["label"].isna().all():
    st.info(f"Project **{project.name}** has no `label` column: the simulator needs a pool whose every item is graded.")
    st.stop()
st.caption(
    f"Replays the grading of **{project.name}** ({len(items):,} items) with the pool's labels standing in for the "
    "grader: every method, at every budget, many times, with this project's own strata and settings. "
    "Error is the mean squared error against the true mean; every figure has its Monte Carlo standard error (± s.e.)."
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
    more = st.columns(3)
    n0 = more[0].number_input(
        "Planned budget n0 (grades)",
        1,
        len(items),
        planned_budget(project.settings, len(items)),
        help="The anytime interval (valid however and whenever grading stops) is tuned for this many grades.",
    )
    skip_wrong = more[1].number_input("Graders skip wrong items", 0.0, 0.95, 0.0, step=0.05, format="%.2f")
    skip_right = more[2].number_input("Graders skip right items", 0.0, 0.95, 0.0, step=0.05, format="%.2f")
    methods = st.multiselect(
        "Methods",
        METHODS,
        default=list(METHODS),
        format_func=lambda m: f"{m} (reads every label)" if m in ORACLES else m,
    )
    run = st.form_submit_button("Run the simulation", type="primary")

key = f"simulation-{project.id}"
if run and not (budgets and methods):
    st.error("Choose at least one budget and one method to simulate.")
elif run:
    try:
        with st.spinner("Simulating..."):
            st.session_state[key] = simulate(
                items,
                budgets,
                reps=int(reps),
                seed=int(seed),
                methods=methods,
                n0=int(n0),
                skip_wrong=float(skip_wrong),
                skip_right=float(skip_right),
                design=plan.design(project),
            )
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
frame["note"] = frame["method"].map(result["notes"])
st.markdown(
    f"Pool of **{result['N']:,}** items, true mean grade **{result['mu']:.4f}**; anytime intervals tuned for "
    f"n0 = {result['n0']:,} grades. "
    + " ".join(f"`{m}` {result['notes'][m]}." for m in result["notes"] if m in ORACLES)
)


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
middle.altair_chart(
    chart("coverage_anytime", "coverage of the anytime 95% interval, at every n", ".0%"), width="stretch"
)
right.altair_chart(chart("budget_saving", "budget saved vs uniform", ".0%"), width="stretch")
st.dataframe(frame.round(4), hide_index=True, width="stretch")
