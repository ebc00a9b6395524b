"""Presenter view for demos: one screen, large type, the estimate converging against uniform sampling's band,
live as someone grades (the same data and access rule as the dashboard)."""

from __future__ import annotations

import html

import streamlit as st

from core.services import auth
from core.services.progress import budget_reading, counts, project_stopping, saving_headline
from core.services.tracking import PATH_NOTE, current_estimate
from ui import access, plan, signin, state
from ui.charts import path_chart

store = state.store()
project = state.require_ready_project()
signin.require(auth.VIEW_DASHBOARD, project.id)
REFRESH_S = 2.0
STYLE = """<style>
.ag-big{font-size:clamp(2.6rem,7vw,5.5rem);font-weight:700;line-height:1.05;margin:0}
.ag-sub{font-size:clamp(1.1rem,2.4vw,1.8rem);color:#777;margin:.2em 0 .6em}
.ag-row{display:flex;flex-wrap:wrap;gap:1.5em 3em;align-items:baseline}
</style>"""


def big(value: str, sub: str) -> str:
    return f'<div><p class="ag-big">{html.escape(value)}</p><p class="ag-sub">{html.escape(sub)}</p></div>'


@st.fragment(run_every=REFRESH_S)
def live() -> None:
    """Re-reads the grades every REFRESH_S seconds; rechecks access (a fragment's reruns skip the page's gate)."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    graded = store.graded_positions(project.id)
    method = project.settings["method"]
    e = current_estimate(design, graded, method)
    done = counts(store.grades(project.id))
    st.markdown(f"## {html.escape(project.name)}: mean grade, live")
    if e.n == 0 or e.missing:
        st.html(STYLE + big("waiting", f"{e.n} of {design.N:,} items graded: every stratum needs a grade first"))
        return
    anytime = plan.anytime_of(project, graded)
    rule = project_stopping(project.settings, design.N, anytime, e)
    cells = [
        big(
            f"{e.value:.3f}",
            f"{e.level:.0%} interval {e.ci_low:.3f} – {e.ci_high:.3f} {budget_reading(e.n, rule.budget)}"
            if rule.budget is not None
            else f"{anytime.level:.0%} interval {anytime.low:.3f} – {anytime.high:.3f}, valid whenever grading stops",
        ),
        big(f"{e.n:,}", f"of {design.N:,} items graded ({done.grades:,} grades)"),
        big(*saving_headline(e)),
    ]
    st.html(STYLE + '<div class="ag-row">' + "".join(cells) + "</div>")
    st.altair_chart(
        path_chart(plan.estimate_path_of(project, graded, method), height=420, font_size=16), width="stretch"
    )
    st.caption(
        PATH_NOTE
        + " "
        + (f"Budget of {rule.budget:,} items" if rule.budget is not None else f"Target ±{rule.target:.3f}")
        + (": reached." if rule.met else ": not yet.")
    )


live()
