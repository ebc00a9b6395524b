"""Grade: one item at a time on the grading card (ui/grading_card.py), which owns the keys.

In a rubric project (core.rubric) the card asks every criterion of the item at once and one press sends
them all, ``labels`` {criterion: label}, stored in one transaction (grade_actions.grade_rubric).

Every press names the item the browser shows (its position, id and showing
token, core.services.showings: the database's, so the fast grading route and the
HTTP API check this page's tokens and it theirs) and is checked again against the
database by core.services.grade_actions with the acting user's current session,
role and assignment. The card shows "sending" at once, "saved" with the next item only
once the grade is committed, and "Not saved, press again" when it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from core.errors import InputError
from core.inputs.markup import to_html
from core.scales import Scale
from core.services import auth, grade_actions, grading, live, showings
from core.services.grading import grader_view
from core.services.outcome import STORED as CARRIED_OUT
from core.services.progress import counted
from ui import access, grading_card, plan, side_by_side_card, signin, state

store = state.store()
project = state.require_ready_project()
signin.require(auth.GRADE, project.id)
grader = state.grader()
pid = project.id
rubric = project.settings.rubric  # None: one question, graded with one label
REVIEW = f"review-{pid}"  # position of an earlier grade being reviewed, or None for the queue
ACK = f"ack-{pid}"
LAST = f"card-{pid}"  # the last payload sent, re-sent with the error when the database fails
# the card is what a grader looks at: less room above it (Streamlit's 6rem top padding, a 2.75rem title), so a
# 1280 x 720 laptop shows the response under the prompt without scrolling (tests/e2e/test_grading_card.py)
COMPACT = """<style>
[data-testid="stMainBlockContainer"]{padding-top:2rem}
[data-testid="stMainBlockContainer"] h1{font-size:1.75rem;padding:0 0 .25rem}
</style>"""

st.html(COMPACT)
state.heading("Grade", project)
if not grader:
    st.warning("Type your name in the sidebar (**Your name**) to start grading; every grade is saved under it.")
    st.stop()
if project.settings.side_by_side:
    side_by_side_card.page(store, project, grader)  # a comparison graded side by side: its own card
    st.stop()


def _act(press: dict[str, Any]) -> grade_actions.Outcome:
    """Carry out one press for the user signed in now (None when the session ended)."""
    actor = signin.user()
    action = press.get("action")
    if action in ("grade", "skip", "comment", "flag"):
        showing = showings.match(store, pid, grader, press.get("token"), press.get("position"), press.get("item_id"))
        if showing is None:  # a press for an item no longer on this card: never moved to another one
            return grade_actions.Outcome(
                "ignored",
                "Not saved: that card was pressed already (in another tab or window, say), or shown more than "
                f"{showings.TTL.total_seconds() / 3600:g} hours ago; the card now shows your current item",
            )
        if action == "comment":
            return grade_actions.comment(store, actor, pid, showing.position, str(press.get("comment") or ""))
        if action == "flag":  # the card stays: the grader grades or skips it still
            return grade_actions.flag(store, actor, pid, showing.position, str(press.get("comment") or ""))
        seconds = grading.viewing_seconds(press.get("shown_ms"), showing.seconds_since_released())
        if action == "skip":
            outcome = grade_actions.skip(store, actor, pid, showing.position, seconds=seconds)
        else:
            if rubric is None:
                grade_action, answer = grade_actions.grade, str(press.get("label"))
            else:  # a rubric card: every criterion's answer in one press
                grade_action, answer = grade_actions.grade_rubric, _labels(press)
            outcome = grade_action(
                store, actor, pid, showing.position, answer, seconds=seconds, comment=str(press.get("comment") or "")
            )
        if outcome.status in (*CARRIED_OUT, "skipped"):
            showings.use(store, pid, grader, showing.token)
            if showing.reviewing:
                st.session_state[REVIEW] = None  # a changed grade: back to the item left in the queue
        return outcome
    grade_actions.acting_grader(store, actor, pid)
    if action == "undo":
        st.session_state[REVIEW] = None
        return grade_actions.undo(store, actor, pid)
    if action == "back":
        st.session_state[REVIEW] = grading.card_before(
            store.grader_positions(pid, grader), st.session_state.get(REVIEW)
        )
        return grade_actions.Outcome("review", "your earlier grade")
    if action == "queue":
        st.session_state[REVIEW] = None
        return grade_actions.Outcome("queue", "back to the queue")
    return grade_actions.Outcome("ignored", f"unknown action {action!r}")


def _labels(press: dict[str, Any]) -> dict[str, str]:
    """A rubric card's answers, {criterion: label}, as the browser sent them; InputError when malformed."""
    labels = press.get("labels")
    if not isinstance(labels, Mapping) or not all(isinstance(v, str) for v in labels.values()):
        raise InputError("the card's answers are not one label per criterion", fix="reload the page and grade again")
    return {str(name): label for name, label in labels.items()}


