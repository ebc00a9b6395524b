"""Review: the queue of items to settle (flagged, disagreeing, audited) and, for the one chosen, its texts,
every grade with its grader and comment, the flags, and the form that sets the final grade. In a rubric
project: each grader's card (a label per criterion), the criteria that disagree, and one form that sets the
final grade of each criterion the reviewer chooses. In a comparison, the same for each response, side by side
in the item's card order and named as graders saw them ("Response 1", ...), never by model.

Rules and permissions are core.services.review's; the page only renders them and passes the signed-in user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain, to_html
from core.scales import Scale
from core.services import auth, review
from core.services.outcome import Outcome, Refused
from core.services.progress import waiting_for_review
from core.services.side_by_side import card_responses, side_names
from ui import signin, state
from ui.shortcut_guard import guard

store = state.store()
project = state.require_ready_project()
reviewer = signin.require(auth.REVIEW, project.id)
st.title("Review")
SETTLED_KEY = f"review_settled_{project.id}"
if settled := st.session_state.pop(SETTLED_KEY, None):
    st.success(settled)
REASON_WORDS = {review.FLAGGED: "flagged by a grader", review.DISAGREEMENT: "grades disagree", review.AUDIT: "audit"}

COMPACT = {
    "seconds": st.column_config.NumberColumn("s", format="%.1f", width="small", help="seconds on the card"),
    "created_at": st.column_config.DatetimeColumn("at", format="D MMM HH:mm", width="small", help="UTC"),
}
"""The side tables' time columns kept narrow: at 1,024 px the grades' seconds and the flags' time were cut off."""

try:
    waiting = review.queue(store, reviewer, project.id)
except Refused as exc:
    st.error(f"Not allowed: {exc}.")
    st.stop()
