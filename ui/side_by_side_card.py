"""The side-by-side card of a comparison project (settings.compare_mode "side-by-side"): every target's
response to one item, in the item's recorded order (core.services.side_by_side.card_order) under neutral
names, one grade per side, and one press that submits the whole card (core.services.grade_actions.grade_card,
one transaction). The models' names are never on the page.

Rendered only: the rules (order, names, which grade is whose, the checks) are in core.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core.errors import InputError
from core.inputs.markup import one_line_plain, to_html
from core.scales import Scale
from core.services import grade_actions, live, showings
from core.services.database import ProjectInfo, Store
from core.services.grading import MAX_COMMENT_CHARS, card_before, grader_view
from core.services.outcome import STORED, Outcome
from core.services.showings import Showing
from core.services.side_by_side import card_responses, order_of, side_names
from ui import plan, signin
from ui.page_keys import with_own_keys

KEYS_JS = with_own_keys((Path(__file__).parent / "side_by_side_keys.js").read_text(encoding="utf-8"))


def keys_script(scale: Scale) -> str:
    """The card's keys (ui/side_by_side_keys.js) with the scale's key -> label map, as a script element; a label
    is JSON with "<" escaped, so an admin's custom label cannot end the script."""
    keys = json.dumps({c.key.upper(): c.label for c in scale.choices}).replace("<", "\\u003c")
    return f"<script>window.agSbsKeys = {keys};\n{KEYS_JS}</script>"


STYLE = (
    "<style>.sbs-response{max-height:24rem;overflow:auto;overflow-wrap:anywhere;padding:.4rem .8rem;"
    "border:1px solid color-mix(in srgb,currentColor 18%,transparent);border-radius:.5rem}</style>"
)
"""Each response scrolls in a box of its own, so the grades under them stay in view (a long response pushed them
below the fold: evaluation lead's second review), as the one-response card's box does."""


def marker(said: str) -> str:
    """Where the card's keys act (ui/side_by_side_keys.js): on the card and its "nothing left" screen, no other
    page; ``said``, what the script reads out in a status region that outlives the page's reruns (the last press's
    outcome and the item now on screen, which a screen reader heard nothing of: an accessibility review)."""
    return f'<span id="ag-sbs-card" data-said="{html.escape(said)}" hidden></span>'


TO_TOP = "<script>/* {token} */ (document.querySelector('[data-testid=\"stMain\"]') || window).scrollTo(0, 0);</script>"
"""A new card opens at its top: the page kept the last card's scroll, and the next prompt showed cut off."""


