"""Grade: one item at a time, with keyboard shortcuts, skip, back, undo and a comment."""

from __future__ import annotations

import time

import streamlit as st

from core import audit, auth, grading, reservations
from core.grading import grader_view
from core.scales import scale_from_settings
from ui import plan, signin, state

store = state.store()
project = state.require_ready_project()
signin.require(auth.GRADE, project.id)
grader = state.grader()
pid = project.id
scale = scale_from_settings(project.settings)
REVIEW = f"review-{pid}"

st.title("Grade")
if not grader:
    st.warning("Type your name in the sidebar (**Your name**) to start grading; every grade is saved under it.")
    st.stop()


def _shown_since(position: int) -> float:
    return st.session_state.setdefault(f"shown-{pid}-{position}", time.monotonic())


def on_grade(position: int, label: str) -> None:
    seconds = time.monotonic() - _shown_since(position)
    if seconds < grading.MIN_VIEW_S:
        # faster than anyone can read: a key held down or pressed twice, not a judgement of this item
        st.session_state["flash"] = f"ignored a grade given {seconds:.2f} s after the item appeared"
        return
    comment = st.session_state.get(f"comment-{pid}-{position}", "")
    earlier = store.grade_of(pid, position, grader)
    if earlier is None:  # a queue item: record it and free its reservation
        reservations.grade(store, pid, position, scale, label, grader, comment=comment, seconds=seconds)
    else:  # a changed grade: the old one is kept, retracted; the item left in the queue stays reserved
        grading.submit(store, pid, position, scale, label, grader, comment=comment, seconds=seconds)
        audit.record(
            store, signin.user(), audit.GRADE_CHANGED, pid, position=position, before=earlier["label"], after=label
        )
    st.session_state.pop(f"shown-{pid}-{position}", None)
    if st.session_state.get(REVIEW) is None:
        st.session_state["flash"] = f"saved: {label}"
    else:  # an earlier grade was changed: back to the item the grader left in the queue
        st.session_state[REVIEW] = None
        st.session_state["flash"] = f"changed to: {label}"


def on_skip(position: int) -> None:
    reservations.skip(store, pid, position, grader)
    audit.record(store, signin.user(), audit.SKIP, pid, position=position)
    st.session_state.pop(f"shown-{pid}-{position}", None)
    st.session_state["flash"] = "skipped: the item went back to the queue"


def on_undo() -> None:
    position = store.retract_last_grade(pid, grader)
    st.session_state[REVIEW] = None
    if position is None:
        st.session_state["flash"] = "nothing to undo"
        return
    audit.record(store, signin.user(), audit.UNDO, pid, position=position)
    if reservations.hold(store, pid, position, grader):  # the item is this grader's again
        st.session_state["flash"] = "undone: the item is back, ungraded"
    else:  # another grader took it in the meantime; it stays in the queue, ungraded
        st.session_state["flash"] = "undone: the grade is withdrawn; another grader holds the item now"


def on_back() -> None:
    history = store.grader_positions(pid, grader)
    index = st.session_state.get(REVIEW)
    index = len(history) - 1 if index is None else index - 1
    st.session_state[REVIEW] = max(index, 0) if history else None


def on_resume() -> None:
    st.session_state[REVIEW] = None


def current_position(mine: list[int]) -> tuple[int | None, bool]:
    """(position to show, whether it is an earlier grade being reviewed)."""
    review = st.session_state.get(REVIEW)
    if review is not None:
        if review < len(mine):
            return mine[review], True
        st.session_state[REVIEW] = None
    # the item reserved for this grader (kept on reload, freed by grade or skip, expiring when abandoned)
    position = reservations.claim(
        store,
        pid,
        plan.design(project),
        int(project.settings.get("seed", 0)),
        grader,
        overlap=float(project.settings.get("overlap", 0.0)),
    )
    return position, False


IMAGE_PREFIXES = ("https://", "http://", "data:image/")
LONG_TEXT = 700  # characters; longer texts get a fixed-height box that scrolls


