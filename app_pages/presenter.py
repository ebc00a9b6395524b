"""Presenter view for demos: one screen, large type, the estimate converging against uniform sampling's band,
live as someone grades (the same data and access rule as the dashboard). Its title row leads back to the
Dashboard and puts the page in full screen; a rubric's criteria sit side by side above the chart, whose height
is what the window leaves."""

from __future__ import annotations

import html

import streamlit as st

from core.inputs.markup import one_line_plain
from core.services import auth
from core.services.comparison_reading import comparison_reading, statement
from core.services.criteria_reading import criteria_now, design_criterion_words, headline_scale, mean_grade_words
from core.services.live import Design, Live
from core.services.progress import counted, counts, level_percent
from core.services.reading import (
    interval_when,
    reported_estimate,
    reported_level,
    saving_headline,
    status_short,
)
from core.services.tracking import PATH_LEGEND, PATH_NOTE
from ui import access, plan, signin, state
from ui.charts import path_chart

store = state.store()
project = state.require_ready_project()
signin.require(auth.VIEW_DASHBOARD, project.id)
REFRESH_S = 2.0
STYLE = """<style>
.ag-big{font-size:clamp(2rem,min(5.5vw,7vh),5.5rem);font-weight:700;line-height:1.05;margin:0}
.ag-sub{font-size:clamp(.9rem,min(1.6vw,2.3vh),1.5rem);opacity:.75;margin:.15em 0 .3em}
.ag-criteria{font-size:clamp(.8rem,min(1.2vw,1.9vh),1.15rem);border-collapse:collapse;margin:0;white-space:nowrap}
.ag-criteria td{padding:0 1.4em 0 0;text-align:left;border:none}
.ag-criteria td.ag-criterion{font-size:1.35em;font-weight:700}
.ag-row{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.5em 2.5em;align-items:baseline}
@media (max-width:700px){.ag-row{grid-template-columns:1fr}}
</style>"""
# The live figures, criteria and chart fill the window below the title row: the chart stretches over the height
# the rest leaves (one screen at 1920x1080, 1400x1000 and 1280x720: tests/e2e/test_presenter_screen.py)
SCREEN_HEIGHT = """<style>
[data-testid="stLayoutWrapper"]:has(>.st-key-ag-screen){flex:0 0 calc(100vh - 6.4rem) !important;height:auto !important}
.st-key-ag-screen{height:100% !important;overflow:hidden}
</style>"""
# this page alone is the whole screen: no sidebar, no header, no banner (the title row's link leads back)
SCREEN = """<style>
[data-testid="stSidebar"],[data-testid="stSidebarCollapsedControl"],[data-testid="stHeader"],
.st-key-open-demo-banner{display:none !important}
[data-testid="stMainBlockContainer"]{padding:.6rem 2.5rem 0;max-width:100%}
</style>"""
# the browser's Fullscreen API on the whole page (the screen without the browser's bars); Esc or a second press
# leaves it
FULL_SCREEN = """<button class="ag-full-screen" type="button">Full screen</button>
<script>
for (const button of document.querySelectorAll("button.ag-full-screen")) {
  button.onclick = () => document.fullscreenElement ? document.exitFullscreen()
    : document.documentElement.requestFullscreen();
}
</script>"""


def big(value: str, sub: str) -> str:
    return f'<div><p class="ag-big">{html.escape(value)}</p><p class="ag-sub">{html.escape(sub)}</p></div>'


def criteria_table(live_now: Live, design: Design, method: str) -> str:
    """A rubric's criteria side by side, a column each (name, estimate, interval, graded items), under the
    sentence naming the criterion the figures above read: three lines whatever their number, so the chart keeps
    its room; "" in a one-question project."""
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
    rows = (
        [r.name for r in readings],
        [r.value_words for r in readings],
        [f"{r.now.low:.3f} – {r.now.high:.3f}" if r.known else "waiting" for r in readings],
        [f"{r.graded:,} of {r.cards:,} items" for r in readings],
    )
    body = "".join(
        f"<tr>{''.join(f'<td{cls}>{html.escape(cell)}</td>' for cell in row)}</tr>"
        for row, cls in zip(rows, ("", ' class="ag-criterion"', "", ""), strict=True)
    )
    return f'<p class="ag-sub">{html.escape(words)}</p><table class="ag-criteria">{body}</table>'