def page(store: Store, project: ProjectInfo, grader: str) -> None:
    """The card, its grades and its progress, in place of the one-response grading card: the grader's next item,
    or, after Back, one of their earlier cards with its grades, to change (`_review_key`)."""
    settings = project.settings
    message = st.session_state.pop(_said_key(project.id), None)
    history = store.grader_positions(project.id, grader)  # oldest first, each card once
    reviewing = st.session_state.get(_review_key(project.id))
    if reviewing not in history:
        reviewing = st.session_state[_review_key(project.id)] = None
    try:
        position = reviewing
        if position is None:
            position = grade_actions.claim(store, signin.user(), project.id, plan.design(project))
    except grade_actions.Refused as exc:
        st.warning(str(exc))
        return
    graded = store.graded_positions(project.id)
    progress = f"{len(graded):,} of {store.item_count(project.id):,} items graded"
    st.caption(progress)
    item = {} if position is None else store.item(project.id, position)
    now = (
        "Nothing left to grade for you right now."
        if position is None
        else f"Now item {item.get('id', '')}, {progress}."
    )
    said = f"{message.rstrip('.')}. {now}" if message else now
    st.html(marker(said) + keys_script(settings.grading_scale), unsafe_allow_javascript=True)
    if position is None:
        _said(message)
        st.info(
            live.closed_words(store, project.id, plan.design(project), settings)
            or "Nothing left to grade for you right now."
        )
        _back_buttons(project.id, history, None)
        return
    showing = showings.current(store, project.id, grader, position, str(item.get("id", "")), reviewing is not None)
    stored, said = (
        ({}, "") if reviewing is None else grade_actions.stored_press(store, signin.user(), project.id, position)[:2]
    )
    order = order_of(settings, position)
    st.html(TO_TOP.format(token=showing.token), unsafe_allow_javascript=True)
    st.html(STYLE)
    if reviewing is not None:
        st.info("Your earlier card, with the grades you gave: change them and submit, or return to the queue.")
    st.markdown(f"**Item** {one_line_plain(showing.item_id)}")
    st.html(to_html(str(item.get("prompt") or "")))
    reference = grader_view(item, settings).get("reference")
    if isinstance(reference, str) and reference:  # the project shows it (show_reference), as the one-response card
        with st.expander("Reference answer", expanded=True):  # open, as on the one-response card
            st.html(to_html(reference))
    labels = [c.label for c in settings.grading_scale.choices]
    keys = ", ".join(f"{c.key.upper()} {c.label}" for c in settings.grading_scale.choices)
    st.caption(
        f"Keys: {one_line_plain(keys)} grade the next response without a grade (← / → choose another, to change "
        "its grade); Enter submits the card; "
        + (
            "F flags it for a reviewer; B goes further back; Q returns to the queue; ? shows these keys until ? or Esc."
            if reviewing is not None
            else "S skips it; F flags it for a reviewer; U undoes your last card or skip; B goes back to an earlier "
            "card; ? shows these keys until ? or Esc."
        )
    )
    with st.form(f"sbs-{project.id}-{showing.token}", border=False):
        columns = st.columns(len(order))
        for side, (column, name, text) in enumerate(zip(columns, side_names(len(order)), card_responses(item, order))):
            with column:
                st.markdown(f"**{name}**")
                st.html(f'<div class="sbs-response" data-side="{side}">{to_html(text)}</div>')
                given = labels.index(stored[name]) if stored.get(name) in labels else None
                st.radio(f"Grade of {name}", labels, index=given, key=f"sbs-grade-{showing.token}-{side}")
        comment = st.text_area(
            "Comment (optional): saved with the grades, or sent to a reviewer with a flag",
            value=said,
            key=f"sbs-comment-{showing.token}",
            max_chars=MAX_COMMENT_CHARS,
            height=68,
        )
        submit = "Submit both grades" if len(order) == 2 else f"Submit the {len(order)} grades"
        left, middle, right = st.columns([2, 1, 1])
        if left.form_submit_button(submit, type="primary"):
            _submit(store, project.id, grader, showing, len(order), comment)
            st.rerun()
        if middle.form_submit_button("Flag for review"):
            _flag(store, project.id, showing, comment)
            st.rerun()
        if reviewing is None and right.form_submit_button("Skip this item"):
            _skip(store, project.id, grader, showing)
            st.rerun()
    if reviewing is None and st.button("Undo my last card or skip", key=f"sbs-undo-{project.id}"):
        _undo(store, project.id)
        st.rerun()
    _back_buttons(project.id, history, reviewing)
    _said(message)  # beside the button the grader just pressed, not above the card, off the screen


def _review_key(project_id: int) -> str:
    """Where the earlier card the grader went back to waits (its position; None: the queue's card)."""
    return f"sbs-review-{project_id}"


def _back_buttons(project_id: int, history: list[int], reviewing: int | None) -> None:
    """Back to the card before the one shown (the last graded one from the queue's card), and, on an earlier
    card, Return to the queue: a card changed there stays the grader's, as on the one-response card."""
    earlier = card_before(history, reviewing)
    back, queue = st.columns([1, 1])
    if earlier not in (None, reviewing) and back.button("Back to an earlier card", key=f"sbs-back-{project_id}"):
        st.session_state[_review_key(project_id)] = earlier
        st.rerun()
    if reviewing is not None and queue.button("Return to the queue", key=f"sbs-queue-{project_id}"):
        st.session_state[_review_key(project_id)] = None
        st.rerun()