def scrolling_markdown(text: str, height: int) -> None:
    """Markdown in a bordered box (HTML is escaped, never run); a long text scrolls inside it."""
    long = len(text) > LONG_TEXT or text.count("\n") > 15
    with st.container(height=height if long else "content", border=True):
        st.markdown(text)


def show_item(view: dict) -> None:
    with st.container(key="item-id"):  # the item's id, for comments and for browser tests to follow
        st.caption(f"Item {view['id']}")
    st.markdown("**Prompt**")
    scrolling_markdown(str(view.get("prompt") or ""), 240)
    image = str(view.get("image") or "")
    if image.startswith(IMAGE_PREFIXES):
        st.image(image, width=480)  # the browser fetches it; nothing is read from the server's disk
    elif image:
        st.caption(f"Image not shown (only http(s) URLs and data:image URIs are displayed): {image[:200]}")
    if "reference" in view and view["reference"] not in (None, ""):
        with st.expander("Reference answer", expanded=True):
            st.markdown(str(view["reference"]))
    st.markdown("**Response to grade**")
    scrolling_markdown(str(view.get("response") or ""), 420)
    if "signals" in view:
        st.caption("Surrogate signals: " + ", ".join(f"{k} {v}" for k, v in view["signals"].items()))


@st.fragment
def grading_card() -> None:
    graded, mine = store.graded_positions(pid), store.grader_positions(pid, grader)
    position, reviewing = current_position(mine)
    total = plan.design(project).N
    flash = st.session_state.pop("flash", "")
    st.progress(
        len(graded) / total,
        text=f"{len(graded):,} of {total:,} items graded · you: {len(mine)}" + (f" · {flash}" if flash else ""),
    )
    if position is None:
        if (left := total - len(graded)) > 0:  # every ungraded item is held by another grader
            st.info(
                f"Nothing to grade for you right now: {'the item' if left == 1 else f'the {left:,} items'} left "
                f"{'is' if left == 1 else 'are'} being graded by others. An item nobody finishes comes back here; "
                "reload to check."
            )
        else:
            st.success(
                "Every item is graded."
                + (" See the **Dashboard** for the result." if signin.may(auth.VIEW_DASHBOARD, pid) else "")
            )
        st.button("Undo my last grade", on_click=on_undo, shortcut="U", key="undo-done")
        return
    _shown_since(position)
    item = store.item(pid, position)
    previous = store.grade_of(pid, position, grader) if reviewing else None
    if reviewing:
        st.info(
            f"Reviewing your earlier grade: **{previous['label'] if previous else 'none'}**. Pick a grade to change it."
        )
    main, side = st.columns([3, 1])
    with main:
        show_item(grader_view(item, project.settings))
    with side:
        st.markdown("**Your grade**")
        for choice in scale.choices:
            st.button(
                f"{choice.label}",
                key=f"grade-{choice.label}",
                shortcut=choice.key,
                width="stretch",
                type="primary" if previous and previous["label"] == choice.label else "secondary",
                on_click=on_grade,
                args=(position, choice.label),
            )
        st.text_area(
            "Comment (optional)",
            key=f"comment-{pid}-{position}",
            height=90,
            value=previous["comment"] if previous else "",
        )
        st.button(
            "Skip", key="skip", shortcut="S", on_click=on_skip, args=(position,), disabled=reviewing, width="stretch"
        )
        st.button(
            "Back to my previous grade", key="back", shortcut="B", on_click=on_back, width="stretch", disabled=not mine
        )
        st.button("Undo my last grade", key="undo", shortcut="U", on_click=on_undo, width="stretch")
        if reviewing:
            st.button("Back to the queue", key="resume", shortcut="Q", on_click=on_resume, width="stretch")
        st.caption("Keys: " + " · ".join(f"{c.key} {c.label}" for c in scale.choices) + " · S skip · B back · U undo")


with st.sidebar.expander("Guidelines", expanded=True):
    st.markdown(project.settings.get("guidelines") or "_No guidelines were written for this project._")
grading_card()