def on_press() -> None:
    press = grading_card.pressed()
    if press is None:
        return
    ack: dict[str, Any] = {"seq": press.get("seq")}
    try:
        outcome = _act(press)
        ack |= {"status": outcome.status, "message": _naming_item(outcome, press)}
    except (grade_actions.Refused, InputError) as exc:  # refused, or a comment too long, a forged viewing time
        ack |= {
            "status": "error",
            "message": f"{'Not undone' if press.get('action') == 'undo' else 'Not saved'}: {exc}",
        }
    except (SQLAlchemyError, OSError) as exc:  # database down, disk full: nothing stored, and the grader knows
        ack |= {"status": "error", "message": f"Not saved, press again: the database failed ({type(exc).__name__})"}
    if ack["status"] not in STORED and (words := str(press.get("comment") or "").strip()):
        # the card now shows another item, or the same one afresh: the words typed are given back to copy
        ended = ack["message"].rstrip().endswith((".", "!", "?"))  # "...your current item Your comment": a review
        either = "" if ack["status"] in ("review", "queue") else " either"  # B and back to the queue fail nothing
        ack["message"] = (
            ack["message"].rstrip() + ("" if ended else ".") + f" Your comment was not saved{either}: “{words}”"
        )
    st.session_state[ACK] = ack
    if (what := _described(press)) is not None:  # said if the session ends or the project is taken away next
        signin.record_press(what, ack["status"] in STORED)
    if ack["status"] in LISTED and st.session_state.get(MINE_OPEN):  # the card and the open list, both afresh
        st.rerun([GRADING, MINE])


# The outcomes of a press that stored something (a comment, not a string: Streamlit's magic would show a string).
STORED = (*CARRIED_OUT, "skipped", "undone", grade_actions.COMMENTED, "flagged")
LISTED = (*CARRIED_OUT, "skipped", "undone")
"""The outcomes that change the grader's list of graded and skipped items (`my_items`)."""
GRADING, MINE = f"grading-{pid}", f"mine-{pid}"
"""The keys of the card's fragment and of the list's, rerun together after a press the list shows (a fragment
reruns alone: the list kept its state from when it was opened until Refresh, a grader's review)."""
MINE_OPEN = f"mine-open-{pid}"


def _naming_item(outcome: grade_actions.Outcome, press: dict[str, Any]) -> str:
    """The answer to a press that stored something, naming the item it stored it for ("saved: Correct, item
    q7"): it is shown as the next item arrives, beside that item's id, where it could read as its grade. An
    undo names the item it undid (the last graded or skipped one, not the card on screen when U was pressed),
    and none when there was nothing to undo."""
    if outcome.status not in STORED:
        return outcome.message
    if press.get("action") == "undo":
        item = None if outcome.position is None else store.item(pid, outcome.position).get("id")
    else:
        item = press.get("item_id")
    return f"{outcome.message}, item {item}" if item else outcome.message