def _said_key(project_id: int) -> str:
    """Where the last press's outcome waits for the next run of the page (`_say`, then `_said`)."""
    return f"sbs-ack-{project_id}"


def _say(project_id: int, message: str) -> None:
    """Keep the press's outcome for the page's next run, which shows it beside the buttons."""
    st.session_state[_said_key(project_id)] = message


def _said(message: str | None) -> None:
    """The last press's outcome: what was saved or undone, or why not, shown literally (kept as plain text, which
    the screen readers' status region reads: it read "item arithmetic\\-14", an accessibility review)."""
    if message:
        (st.error if message.startswith("Not ") else st.success)(one_line_plain(message))


def _submit(store: Store, project_id: int, grader: str, showing: Showing, sides: int, comment: str) -> None:
    """One press: every side's grade, and the comment, to grade_actions.grade_card, the outcome kept for the next
    run."""
    chosen = [st.session_state.get(f"sbs-grade-{showing.token}-{side}") for side in range(sides)]
    if any(label is None for label in chosen):
        _say(project_id, "Not saved: give every response a grade")
        return
    user, seconds = signin.user(), showing.seconds_since_released()
    if _press(
        store,
        project_id,
        grader,
        showing,
        lambda: grade_actions.grade_card(
            store, user, project_id, showing.position, chosen, seconds=seconds, comment=comment
        ),
        STORED,
    ):
        st.session_state[_review_key(project_id)] = None  # an earlier card changed: back to the queue's card


def _flag(store: Store, project_id: int, showing: Showing, note: str) -> None:
    """The item sent to a reviewer with the comment as its note (grade_actions.flag); the card stays the
    grader's to grade or skip, so its token is not spent (as on the one-response card)."""
    try:
        outcome = grade_actions.flag(store, signin.user(), project_id, showing.position, note)
    except (grade_actions.Refused, InputError) as exc:
        _say(project_id, f"Not saved: {exc}")
        return
    _say(project_id, f"{outcome.message}: the item is still yours to grade or skip")


def _undo(store: Store, project_id: int) -> None:
    """The grader's last card (every side's grade: Store.retract_last_grade) or skip taken back
    (grade_actions.undo); the item comes back to the card unless another grader took it."""
    try:
        outcome = grade_actions.undo(store, signin.user(), project_id)
    except grade_actions.Refused as exc:
        _say(project_id, f"Not undone: {exc}")
        return
    item = None if outcome.position is None else str(store.item(project_id, outcome.position).get("id", ""))
    _say(project_id, _naming(outcome.message, item))


def _naming(message: str, item_id: str | None) -> str:
    """A stored press's answer naming the item it stored it for ("saved: Correct, Incorrect, item q7"), as the
    one-response card's does: it shows beside the next card, whose grades it could otherwise seem to be."""
    return f"{message}, item {item_id}" if item_id else message


def _skip(store: Store, project_id: int, grader: str, showing: Showing) -> None:
    """One press: the item on the card skipped (grade_actions.skip: it goes back to the queue)."""
    user = signin.user()
    _press(
        store,
        project_id,
        grader,
        showing,
        lambda: grade_actions.skip(store, user, project_id, showing.position, seconds=showing.seconds_since_released()),
        ("skipped",),
    )


def _press(
    store: Store, project_id: int, grader: str, showing: Showing, act: Callable[[], Outcome], kept: tuple[str, ...]
) -> bool:
    """``act`` once on the card's token (showings.press_once), its outcome kept for the next run; whether it was
    kept."""
    try:
        outcome = showings.press_once(store, project_id, grader, showing.token, act, lambda done: done.status in kept)
    except (grade_actions.Refused, InputError) as exc:
        _say(project_id, f"Not saved: {exc}")
        return False
    _say(
        project_id,
        _naming(outcome.message, showing.item_id) if outcome.status in kept else f"Not saved: {outcome.message}",
    )
    return outcome.status in kept
