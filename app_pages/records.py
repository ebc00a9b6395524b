"""Records: every item of the project, filtered, searched, sorted and paged by the database
(core.services.browser), one item's whole record (grades, reviews, flags, audit events), and the filtered
set as CSV with prompt and response. For admins, viewers and reviewers. In a rubric project one criterion
is read at a time (the primary unless another is chosen): its grades, grade filter and final grade; in a
comparison one model at a time, and the item's record shows every model's response."""

from __future__ import annotations

import math

import streamlit as st

from core.inputs.markup import one_line_plain, to_html
from core.inputs.targets import response_column
from core.services import auth, browser
from core.services.browser import SORTS, RecordFilter
from core.services.outcome import Refused
from core.services.progress import counted
from ui import signin, state

store = state.store()
project = state.require_ready_project()
viewer = signin.require(auth.BROWSE, project.id)
st.title("Records")
try:
    browser.check(store, viewer, project.id)  # a comparison's records name its models: not for a blind reviewer
except Refused as exc:
    st.info(f"Not shown: {exc}.")
    st.stop()
ANY = "any"
PAGE_SIZES = (25, 50, 100, 250)


def either(label: str, key: str) -> bool | None:
    """A yes / no / any choice: True, False or None (filter off)."""
    chosen = st.selectbox(label, (ANY, "yes", "no"), key=f"records_{key}")
    return None if chosen == ANY else chosen == "yes"


with st.expander("Filters", expanded=True):
    cols = st.columns(5)
    with cols[0]:
        strata = st.selectbox("Stratum", [ANY, *range(len(store.stratum_sizes(project.id)))], key="records_stratum")
        graded = either("Graded", "graded")
    with cols[1]:
        rubric, targets = project.settings.rubric, project.settings.targets
        target = None
        if targets:  # a comparison: one model's grades at a time, as a rubric's criterion
            target = st.selectbox("Model (its grades are shown and filtered)", targets, key="records_target")
        if rubric is None:
            criterion, scale, label_key = None, project.settings.grading_scale, "records_label"
        else:
            criterion = st.selectbox(
                "Criterion (its grades are shown and filtered)",
                rubric.names,
                index=rubric.names.index(rubric.primary),
                key="records_criterion",
            )
            scale, label_key = rubric.criterion(criterion).scale, f"records_label_{criterion}"
        label = st.selectbox("Grade", [ANY, *(c.label for c in scale.choices)], key=label_key)
        grader = st.text_input("Grader (exact name)", key="records_grader")
    with cols[2]:
        commented, skipped = either("Commented", "commented"), either("Skipped", "skipped")
    with cols[3]:
        disagreement, reviewed = either("Grades disagree", "disagreement"), either("Reviewed", "reviewed")
    with cols[4]:
        flagged = either("Flagged", "flagged")
        search = st.text_input("Search prompt and response", key="records_search")
filters = RecordFilter(
    stratum=None if strata == ANY else int(strata),
    graded=graded,
    label=None if label == ANY else label,
    grader=grader.strip() or None,
    commented=commented,
    skipped=skipped,
    disagreement=disagreement,
    reviewed=reviewed,
    flagged=flagged,
    criterion=criterion,
    target=target,
    search=search,
)
cols = st.columns([2, 1, 1, 1])
sort = cols[0].selectbox("Sort by", SORTS, key="records_sort")
descending = cols[1].toggle("Descending", key="records_descending")
size = cols[2].selectbox("Rows per page", PAGE_SIZES, index=1, key="records_size")
number = cols[3].number_input("Page", min_value=1, value=1, step=1, key="records_page")
try:
    shown = browser.page(store, viewer, project.id, filters, sort=sort, descending=descending, number=number, size=size)
except Refused as exc:
    st.error(f"Not allowed: {exc}.")
    st.stop()
pages = max(1, math.ceil(shown.total / size))
st.caption(f"{counted(shown.total, 'item')} match{'es' if shown.total == 1 else ''}; page {number:,} of {pages:,}.")
REVIEWED_AS = st.column_config.TextColumn(
    "reviewed as",
    help="The reviewer's final grade, where one settled the item; empty otherwise (the export's final_grade is "
    "then the mean of the item's grades, the mean column here).",
)
st.dataframe(shown.rows, hide_index=True, width="stretch", column_config={"final": REVIEWED_AS})
if st.button("Prepare the CSV of these items (with prompt and response)", key="records_prepare"):
    st.session_state["records_csv"] = browser.export_csv(store, signin.user(), project.id, filters)
if st.session_state.get("records_csv"):
    st.download_button("Download records (CSV)", st.session_state["records_csv"], "activegrade-records.csv", "text/csv")

st.header("One item's record")
ids = dict(zip(shown.rows["position"].tolist(), shown.rows["item"].tolist(), strict=True))
if not ids:
    st.stop()
position = st.selectbox("Item (position)", list(ids), format_func=lambda p: f"#{p} · {ids[p]}", key="records_item")
record = browser.record(store, viewer, project.id, int(position))
st.markdown(f"**Item {one_line_plain(str(record.item.get('id', '')))}**, stratum {record.item.get('stratum')}")
texts = {field.capitalize(): record.item.get(field) for field in ("prompt", "reference", "response")}
texts |= {f"Response of {t}": record.item.get(response_column(t)) for t in targets}  # a comparison's responses
for title, value in texts.items():
    if isinstance(value, str) and value:
        st.markdown(f"*{one_line_plain(title)}*")
        st.html(to_html(value))  # as the grading card shows it (core.inputs.markup.to_html)
for title, table in (
    ("Grades (retracted ones have retracted_at)", record.grades),
    ("Reviews", record.reviews),
    ("Flags", record.flags),
    ("Audit events", record.events),
):
    st.markdown(f"**{title}**")
    st.dataframe(table, hide_index=True, width="stretch")
