"""Export: the grades (CSV, JSONL, Parquet; into the Inspect log the pool came from) with their design, and
the report (JSON, Markdown, one-page HTML).

The files are core.exports.formats' and core.exports.project_export's, the same `activegrade export` and
`activegrade report` write. Every download's bytes depend only on the data (the report's time is its last
grade's), so a rerun keeps the link, and a download in progress is not cancelled by the dashboard's or a
colleague's activity."""

from __future__ import annotations

import streamlit as st

from core.exports.formats import EXPORTS, export_name, exported_what
from core.exports.project_export import (
    REPORT_EXPORTED,
    REPORT_FORMATS,
    TEXT_COLUMNS,
    ProjectFiles,
    file_name,
    report_bytes,
)
from core.inputs.markup import safe_markdown
from core.inputs.readers import detect
from core.services import auth
from ui import access, plan, signin, state

GRADE_BUTTONS = {
    "csv": "Grades (CSV)",
    "jsonl": "Grades (JSONL)",
    "parquet": "Grades (Parquet, a Hugging Face dataset)",
}
REPORT_BUTTONS = {"json": "Report (JSON)", "md": "Report (Markdown)", "html": "Report (HTML, one page)"}

store = state.store()
project = state.require_ready_project()
signin.require(auth.EXPORT, project.id)
st.title("Export")

texts = st.toggle(
    "Include each item's prompt and response",
    key="export_texts",
    help="Adds the columns " + " and ".join(TEXT_COLUMNS) + " after the grades' own: a larger file, readable alone.",
)
files = ProjectFiles(store, project, plan.items(project), plan.design(project), texts=texts)
st.header("Grades")
st.caption(
    f"{len(files.table):,} grades: item, its stratum, the stratum's size N_h and weight W_h = N_h/N, the item's "
    "inclusion probability n_h/N_h (n_h: graded items of the stratum), grade, label, grader, time, seconds "
    "spent, comment, the item's final grade (a reviewer's where one settled it, else the mean of its grades: the "
    "one the estimate reads) and whether a reviewer set it"
    + (", and the item's prompt and response" if texts else "")
    + (
        ": each grade with the model it grades (target) and its side of the card. The report gives each model's "
        "score and each difference."
        if project.settings.compares
        else ". The report's last section recomputes the estimate from this file alone."
    )
    + " CSV cells that a spreadsheet would run as formulas are prefixed with a quote."
    + (
        " Every criterion's grades, each with its criterion (the inclusion probability counts that criterion's "
        "graded items): recompute one criterion's estimate from its rows."
        if project.settings.rubric is not None
        else ""
    )
)
for column, (fmt, label) in zip(st.columns(len(GRADE_BUTTONS)), GRADE_BUTTONS.items()):
    export = EXPORTS[fmt]
    column.download_button(
        label,
        export.write(files),
        export_name(files, fmt),
        export.mime,
        key=f"dl_{fmt}",
        width="stretch",
        **access.audited_download(exported_what(fmt, texts), project.id),
    )
st.dataframe(files.table.tail(200), hide_index=True, width="stretch")
if not files.table.empty and detect(store.input_files(project.id)["pool"]) == "inspect":
    st.download_button(
        "The Inspect log with the human grades as the score 'human', ActiveGrade's estimate in its results",
        EXPORTS["inspect"].write(files),
        export_name(files, "inspect"),
        EXPORTS["inspect"].mime,
        key="dl_inspect",
        **access.audited_download(EXPORTS["inspect"].what, project.id),
    )

st.header("Report")
if files.report is None:
    st.info("The report needs at least one grade.")
    st.stop()
if project.settings.rubric is not None:  # a one-question project's estimate is the report's headline
    st.download_button(
        "Estimates (CSV, one row per criterion)",
        EXPORTS["estimates"].write(files),
        export_name(files, "estimates"),
        EXPORTS["estimates"].mime,
        key="dl_estimates",
        **access.audited_download(EXPORTS["estimates"].what, project.id),
    )
for column, (fmt, label) in zip(st.columns(len(REPORT_BUTTONS)), REPORT_BUTTONS.items()):
    column.download_button(
        label,
        report_bytes(files.report, fmt),
        file_name(project, "report", fmt),
        REPORT_FORMATS[fmt][1],
        key=f"dl_report_{fmt}",
        width="stretch",
        **access.audited_download(REPORT_EXPORTED[fmt], project.id),
    )
with st.container(border=True):
    st.markdown(safe_markdown(report_bytes(files.report, "md").decode()))
