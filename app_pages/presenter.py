"""Presenter view for demos: one screen, large type, the estimate converging against uniform sampling's band,
live as someone grades (the same data and access rule as the dashboard)."""

from __future__ import annotations

import html

import streamlit as st

from core.services import auth
from core.services.criteria_reading import criteria_now, design_criterion_words, mean_grade_words
from core.services.live import Design, Live
from core.services.progress import counts
from core.services.reading import interval_when, saving_headline
from core.services.tracking import PATH_NOTE
from ui import access, plan, signin, state
from ui.charts import path_chart

store = state.store()
project = state.require_ready_project()
signin.require(auth.VIEW_DASHBOARD, project.id)
REFRESH_S = 2.0
# px: with the figures above it, one screen at 1400x1000 and 1920x1080 (tests/e2e/test_presenter_screen.py)
CHART_HEIGHT = 480
STYLE = """<style>
.ag-big{font-size:clamp(2.4rem,min(6vw,8vh),5.5rem);font-weight:700;line-height:1.05;margin:0}
.ag-sub{font-size:clamp(1rem,min(1.8vw,2.6vh),1.6rem);color:#777;margin:.2em 0 .4em}
.ag-criteria{font-size:clamp(.9rem,min(1.4vw,2vh),1.2rem);border-collapse:collapse;margin:0 0 .4em}
.ag-criteria td{padding:.1em .8em .1em 0}
.ag-row{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:1em 2.5em;align-items:baseline}
@media (max-width:700px){.ag-row{grid-template-columns:1fr}}
</style>"""
# this page alone is the whole screen: no sidebar, no header, no banner (the browser's back button leaves it)
SCREEN = """<style>
[data-testid="stSidebar"],[data-testid="stSidebarCollapsedControl"],[data-testid="stHeader"],
.st-key-open-demo-banner{display:none !important}
[data-testid="stMainBlockContainer"]{padding:1rem 2.5rem 0;max-width:100%}
</style>"""


def big(value: str, sub: str) -> str:
    return f'<div><p class="ag-big">{html.escape(value)}</p><p class="ag-sub">{html.escape(sub)}</p></div>'


def criteria_rows(live_now: Live, design: Design, method: str) -> str:
    """A rubric's criteria, one compact row each (estimate, interval, graded items), under the sentence naming
    the criterion the figures above read; "" in a one-question project."""
    words = design_criterion_words(project.settings)
    if words is None:
        return ""
    readings = criteria_now(
        store,
        project.id,
        design,
        project.settings,
        method,
        anytime=lambda g: plan.anytime_of(project, g),
        primary=live_now,
    )
    rows = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(cell)}</td>" for cell in (r.name, r.value_words, r.interval_words, r.answered))
        + "</tr>"
        for r in readings
    )
    return f'<p class="ag-sub">{html.escape(words)}</p><table class="ag-criteria">{rows}</table>'


@st.fragment(run_every=REFRESH_S)
def live() -> None:
    """Re-reads the grades every REFRESH_S seconds; rechecks access (a fragment's reruns skip the page's gate)."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    method = project.settings.method
    live_now = plan.live_of(project, method)
    e, graded = live_now.estimate, live_now.graded
    done = counts(store.grades(project.id))
    st.markdown(f"## {html.escape(project.name)}: {html.escape(mean_grade_words(project.settings))}, live")
    if e.n == 0 or e.missing:
        st.html(STYLE + big("waiting", f"{e.n} of {design.N:,} items graded: every stratum needs a grade first"))
        return
    reading = live_now.reading
    now = reading.now
    cells = [
        big(f"{e.value:.3f}", f"{now.level:.1%} interval {now.low:.3f} – {now.high:.3f}, {interval_when(reading)}"),
        big(f"{e.n:,}", f"of {design.N:,} items graded ({done.grades:,} grades)"),
        big(*saving_headline(reading)),
    ]
    st.html(STYLE + '<div class="ag-row">' + "".join(cells) + "</div>" + criteria_rows(live_now, design, method))
    st.altair_chart(
        path_chart(plan.estimate_path_of(project, graded, method), height=CHART_HEIGHT, font_size=16),
        width="stretch",
    )
    st.caption(
        PATH_NOTE
        + " "
        + (f"Budget of {reading.budget:,} items" if reading.budget is not None else f"Target ±{reading.target:.3f}")
        + (": reached." if reading.done else ": not yet.")
    )


st.html(SCREEN)
live()