def _described(press: dict[str, Any]) -> str | None:
    """A press that stores something, in words ("grade (Correct) of item q7", "grade (correct Correct, helpful 4)
    of item q7" on a rubric card); None for the others (back, queue)."""
    item = f"item {press.get('item_id')}"
    labels = press.get("labels")
    grades = ", ".join(f"{k} {v}" for k, v in labels.items()) if isinstance(labels, Mapping) else press.get("label")
    return {
        "grade": f"grade ({grades}) of {item}",
        "skip": f"skip of {item}",
        "comment": f"comment on {item}",
        "flag": f"flag of {item}",
        "undo": "undo",
    }.get(str(press.get("action")))


def current_position(mine: list[int]) -> tuple[int | None, bool]:
    """(position to show, whether it is an earlier grade being reviewed)."""
    review = st.session_state.get(REVIEW)
    if review is not None:
        if review in mine:
            return review, True
        st.session_state[REVIEW] = None
    # the item reserved for this grader (kept on reload, freed by grade or skip, expiring when abandoned), as the
    # HTTP API's next item (core/api): the same checked action
    try:
        return grade_actions.claim(store, signin.user(), pid, plan.design(project)), False
    except grade_actions.Refused as exc:
        st.warning(str(exc))
        st.stop()


def card_of(position: int, reviewing: bool) -> dict[str, Any]:
    """The card's item part: everything shown of one item, with its showing token."""
    item = store.item(pid, position)
    view = grader_view(item, project.settings)
    previous = store.grade_of(pid, position, grader) if reviewing else None  # the primary's, in a rubric project
    showing = showings.current(
        store, pid, grader, position, str(item.get("id", "")), reviewing
    )  # the card shows it as text
    reference = view.get("reference")
    return {
        "token": showing.token,
        "position": position,
        "item_id": showing.item_id,
        "prompt_html": to_html(str(view.get("prompt") or "")),
        "response_html": to_html(str(view.get("response") or "")),
        "reference_html": None if reference in (None, "") or "reference" not in view else to_html(str(reference)),
        "image": view["image"] or None,
        "image_note": view["image_note"] or None,
        "signals": ", ".join(f"{k} {v}" for k, v in view["signals"].items()) if "signals" in view else None,
        "reviewing": reviewing,
        "previous_label": previous["label"] if previous else None,
        "previous_comment": previous["comment"] if previous else store.undone_comment(pid, position, grader),
        "previous_labels": _previous_labels(position) if previous and rubric is not None else None,
    }


def _previous_labels(position: int) -> dict[str, str]:
    """This grader's answers per criterion on their earlier card of the item (the card to review)."""
    answers = {c: store.grade_of(pid, position, grader, criterion=c) for c in rubric.names}
    return {c: grade["label"] for c, grade in answers.items() if grade is not None}


def _choices(scale: Scale) -> list[dict[str, str]]:
    return [{"label": c.label, "key": c.key} for c in scale.choices]


def _questions() -> dict[str, Any]:
    """What the card asks: one scale's ``choices``, or a rubric's ``criteria`` (each with its own choices)."""
    if rubric is None:
        return {"choices": _choices(project.settings.grading_scale), "criteria": None}
    criteria = [
        {
            "name": c.name,
            "guidelines_html": to_html(c.guidelines) if c.guidelines else None,
            "required": c.required,
            "choices": _choices(c.scale),
        }
        for c in rubric.criteria
    ]
    return {"choices": None, "criteria": criteria}


