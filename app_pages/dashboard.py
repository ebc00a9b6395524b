"""Dashboard: the estimate and its interval now and along the way, strata, graders, the stopping rule."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core import auth
from core.agreement import agreement, level_of, summary
from core.estimate import DEFAULT_METHOD, METHODS
from core.skips import skip_bound
from core.tracking import current_estimate, grader_progress
from ui import access, plan, signin, state

store = state.store()
project = state.require_ready_project()
signin.require(auth.VIEW_DASHBOARD, project.id)
st.title("Dashboard")
ESTIMATORS = ["default", *METHODS]
method = st.sidebar.selectbox(
    "Estimator",
    ESTIMATORS,
    index=ESTIMATORS.index(project.settings["method"]),
    help=f"default: the {DEFAULT_METHOD} estimator (benchmarks/estimation.md). The report uses the "
    "project's estimator, set on the Projects page.",
)
REFRESH_S = 3.0


def path_chart(path: pd.DataFrame) -> alt.Chart:
    """Blue band: this design's interval; dashed grey lines: uniform sampling's interval at the same count."""
    x = alt.X("grades:Q", title="grades", axis=alt.Axis(tickMinStep=1, format="d"))
    y_scale = alt.Scale(domain=[0, 1])
    base = alt.Chart(path).encode(x=x)
    ours = base.mark_area(opacity=0.35, color="#1f77b4").encode(
        y=alt.Y("ci_low:Q", title="mean grade", scale=y_scale), y2="ci_high:Q"
    )
    line = base.mark_line(color="#1f3b73", strokeWidth=2).encode(y="estimate:Q")
    uniform = [
        base.mark_line(color="#7f7f7f", strokeDash=[6, 4]).encode(y=alt.Y(f"{bound}:Q", scale=y_scale))
        for bound in ("uniform_low", "uniform_high")
    ]
    return alt.layer(ours, *uniform, line).properties(height=320)


@st.fragment(run_every=REFRESH_S)
def live() -> None:
    """Re-reads the grades every few seconds, so the page follows graders working elsewhere; and the
    viewer's account, role and assignment, since a fragment's reruns skip the page's gate."""
    access.fragment_guard(auth.VIEW_DASHBOARD, project.id)
    design = plan.design(project)
    graded = store.graded_positions(project.id)
    e = current_estimate(design, graded, method)
    target = float(project.settings["target_half_width"])
    cols = st.columns(4)
    if e.n == 0:
        st.info("No grade yet: grade a few items and the estimate appears here.")
        return
    skips = skip_bound(design, graded, graded.values(), store.skipped_positions(project.id))
    strata = e.strata.assign(skipped=skips.table["skipped"])
    if e.missing:
        share = float(design.weights[list(e.missing)].sum())
        st.warning(
            f"No estimate yet: stratum {', '.join(map(str, e.missing))} ({share:.0%} of the pool) has no grade. "
            "The queue grades every stratum first, so the estimate appears within a few grades."
        )
        st.dataframe(strata.round(3), hide_index=True, width="stretch")
        return
    cols[0].metric("Estimated mean grade", f"{e.value:.3f}", help=f"{e.method} estimator")
    cols[1].metric(
        f"{e.level:.0%} interval",
        f"{e.ci_low:.3f} – {e.ci_high:.3f}",
        help=f"half-width {(e.ci_high - e.ci_low) / 2:.3f}",
    )
    cols[2].metric("Grades", f"{e.n:,} of {design.N:,}")
    if e.saving is None:
        cols[3].metric("Labels saved vs uniform", "withheld", help="shown once every stratum has 2 grades")
    else:
        cols[3].metric(
            "Labels saved vs uniform",
            f"{e.labels_saved:,.0f}",
            help=f"uniform random sampling would need about {e.uniform_labels:,.0f} grades for this precision "
            f"(design effect {e.deff:.2f}; {e.saving.share:+.0%} saved, likely range "
            f"{e.saving.low:+.0%} to {e.saving.high:+.0%})",
        )
    half = (e.ci_high - e.ci_low) / 2
    needed = plan.grades_needed_of(project, graded, target, method)
    if half <= target:
        st.success(f"Stopping rule met: the interval's half-width {half:.3f} is at most the target {target:.3f}.")
    else:
        st.warning(
            f"Half-width {half:.3f} > target {target:.3f}: about **{max(needed - e.n, 0):,} more grades** "
            f"needed ({needed:,} in all, projected)."
        )
    st.subheader("Estimate against the number of grades")
    st.altair_chart(path_chart(plan.estimate_path_of(project, graded, method)), width="stretch")
    st.caption(
        "Line: the estimate. Blue band: its interval. Dashed grey: the interval uniform random sampling "
        "would give at the same number of grades."
    )
    left, right = st.columns(2)
    with left:
        st.subheader("Strata")
        st.dataframe(strata.round(3), hide_index=True, width="stretch")
        if skips.skipped:
            st.caption(
                f"{skips.skipped} skipped items not graded: had they been, the estimate would lie between "
                f"{skips.low:.3f} (all 0) and {skips.high:.3f} (all 1), before sampling error."
            )
    with right:
        st.subheader("Graders")
        grades = store.grades(project.id)
        st.dataframe(grader_progress(grades), hide_index=True, width="stretch")
        st.caption(summary(agreement(grades, level_of(project.settings))))


live()