def title_row() -> None:
    """The project's name, a link back to the Dashboard and the full-screen button, on one line."""
    name, back, full = st.columns([8, 1.2, 1.2], vertical_alignment="center")
    name.markdown(f"## {one_line_plain(project.name)}: {one_line_plain(mean_grade_words(project.settings))}, live")
    back.page_link("app_pages/dashboard.py", label="Dashboard")  # no icon: cut to "Dashbo" at 900 px with one
    with full:
        st.html(FULL_SCREEN, unsafe_allow_javascript=True)


def _state(reading) -> str:
    """The caption's words on the rule: where it said done, ": reached at 172 grades." (the saving beside it is
    counted there, not at the grades graded since: a done rule stays done); while skips hold it, how many items
    it waits for; else ": not yet."."""
    if reading.done:
        return ": reached." if reading.stop_at is None else f": reached at {reading.stop_at:,} graded items."
    if reading.held_by_skips:
        return f": not yet, {counted(reading.skipped, 'skipped item')} to grade first."  # the count's cell says more
    return ": not yet."


@st.fragment(run_every=REFRESH_S)
def live() -> None:
    """Re-reads the grades every REFRESH_S seconds; rechecks access (a fragment's reruns skip the page's gate)."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    method = project.settings.method
    live_now = plan.live_of(project, method)
    e, graded = live_now.estimate, live_now.graded
    done = counts(store.grades(project.id))
    if e.n == 0 or e.missing:
        st.html(STYLE + big("waiting", f"{e.n} of {design.N:,} items graded: every stratum needs a grade first"))
        return
    reading = live_now.reading
    now = reading.now
    value, _ = reported_estimate(reading, e)
    on_labels = headline_scale(project.settings).on_labels(value)  # a Likert mean on its own 1-5 too
    cells = [
        big(
            f"{value:.3f}",
            f"{level_percent(reported_level(reading))} interval {now.low:.3f} – {now.high:.3f}, {interval_when(reading)}"
            + (f" · {on_labels}" if on_labels else ""),
        ),
        big(f"{e.n:,}", f"of {design.N:,} items graded ({done.grades:,} grades) · {status_short(reading)}"),
        big(*saving_headline(reading)),
    ]
    with st.container(key="ag-screen", height=600, border=False):  # fixed: the chart stretches in it
        st.html(STYLE + '<div class="ag-row">' + "".join(cells) + "</div>" + criteria_table(live_now, design, method))
        st.altair_chart(
            path_chart(plan.estimate_path_of(project, graded, method), font_size=16), width="stretch", height="stretch"
        )
        st.caption(
            (f"Budget of {reading.budget:,} items" if reading.budget is not None else f"Target ±{reading.target:.3f}")
            + _state(reading)
            + f" {PATH_LEGEND}",
            help=PATH_NOTE,
        )


@st.fragment(run_every=REFRESH_S)
def comparison() -> None:
    """A comparison's screen: each model's mean grade with its interval, large, and which differences are
    resolved, as its Dashboard reads them (ui.comparison_panel): one score over its grades would mix the models."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    reading = comparison_reading(store, project.id, design)
    if reading.graded_items == 0:
        st.html(STYLE + big("waiting", f"0 of {design.N:,} items graded for every model"))
        return
    level = level_percent(reading.level)
    cells = [
        big(f"{value:.3f}", f"{model}: {level} interval {low:.3f} – {high:.3f}")
        for model, (value, low, high) in reading.models.items()
    ]
    cells.append(big(f"{reading.graded_items:,}", f"of {design.N:,} items graded for every model"))
    st.html(STYLE + '<div class="ag-row">' + "".join(cells) + "</div>")
    st.markdown(f"### {one_line_plain(statement(reading))}")  # models' names as written, never markdown


st.html(SCREEN + SCREEN_HEIGHT)
title_row()
if project.settings.compares:
    comparison()
else:
    live()
