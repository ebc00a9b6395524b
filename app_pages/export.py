"""Export: the grades (CSV, JSONL, Parquet; into the Inspect log the pool came from) with their design, and
the report (JSON, Markdown, one-page HTML).

Every download's bytes depend only on the data (the report's time is its last grade's), so a rerun keeps
the link, and a download in progress is not cancelled by the dashboard's or a colleague's activity."""

from __future__ import annotations

import json

import streamlit as st

from core.exports.inspect_export import with_human_scores
from core.exports.report import grades_csv, grades_jsonl, grades_parquet, grades_table, report, report_markdown
from core.exports.report_html import report_html
from core.inputs.markup import safe_markdown
from core.inputs.readers import detect
from core.services import auth
from core.services.tracking import current_estimate
from core.stats.skips import skip_bound
from ui import access, plan, signin, state

store = state.store()
project = state.require_ready_project()
signin.require(auth.EXPORT, project.id)
st.title("Export")
slug = "".join(c if c.isalnum() else "-" for c in project.name.lower()).strip("-") or "project"

grades = store.grades(project.id)
table = grades_table(grades, plan.items(project), plan.design(project))
st.subheader("Grades")
st.caption(
    f"{len(table):,} grades: item, its stratum, the stratum's size N_h and weight W_h = N_h/N, the item's "
    "inclusion probability n_h/N_h (n_h: graded items of the stratum), grade, label, grader, time, seconds "
    "spent, comment. The report's last section recomputes the estimate from this file alone. CSV cells that a "
    "spreadsheet would run as formulas are prefixed with a quote."
)
cols = st.columns(3)
cols[0].download_button(
    "Grades (CSV)",
    grades_csv(table),
    f"{slug}-grades.csv",
    "text/csv",
    key="dl_csv",
    width="stretch",
    **access.audited_download("grades (CSV)", project.id),
)
cols[1].download_button(
    "Grades (JSONL)",
    grades_jsonl(table),
    f"{slug}-grades.jsonl",
    "application/jsonl",
    key="dl_jsonl",
    width="stretch",
    **access.audited_download("grades (JSONL)", project.id),
)
cols[2].download_button(
    "Grades (Parquet, a Hugging Face dataset)",
    grades_parquet(table),
    f"{slug}-grades.parquet",
    "application/vnd.apache.parquet",
    key="dl_parquet",
    width="stretch",
    **access.audited_download("grades (Parquet)", project.id),
)
st.dataframe(table.tail(200), hide_index=True, width="stretch")
pool_upload = store.input_files(project.id)["pool"]
if not table.empty and detect(pool_upload) == "inspect":
    st.download_button(
        "The Inspect log with the human grades as the score 'human'",
        with_human_scores(pool_upload, table),
        pool_upload[0],
        "application/octet-stream",
        key="dl_inspect",
        **access.audited_download("grades (Inspect log)", project.id),
    )

st.subheader("Report")
graded = store.graded_positions(project.id)
result = current_estimate(plan.design(project), graded, project.settings["method"])
if result.n == 0:
    st.info("The report needs at least one grade.")
    st.stop()
skips = skip_bound(plan.design(project), graded, graded.values(), store.skipped_positions(project.id))
data = report(project, plan.design(project), result, store.input_files(project.id), grades, skips)
markdown = report_markdown(data)
cols = st.columns(3)
cols[0].download_button(
    "Report (JSON)",
    json.dumps(data, indent=2),
    f"{slug}-report.json",
    "application/json",
    key="dl_report_json",
    width="stretch",
    **access.audited_download("report (JSON)", project.id),
)
cols[1].download_button(
    "Report (Markdown)",
    markdown,
    f"{slug}-report.md",
    "text/markdown",
    key="dl_report_md",
    width="stretch",
    **access.audited_download("report (Markdown)", project.id),
)
cols[2].download_button(
    "Report (HTML, one page)",
    report_html(data),
    f"{slug}-report.html",
    "text/html",
    key="dl_report_html",
    width="stretch",
    **access.audited_download("report (HTML)", project.id),
)
with st.container(border=True):
    st.markdown(safe_markdown(markdown))
