"""Review: the queue of items to settle (flagged, disagreeing, audited) and, for the one chosen, its texts,
every grade with its grader and comment, the flags, and the form that sets the final grade. In a rubric
project: each grader's card (a label per criterion), the criteria that disagree, and one form that sets the
final grade of each criterion the reviewer chooses.

Rules and permissions are core.services.review's; the page only renders them and passes the signed-in user.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain, to_html
from core.rubric import Rubric
from core.services import auth, review
from core.services.outcome import Outcome, Refused
from core.services.progress import counted
from ui import signin, state

store = state.store()
project = state.require_ready_project()
reviewer = signin.require(auth.REVIEW, project.id)
st.title("Review")
SETTLED_KEY = f"review_settled_{project.id}"
if settled := st.session_state.pop(SETTLED_KEY, None):
    st.success(settled)
REASON_WORDS = {review.FLAGGED: "flagged by a grader", review.DISAGREEMENT: "grades disagree", review.AUDIT: "audit"}

try:
    waiting = review.queue(store, reviewer, project.id)
except Refused as exc:
    st.error(f"Not allowed: {exc}.")
    st.stop()
rubric = project.settings.rubric
st.caption(
    f"{counted(len(waiting), 'item')} {'waits' if len(waiting) == 1 else 'wait'} for a final grade. The final grade replaces the graders' grades in the "
    "estimate; until an item is reviewed it enters with the mean of its grades."
    + ("" if rubric is None else " Each criterion has its own final grade and its own estimate.")
)
if rubric is not None:
    with st.expander("Disagreements per criterion"):
        st.dataframe(
            pd.DataFrame(
                [
                    {"criterion": c.criterion, "items whose grades differ": c.disagreements, "settled": c.settled}
                    for c in review.agreement_by_criterion(store, reviewer, project.id)
                ]
            ),
            hide_index=True,
            width="stretch",
        )
if not waiting:
    st.success("Nothing to review: no disagreement, flag or audited item waits.")
    st.stop()

ids = store.item_ids(project.id, [e.position for e in waiting])
labels = {e.position: f"{ids.get(e.position, '?')}: {', '.join(REASON_WORDS[r] for r in e.reasons)}" for e in waiting}
position = st.selectbox("Item to review", list(labels), format_func=labels.get, key=f"review_item_{project.id}")
shown = review.item(store, reviewer, project.id, position)


def settle_one_question() -> None:
    """The form that sets a one-question item's final grade."""
    scale = project.settings.grading_scale
    with st.form(f"settle_{project.id}_{position}"):
        label = st.radio(  # nothing chosen at first: a quick submit must not set a grade nobody picked
            "Final grade", [c.label for c in scale.choices], index=None, horizontal=True, key=f"review_label_{position}"
        )
        note = st.text_area("Note (why)", key=f"review_note_{position}", max_chars=5_000)
        if st.form_submit_button("Set the final grade"):
            saved(lambda: review.settle(store, signin.user(), project.id, position, label, note=note))


def settle_rubric(rubric: Rubric) -> None:
    """The form that sets the final grade of each criterion the reviewer chooses (none chosen: kept)."""
    with st.form(f"settle_{project.id}_{position}"):
        chosen = {
            c.name: st.radio(
                one_line_plain(c.name) + (" (grades disagree)" if c.name in shown.disagree else ""),
                [choice.label for choice in c.scale.choices],
                index=None,
                horizontal=True,
                key=f"review_label_{position}_{k}",
            )
            for k, c in enumerate(rubric.criteria)
        }
        note = st.text_area("Note (why)", key=f"review_note_{position}", max_chars=5_000)
        st.caption("A criterion left unchosen keeps what it has: its final grade if set, else its grades' mean.")
        if st.form_submit_button("Set the final grades"):
            saved(lambda: review.settle_rubric(store, signin.user(), project.id, position, chosen, note=note))


def saved(settling: Callable[[], Outcome]) -> None:
    """Run the settling call, then rerun with a line naming the item and the final grades set, or show why it
    was not saved."""
    try:
        outcome = settling()
    except (Refused, InputError) as exc:
        st.error(f"Not saved: {exc}.")
    else:
        st.session_state[SETTLED_KEY] = one_line_plain(f"Item {shown.item.get('id', '')}: {outcome.message}.")
        st.rerun()


st.subheader(f"Item {one_line_plain(str(shown.item.get('id', '')))}")
left, right = st.columns([3, 2])
with left:
    for field in ("prompt", "reference", "response"):
        value = shown.item.get(field)
        if isinstance(value, str) and value:
            st.markdown(f"**{field.capitalize()}**")
            st.html(to_html(value))  # as the grading card shows it (core.inputs.markup.to_html)
with right:
    st.markdown("**Grades**")
    if rubric is None:
        st.dataframe(
            shown.grades[["grader", "label", "comment", "seconds", "created_at"]], hide_index=True, width="stretch"
        )
    else:
        st.dataframe(shown.by_grader(rubric), hide_index=True, width="stretch")
        if shown.disagree:
            st.caption(f"Grades disagree on: {', '.join(shown.disagree)}.")
        if not shown.reviews.empty:
            st.markdown("**Final grades set**")
            st.dataframe(
                shown.reviews[["criterion", "label", "reviewer", "note", "created_at"]],
                hide_index=True,
                width="stretch",
            )
    if not shown.flags.empty:
        st.markdown("**Flags**")
        st.dataframe(shown.flags[["grader", "note", "created_at"]], hide_index=True, width="stretch")
    if rubric is None:
        settle_one_question()
    else:
        settle_rubric(rubric)