def payload() -> dict[str, Any]:
    graded, mine = store.graded_positions(pid), store.grader_positions(pid, grader)
    total = plan.design(project).N
    budget = project.settings.budget(total)
    position, reviewing = current_position(mine)
    data: dict[str, Any] = {
        "progress": f"{len(graded):,} of {total:,} items graded"
        + ("" if budget is None else f" (budget fixed at {budget:,})")
        + f" · you: {len(mine)}",
        **_questions(),
        "grader": grader,  # the name the card grades under: the open demo's name field gets it back (ui/grading_card.js)
        "min_view_ms": round(grading.min_view_s(project.settings) * 1000),
        "max_comment_chars": grading.MAX_COMMENT_CHARS,
        "can_back": bool(mine),
        "can_undo": bool(mine) or store.last_skip_since_grade(pid, grader) is not None,
        "card": None,
        "empty": None,
    }
    see_dashboard = " See the Dashboard for the result." if signin.may(auth.VIEW_DASHBOARD, pid) else ""
    if position is not None:
        data["card"] = card_of(position, reviewing)
        if (note := live.card_words(store, pid, plan.design(project), project.settings)) is not None:
            data["progress"] += f" · {note}"
    elif (closed := live.closed_words(store, pid, plan.design(project), project.settings)) is not None:
        data["empty"] = {"kind": "done", "text": closed + see_dashboard}  # the stopping rule has said done
    elif (left := (total if budget is None else budget) - len(graded)) > 0:  # the items left are held by others
        data["empty"] = {
            "kind": "held",
            "text": f"Nothing to grade for you right now: {'the item' if left == 1 else f'the {left:,} items'} left "
            f"{'is' if left == 1 else 'are'} being graded by others. An item nobody finishes comes back here by "
            f"itself (a hold lapses after {grade_actions.DEFAULT_TTL.seconds // 60} minutes).",
        }
    else:
        data["empty"] = {"kind": "done", "text": "Every item is graded." + see_dashboard}
    return data


@st.fragment(key=GRADING)
def grading_section() -> None:
    ack = st.session_state.pop(ACK, None)
    try:  # the guard reads the database too: a failure there is "not saved", like any other
        access.fragment_guard(auth.GRADE, pid)  # no item for a grader signed out, unassigned or demoted since
        data = payload()
        st.session_state[LAST] = data
    except (SQLAlchemyError, OSError) as exc:
        data = st.session_state.get(LAST)
        if data is None:
            st.error(f"The database is not answering ({type(exc).__name__}); reload the page to try again.")
            return
        if ack is not None and ack.get("status") != "error":
            ack = {**ack, "status": "error", "message": "Not saved, press again: the database failed"}
    grading_card.card({**data, "ack": ack}, on_press)
    waiting = data.get("empty") is not None and data["empty"]["kind"] == "held"
    st.session_state[HELD] = grading.holds_signature(store, pid) if waiting else None


HELD = f"grade-held-{pid}"
"""What the card saw while every item left was held by other graders (None: it has an item, or is done)."""
HELD_REFRESH_S = 5.0


@st.fragment(run_every=HELD_REFRESH_S)
def held_watch() -> None:
    """While every item left is held by other graders, look again every HELD_REFRESH_S seconds: a hold that
    lapsed, or the budget graded by others, shows on the card without a reload (grader's review: the card said
    "reload to check" and stayed on it while the project closed)."""
    seen = st.session_state.get(HELD)
    if seen is not None and seen != grading.holds_signature(store, pid):
        st.session_state[HELD] = None
        st.rerun(scope="app")


def _excerpt(text: object, length: int = 120) -> str:
    text = "" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
    return text if len(text) <= length else text[: length - 1] + "…"


def _card_words(rubric_grades: pd.DataFrame) -> dict[int, str]:
    """This grader's rubric cards in words, by position: "correct Correct, helpful 4, safe borderline"."""
    mine = rubric_grades[rubric_grades["grader"] == grader]
    order = {name: k for k, name in enumerate(rubric.names)}
    return {
        int(position): ", ".join(
            f"{g.criterion} {g.label}" for g in sorted(card.itertuples(), key=lambda g: order[g.criterion])
        )
        for position, card in mine.groupby("position")
    }


