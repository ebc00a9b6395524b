"""Simulate: on a project whose pool has known labels, replay every method many times and compare them."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain
from core.services import auth, simulation
from core.services.outcome import Refused
from core.services.reading import grades_words
from core.services.simulation import LEVEL, METHOD_NOTES, METHODS, ORACLES
from ui import access, plan, signin, state

project = state.require_ready_project()
actor = signin.require(auth.SIMULATE, project.id)
st.title("Simulate")
items = plan.items(project)
if "label" not in items.columns or items["label"].isna().all():
    st.info(
        f"Project **{one_line_plain(project.name)}** has no `label` column: the simulator needs a pool whose every item is graded."
    )
    st.stop()
st.caption(
    f"Replays the grading of **{one_line_plain(project.name)}** ({len(items):,} items) with the pool's labels standing in for the "
    "grader: every method, at every budget, many times, with this project's own strata and settings. "
    "Error is the mean squared error against the true mean; every figure has its Monte Carlo standard error (± s.e.)."
)


settings = project.settings
store = state.store()
reading = plan.project_reading(project)
forecast = reading.forecast  # once done, the stop itself (core.services.reading): no forecast, no range
default_budgets, default_n0 = simulation.defaults(settings, plan.design(project), forecast.n)
source = f"with its {forecast.graded:,} grades so far" if forecast.graded else "before any grade"
if settings.compares:  # its reading and forecast are of one score, which would mix the models
    st.caption(
        "The defaults below are the design's own: a comparison has no forecast of one score (each model's figures "
        "are on the Dashboard), and the replay reads the pool's labels as one model's (docs/compare.md, "
        "*Simulator*, for the comparison's own replay from the command line)."
    )
elif reading.done and reading.stop_at is not None:
    st.caption(
        f"The defaults below are around the **{reading.stop_at:,}** grades at which the project's rule said done "
        f"({reading.graded:,} graded so far; Projects page)."
    )
elif reading.budget_half_width is not None:  # a budget fixed in advance: no target to reach, no range
    st.caption(
        f"The defaults below are around the project's fixed budget of **{forecast.n:,}** grades, at which it "
        f"expects an interval of about ±{reading.budget_half_width:.3f} (Projects page)."
    )
else:
    st.caption(
        f"The defaults below are around the grades the project's forecast, {source}, says "
        f"±{settings.target_half_width:.3f} needs: {grades_words(forecast.n, forecast.low, forecast.high)} "
        "(Projects page)."
    )
with st.form("simulate"):
    cols = st.columns(3)
    typed = cols[0].text_input(
        "Budgets: shares of the pool or counts of grades",
        ", ".join(default_budgets),
        key="sim_budgets",
        help="Comma-separated; a number up to 1 is a share of the pool (0.05 = 5%), a whole number above 1 a "
        "count of grades (50).",
    )
    budgets = [b.strip() for b in typed.split(",") if b.strip()]
    reps = cols[1].number_input("Repetitions", 10, 5000, 200, step=50)
    seed = cols[2].number_input("Seed", 0, 2**31 - 1, int(settings.seed))
    more = st.columns(3)
    n0 = more[0].number_input(
        "Planned budget n0 (grades)",
        1,
        len(items),
        default_n0,
        help="At the budgets above, the anytime interval (valid however and whenever grading stops) is tuned for "
        "this many grades. It starts at the project's own: the setup's forecast before any grade, which no grade "
        "moves (the interval's validity asks it be fixed first), so it can differ from the forecast now that the "
        "budgets are around. The run to the stop tunes each method as a project does (its planned budget, else its "
        "own forecast), as the command line does.",
    )
    skip_wrong = more[1].number_input("Graders skip wrong items", 0.0, 0.95, 0.0, step=0.05, format="%.2f")
    skip_right = more[2].number_input("Graders skip right items", 0.0, 0.95, 0.0, step=0.05, format="%.2f")
    methods = st.multiselect(
        "Methods",
        METHODS,
        default=list(METHODS),
        format_func=lambda m: f"{m}: {METHOD_NOTES[m]}",
    )
    run = st.form_submit_button("Run the simulation", type="primary")

if run and not (budgets and methods):
    st.error("Choose at least one budget and one method to simulate.")
elif run:
    try:
        simulation.start(
            store,
            actor,
            project.id,
            budgets=budgets,
            reps=int(reps),
            seed=int(seed),
            methods=methods,
            n0=int(n0),
            skip_wrong=float(skip_wrong),
            skip_right=float(skip_right),
        )
        state.ensure_worker()
    except (InputError, Refused) as exc:
        st.error(str(exc))
job = simulation.latest(store, actor, project.id)
if job is None:
    st.stop()
if job.state == "done" and (changes := simulation.changed_since(job.result, settings)):
    st.warning(
        f"The run below was made before the project's settings changed ({'; '.join(changes)}): its figures "
        "are for the settings it read. Run the simulation again for the current ones."
    )


@st.fragment(run_every=1.0)
def waiting() -> None:
    """Shows that the run goes on; the whole page reruns once it is done."""
    access.fragment_guard(auth.SIMULATE, project.id)
    if simulation.latest(store, signin.user(), project.id).state != "running":
        st.rerun()
    st.info("Simulating in the background: you can leave this page and come back; the result waits here.")


if job.state == "running":
    waiting()
    st.stop()
if job.state == "failed":
    st.error(job.error)
    st.stop()
result = job.result

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
    f"n0 = {result['n0']:,} grades; `activegrade` allocates "
    + f"for stopping at {simulation.regime_name(result)}. "
    + " ".join(f"`{m}` {result['notes'][m]}." for m in result["notes"] if m in ORACLES)
)


REFERENCE = {"mse_ratio": 1.0, "coverage_anytime": LEVEL, "coverage": LEVEL, "budget_saving": 0.0}
"""Where uniform sampling sits by definition (MSE ratio 1, saving 0) or the nominal level (coverage)."""


def chart(column: str, title: str, fmt: str) -> alt.LayerChart:
    """One figure against the number of grades: a line per method with its ±2 Monte Carlo s.e. band, and the
    reference uniform sampling (or the nominal level) defines, dashed."""
    data = frame.assign(low=frame[column] - 2 * frame[f"{column}_se"], high=frame[column] + 2 * frame[f"{column}_se"])
    x = alt.X("n:Q", title="grades (budget)")
    # one legend for the lines and their bands: drawn at the bands' opacity its swatches were faded
    legend = alt.Legend(orient="right", title="method", labelLimit=320, symbolOpacity=1)
    color = alt.Color("method:N", legend=legend)
    band = alt.Chart(data).mark_area(opacity=0.15).encode(x=x, y="low:Q", y2="high:Q", color=color)
    lines = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y(f"{column}:Q", title=title, axis=alt.Axis(format=fmt)),
            color=color,
            tooltip=["method", "n", alt.Tooltip(f"{column}:Q", format=fmt), alt.Tooltip(f"{column}_se:Q", format=fmt)],
        )
    )
    rule = (
        alt.Chart(pd.DataFrame({"y": [REFERENCE[column]]})).mark_rule(strokeDash=[6, 4], color="gray").encode(y="y:Q")
    )
    return (band + lines + rule).properties(height=380, title=title)


st.caption(
    "Every figure is a mean over the repetitions; the bands are ±2 Monte Carlo standard errors. With few "
    "repetitions even uniform sampling's own MSE ratio moves around 1 and its 'saving' around 0 from one seed to "
    "the next: differences inside the bands are noise. The dashed line is uniform sampling's value by "
    f"definition (MSE ratio 1, saving 0) or the nominal {LEVEL:.0%} for coverage."
)
figures = {
    "MSE against uniform": ("mse_ratio", "MSE / uniform sampling's MSE (lower is better)", ".2f"),
    "Coverage, anytime": (
        "coverage_anytime",
        f"share of runs whose anytime {LEVEL:.0%} interval held at every n",
        ".0%",
    ),
    "Coverage, fixed n": ("coverage", f"coverage of the fixed-n {LEVEL:.0%} interval at the budget", ".0%"),
    "Budget saved": ("budget_saving", "budget saved against uniform sampling at equal MSE", ".0%"),
}
for tab, (column, title, fmt) in zip(st.tabs(list(figures)), figures.values(), strict=True):
    tab.altair_chart(chart(column, title, fmt), width="stretch")
AS_PERCENT = {"budget_saving": st.column_config.NumberColumn(format="percent")}
"""Savings as percentages, as the Dashboard shows them (a manager's review read 0.0185 here beside +2% there)."""
st.dataframe(pd.DataFrame(simulation.budget_table(result)), hide_index=True, width="stretch")
with st.expander("Every figure, under the simulator's names"):
    st.dataframe(frame.round(4), hide_index=True, width="stretch", column_config=AS_PERCENT)

stop = simulation.stopping(result)
if stop is not None and stop.fixed:
    st.header(f"Grading the fixed budget of {stop.forecast[1]:,} grades")
    st.caption(
        "Each repetition grades the budget in the queue's order and reads the fixed-n interval there; "
        "`uniform` is plain random sampling of the same budget. The budget is fixed, so there is no target to "
        "reach and no range to forecast: the table gives the coverage of the interval read at the budget."
    )
    st.dataframe(pd.DataFrame(stop.table), hide_index=True, width="stretch")
elif stop is not None:
    st.header(f"Grading until the rule says ±{stop.target:.3f} is reached")
    st.caption(
        f"Each repetition grades in the queue's order and stops where the project's rule ("
        f"{simulation.regime_name(result)}) says done at the project's target, as a manager who stops when the "
        "dashboard says so (the target and the score you expect are the project's: change them on the Projects "
        "page); "
        "`uniform` is plain random sampling stopped by the same rule. For the same half-width a uniform random "
        f"sample read with the usual fixed-n interval needs {simulation.uniform_words(stop)}, from the grades the "
        "simulation reads, the pool's own; the setup's and the dashboard's figures are forecast from the surrogate (or the "
        "score you expect) and the grades so far, so they differ until the grades show the pool. The forecast "
        f"before any grade, {stop.forecast[1]:,} grades (likely {stop.forecast[0]:,} to {stop.forecast[2]:,}), "
        f"held the stop in {stop.forecast_hit:.0%} of the repetitions."
    )
    st.dataframe(pd.DataFrame(stop.table), hide_index=True, width="stretch")
