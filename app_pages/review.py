"""Review: the queue of items to settle (flagged, disagreeing, audited) and, for the one chosen, its texts,
every grade with its grader and comment, the flags, and the form that sets the final grade.

Rules and permissions are core.services.review's; the page only renders them and passes the signed-in user.
"""

from __future__ import annotations

import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain, safe_markdown
from core.services import auth, review
from core.services.outcome import Refused
from ui import signin, state

store = state.store()
project = state.require_ready_project()
reviewer = signin.require(auth.REVIEW, project.id)
st.title("Review")
REASON_WORDS = {review.FLAGGED: "flagged by a grader", review.DISAGREEMENT: "grades disagree", review.AUDIT: "audit"}

try:
    waiting = review.queue(store, reviewer, project.id)
except Refused as exc:
    st.error(f"Not allowed: {exc}.")
    st.stop()
st.caption(
    f"{len(waiting):,} items wait for a final grade. The final grade replaces the graders' grades in the "
    "estimate; until an item is reviewed it enters with the mean of its grades."
)
if not waiting:
    st.success("Nothing to review: no disagreement, flag or audited item waits.")
    st.stop()

labels = {e.position: f"#{e.position}: {', '.join(REASON_WORDS[r] for r in e.reasons)}" for e in waiting}
position = st.selectbox("Item to review", list(labels), format_func=labels.get, key=f"review_item_{project.id}")
shown = review.item(store, reviewer, project.id, position)
st.subheader(f"Item {one_line_plain(str(shown.item.get('id', '')))}")
left, right = st.columns([3, 2])
with left:
    for field in ("prompt", "reference", "response"):
        value = shown.item.get(field)
        if isinstance(value, str) and value:
            st.markdown(f"**{field.capitalize()}**")
            st.markdown(safe_markdown(value))
with right:
    st.markdown("**Grades**")
    st.dataframe(
        shown.grades[["grader", "label", "comment", "seconds", "created_at"]], hide_index=True, width="stretch"
    )
    if not shown.flags.empty:
        st.markdown("**Flags**")
        st.dataframe(shown.flags[["grader", "note", "created_at"]], hide_index=True, width="stretch")
    scale = project.settings.grading_scale
    with st.form(f"settle_{project.id}_{position}"):
        label = st.radio("Final grade", [c.label for c in scale.choices], horizontal=True, key="review_label")
        note = st.text_area("Note (why)", key="review_note", max_chars=5_000)
        if st.form_submit_button("Set the final grade"):
            try:
                outcome = review.settle(store, signin.user(), project.id, position, label, note=note)
            except (Refused, InputError) as exc:
                st.error(f"Not saved: {exc}.")
            else:
                st.toast(outcome.message)
                st.rerun()