@st.fragment(key=MINE)
def my_items() -> None:
    """The grader's skipped items, then their graded ones, the latest first, searchable by id or text; choosing one
    opens it on the card."""
    items = plan.items(project)
    try:
        access.fragment_guard(auth.GRADE, pid)
        grades = store.grades(pid)
        cards = None if rubric is None else _card_words(store.rubric_grades(pid))
        skipped = store.skipped_by(pid, grader)
    except (SQLAlchemyError, OSError) as exc:
        st.warning(f"The list cannot be read now: the database failed ({type(exc).__name__}).")
        return
    mine = grades[grades["grader"] == grader].sort_values("created_at", ascending=False, kind="stable")
    grades = mine.set_index("position")  # the latest first: the item just graded is the one looked for
    rows = [(p, "skipped", "") for p in skipped]  # waiting on the grader: above the grades
    rows += [
        (int(p), grades.at[p, "label"] if cards is None else cards[p], grades.at[p, "comment"]) for p in grades.index
    ]
    table = pd.DataFrame(
        {
            "position": [p for p, _, _ in rows],
            "id": [str(items.at[p, "id"]) for p, _, _ in rows],
            "grade": [label for _, label, _ in rows],
            "comment": [c for _, _, c in rows],
            "prompt": [_excerpt(items.at[p, "prompt"]) for p, _, _ in rows],
            "response": [_excerpt(items.at[p, "response"]) for p, _, _ in rows],
        }
    )
    query = st.text_input("Search by id or text", key=f"mine-search-{pid}", placeholder="id, prompt or response text")
    if query and len(table):
        haystack = pd.Series(
            [f"{r.id} {items.at[r.position, 'prompt']} {items.at[r.position, 'response']}" for r in table.itertuples()],
            index=table.index,
        )
        table = table[haystack.str.contains(query, case=False, regex=False)]
    st.caption(f"{counted(len(table), 'item')} · choose a row to open it on the card")
    version = st.session_state.setdefault(f"mine-version-{pid}", 0)
    chosen = st.dataframe(
        table.drop(columns="position"),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=f"mine-{pid}-{version}",
    )
    # the table's rows take no key (Streamlit's grid): a keyboard or screen-reader user opens an item by its id here
    typed = st.selectbox(
        "Open an item by its id",
        table["id"].tolist(),
        index=None,
        key=f"mine-by-id-{pid}-{version}",
        placeholder="type or choose an id",
    )
    if st.button("Refresh", key=f"mine-refresh-{pid}"):
        st.rerun(scope="fragment")
    if chosen.selection.rows or typed is not None:
        row = table.iloc[chosen.selection.rows[0]] if chosen.selection.rows else table[table["id"] == typed].iloc[0]
        position = int(row["position"])
        st.session_state[f"mine-version-{pid}"] = version + 1  # fresh widgets: the same item can be chosen again
        try:
            outcome = grade_actions.reopen(store, signin.user(), pid, position)
        except grade_actions.Refused as exc:
            st.warning(f"Cannot open it: {exc}.")
            return
        st.session_state[REVIEW] = position if outcome.status == "review" else None
        st.rerun(scope="app")


NO_GUIDELINES = (
    "_No guidelines were written for this project._"
    if project.settings.rubric is None or not any(c.guidelines for c in project.settings.rubric.criteria)
    else "_No guidelines were written for the project as a whole: each criterion's are on the card._"
)
with st.sidebar.expander("Guidelines", expanded=True):  # the card's inert renderer: no image, no raw HTML, no footnote
    st.html(to_html(project.settings.guidelines or NO_GUIDELINES))
grading_section()
held_watch()
# read when opened (a rerun), not kept from the page's load: a new user's review opened it after 14 grades on "0 items"
with st.expander("My graded and skipped items", key=MINE_OPEN, on_change="rerun"):
    if st.session_state.get(MINE_OPEN):
        my_items()