rubric = project.settings.rubric
st.caption(
    f"{waiting_for_review(len(waiting)) or 'No item waits for a reviewer'}. The final grade replaces the graders' "
    "grades in the estimate; until an item is reviewed it enters with the mean of its grades."
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
CHOSEN = f"review_item_{project.id}"
NEXT_KEY, BACK_KEY = "J", "K"
"""The keys that open the next and the previous item waiting (a reviewer's review: the page had no keys)."""


def step(by: int) -> None:
    """Open the item ``by`` places after the one open in the queue's order (wrapping round)."""
    order = list(labels)
    now = st.session_state.get(CHOSEN)
    st.session_state[CHOSEN] = order[(order.index(now) + by) % len(order) if now in order else 0]


guard()  # the single keys below act on the page, not on a link or a table the focus is on
pick, back, ahead = st.columns([5, 1.4, 1.1], vertical_alignment="bottom")
position = pick.selectbox("Item to review", list(labels), format_func=labels.get, key=CHOSEN)
back.button("Previous", on_click=step, args=(-1,), shortcut=BACK_KEY, width="stretch", disabled=len(labels) < 2)
ahead.button("Next", on_click=step, args=(1,), shortcut=NEXT_KEY, width="stretch", disabled=len(labels) < 2)
shown = review.item(store, reviewer, project.id, position)


def settle_one_question() -> None:
    """The form that sets a one-question item's final grade: a button per label, each with the grading card's
    key for it, so a reviewer settles an item with one key (the note typed goes with it), as a grader grades."""
    scale = project.settings.grading_scale
    with st.form(f"settle_{project.id}_{position}"):
        note = st.text_area("Note (why)", key=f"review_note_{position}", max_chars=5_000)
        st.markdown("**Set the final grade**")
        chosen = None
        with st.container(horizontal=True):
            for choice in scale.choices:  # each an explicit choice: none is preselected for a quick submit
                if st.form_submit_button(choice.label, shortcut=choice.key, key=f"settle_{position}_{choice.key}"):
                    chosen = choice.label
        st.caption(
            f"Keys: {', '.join(f'{c.key} {c.label}' for c in scale.choices)}; {NEXT_KEY} and {BACK_KEY} the next "
            "and previous item (outside the note)."
        )
    if chosen is not None:
        saved(lambda: review.settle(store, signin.user(), project.id, position, chosen, note=note))


def settle_parts(parts: Parts) -> None:
    """The form that sets the final grade of each part (criterion, response) the reviewer chooses (none
    chosen: kept)."""
    with st.form(f"settle_{project.id}_{position}"):
        chosen = {
            part: st.radio(
                one_line_plain(name) + (" (grades disagree)" if part in shown.disagree else ""),
                [choice.label for choice in scale.choices],
                index=None,
                horizontal=True,
                key=f"review_label_{position}_{k}",
            )
            for k, (part, name, scale) in enumerate(zip(parts.keys, parts.names, parts.scales))
        }
        note = st.text_area("Note (why)", key=f"review_note_{position}", max_chars=5_000)
        st.caption(
            f"A {parts.noun} left unchosen keeps what it has: its final grade if set, else its grades' mean. Keys: "
            f"Ctrl+Enter sets them; {NEXT_KEY} and {BACK_KEY} the next and previous item."
        )
        if st.form_submit_button("Set the final grades", shortcut="Ctrl+Enter"):
            saved(lambda: parts.settle(store, signin.user(), project.id, position, chosen, note=note))


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


@dataclass(frozen=True)
class Parts:
    """The parts of a card a reviewer settles one by one: a rubric's criteria, or a comparison's responses in
    the item's card order, shown as "Response 1", ... (no model's name), each with its scale."""

    keys: list[str]
    names: list[str]
    scales: list[Scale]
    noun: str
    settle: Callable[..., Outcome]


def card_parts() -> Parts | None:
    """The item's parts (None: a one-question project's one grade)."""
    if rubric is not None:
        scales = [c.scale for c in rubric.criteria]
        return Parts(list(rubric.names), list(rubric.names), scales, "criterion", review.settle_rubric)
    if shown.order:
        order, scale = list(shown.order), project.settings.grading_scale
        names = list(side_names(len(order)))
        return Parts(order, names, [scale] * len(order), "response", review.settle_responses)
    return None


parts = card_parts()
st.header(f"Item {one_line_plain(str(shown.item.get('id', '')))}")
left, right = st.columns([3, 2])
with left:
    for field in ("prompt", "reference", "response"):
        value = shown.item.get(field)
        if isinstance(value, str) and value:
            st.markdown(f"**{field.capitalize()}**")
            st.html(to_html(value))  # as the grading card shows it (core.inputs.markup.to_html)
    if shown.order:  # a comparison's responses, side by side as graded
        for column, name, text in zip(
            st.columns(len(shown.order)), parts.names, card_responses(shown.item, shown.order)
        ):
            column.markdown(f"**{name}**")
            column.html(to_html(text))
with right:
    st.markdown("**Grades**")
    if parts is None:
        st.dataframe(
            shown.grades[["grader", "label", "comment", "seconds", "created_at"]],
            hide_index=True,
            width="stretch",
            column_config=COMPACT,
        )
    else:
        named = dict(zip(parts.keys, parts.names))
        st.dataframe(shown.by_grader(parts.keys, parts.names), hide_index=True, width="stretch")
        if shown.disagree:  # each said settled once a final grade is set: which still waits was not said (review)
            final = set(shown.reviews["part"]) if not shown.reviews.empty else set()
            said = [f"{named.get(p, p)}{' (settled)' if p in final else ''}" for p in shown.disagree]
            st.caption(f"Grades disagree on: {', '.join(said)}.")
        if not shown.reviews.empty:
            st.markdown("**Final grades set**")
            settled = shown.reviews.assign(part=shown.reviews["part"].map(lambda p: named.get(p, p)))
            st.dataframe(
                settled[["part", "label", "reviewer", "note", "created_at"]].rename(columns={"part": parts.noun}),
                hide_index=True,
                width="stretch",
            )
    if not shown.flags.empty:
        st.markdown("**Flags**")
        st.dataframe(
            shown.flags[["grader", "note", "created_at"]], hide_index=True, width="stretch", column_config=COMPACT
        )
    if parts is None:
        settle_one_question()
    else:
        settle_parts(parts)
