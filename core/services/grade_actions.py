"""What a grader's key press or click does, checked against the database every time.

The grade page (app_pages/grade.py) passes the acting user explicitly; every
function here reads that user's account, role and project assignment again
(a disabled, demoted or unassigned grader is refused even in a callback of a
page opened before the change) and acts on the item position the press names,
never on another one. A request that runs several of them (the HTTP API's grade
with ``then=next``: the grade, then the claim of the next card) checks once
(``check``) and passes the ``Acting`` it returns to each: the account, the
assignment and the project are read once per request, never kept across requests. What the browser shows is bound to that position by a
showing token in the database (core.services.showings), which the page checks first.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.services import auth, grading, live, reservations, showings
from core.services.audit import COMMENTED
from core.services.outcome import UNCHANGED, Outcome, Refused
from core.services.reservations import DEFAULT_TTL
from core.services.side_by_side import grades_for_targets, labels_by_side, order_of, side_names
from core.settings import ProjectSettings
from core.stats.allocation import Design
from core.store import ProjectInfo, Store, records, reviews
from core.store.models import aware

logger = logging.getLogger(__name__)

__all__ = [
    "COMMENTED",
    "DEFAULT_TTL",
    "Acting",
    "Outcome",
    "Refused",
    "acting_grader",
    "check",
    "claim",
    "comment",
    "flag",
    "grade",
    "grade_card",
    "grade_rubric",
    "reopen",
    "skip",
    "undo",
]


@dataclass(frozen=True)
class Acting:
    """A grader allowed to grade a project, as ``check`` read them: the account and the project (its settings
    for the press). Made by ``check`` for one request and passed to each of its presses in place of the user."""

    grader: auth.User
    project: ProjectInfo

    @property
    def name(self) -> str:
        """The grader's name (what a refusal's log line names)."""
        return self.grader.name


Actor = auth.User | Acting | None
"""Who presses: a user, checked again by the press, or an ``Acting`` checked in this request."""


def _logs_refusals(action: Callable[..., Outcome]) -> Callable[..., Outcome]:
    """``action`` (a press: its arguments start with store, actor, project_id) logging each refusal, with the
    grader's name and why, before the page shows it; a refusal of a value the press sent (one naming its
    ``field``: a label, a comment) names the field, not the value, which the page's message quotes ("'correct'
    is not a grade": a grade in the log, which the docs say never holds one, as an attacker's review read)."""

    @functools.wraps(action)
    def logged(store: Store, actor: Actor, project_id: int, *args, **kwargs) -> Outcome:
        try:
            return action(store, actor, project_id, *args, **kwargs)
        except Refused as refused:
            who = actor.name if actor is not None else "a signed-out user"
            why = str(refused) if refused.field is None else f"the {refused.field} sent was not taken"
            logger.info("project %d: %s refused for %s: %s", project_id, action.__name__, who, why)
            raise

    return logged


def acting_grader(store: Store, actor: Actor, project_id: int) -> auth.User:
    """``actor`` as the database has them now, allowed to grade the project; Refused otherwise."""
    return _acting(store, actor, project_id)[0]


def check(store: Store, actor: Actor, project_id: int, *, current: bool = False) -> Acting:
    """``actor`` as the database has them now, allowed to grade the project, with the project as read for the
    check (ready); Refused otherwise. ``current``: ``actor`` was read from the accounts table in this request
    (an API token's or a session's account: core.services.tokens.resolve, core.services.sessions.resume), so it
    is not read again."""
    fresh = current or actor is None or actor.id is None
    grader = actor if fresh else auth.refresh(store, actor)
    if grader is None:
        raise Refused("you are signed out (or your account was disabled); sign in again")
    try:
        auth.require(store, grader, auth.GRADE, project_id)
    except auth.AccessDenied as exc:
        raise Refused(str(exc)) from None
    if not grader.name:
        raise Refused("a grade needs the grader's name")
    try:
        project = store.project(project_id)
    except KeyError:
        raise Refused("the project was deleted") from None
    if project.status != "ready":
        raise Refused(f"the project is not ready ({project.status})")
    return Acting(grader, project)


def _acting(store: Store, actor: Actor, project_id: int) -> tuple[auth.User, ProjectInfo]:
    """The grader and the project for a press: ``actor``'s own when it is an ``Acting`` of this project (checked
    in this request), else ``check``'s."""
    acting = actor if isinstance(actor, Acting) else check(store, actor, project_id)
    if acting.project.id != project_id:
        raise ValueError(f"checked for project {acting.project.id}, pressed in project {project_id}")
    return acting.grader, acting.project


@_logs_refusals
def claim(store: Store, actor: Actor, project_id: int, design: Design) -> int | None:
    """The position to show the grader now, reserved for them (core.services.reservations.claim with the
    project's seed, double-grading share, budget and stopping rule: no new item once the rule has said done,
    core.services.live.rule_says_done, and the skipped items first while they alone keep it open,
    core.services.live.rule_held); None when nothing is left for them. ``design``: the project's
    (core.stats.design.prepared_design; callers cache it)."""
    grader, project = _acting(store, actor, project_id)
    settings = project.settings
    steps = functools.partial(store.skip_steps, project_id)
    return reservations.claim(
        store,
        project_id,
        design,
        settings.seed,
        grader.name,
        overlap=settings.overlap,
        budget=settings.budget(design.N),
        closed=functools.partial(live.rule_says_done, design, settings, skip_steps=steps),
        settings=settings,
        held=functools.partial(live.rule_held, design, settings),
    )


@_logs_refusals
def grade(
    store: Store,
    actor: Actor,
    project_id: int,
    position: int,
    label: str,
    *,
    seconds: float,
    comment: str = "",
) -> Outcome:
    """Store ``label`` for the item at ``position`` (a first grade or a change of the grader's own).

    A press sooner than the project's minimum viewing time (core.services.grading.min_view_s)
    after the browser showed the item is not a judgement of it (a key held or pressed twice):
    nothing is stored. A first grade is saved only while the grader holds the item
    (core.services.reservations.hold: the expiry rule); an item another grader
    holds or has graded since is refused with reservations.LATE, never swapped.
    """
    grader, project = _acting(store, actor, project_id)
    settings = project.settings
    if settings.compares:  # a grade without its target would mean nothing
        raise Refused("this project compares models: its items are graded on the side-by-side card (grade_card)")
    if settings.criteria:  # a grade without its criterion would mean nothing
        raise Refused("this project grades a rubric: give every criterion's grade on one card (grade_rubric)")
    if (early := _too_fast(project_id, grader, position, seconds, settings)) is not None:
        return early
    scale = settings.grading_scale
    grading.check_label(scale, label)
    if not 0 <= position < store.item_count(project_id):
        raise Refused("no such item")
    earlier = store.grade_of(project_id, position, grader.name, settings.design_criterion)
    if earlier is not None and (
        same := _as_stored(store, settings, project_id, position, grader, {"": label}, comment)
    ):
        return same
    if earlier is None:  # a queue item: record it and free its reservation
        if not reservations.hold(store, project_id, position, grader.name):
            raise Refused(reservations.LATE)
        grade_id = reservations.record_grade(
            store, project_id, position, scale, label, grader.name, comment=comment, seconds=seconds
        )
        return Outcome("saved", f"saved: {label}", position, grade_id)
    # a changed grade: the old one is kept, retracted; the comment stays unless a new one is given
    grade_id = reservations.submit(  # the store records the change in the audit trail with it
        store, project_id, position, scale, label, grader.name, comment=comment or earlier["comment"], seconds=seconds
    )
    return Outcome("changed", f"changed to: {label}", position, grade_id)


def _too_fast(
    project_id: int, grader: auth.User, position: int, seconds: float, settings: ProjectSettings
) -> Outcome | None:
    """The outcome of a press sooner than the project's minimum viewing time (nothing stored, see ``grade``; the
    item stays the grader's, so the press may be sent again once the item has been looked at); None otherwise."""
    minimum = grading.min_view_s(settings)
    if not seconds < minimum:  # NaN too: check_seconds refuses it when the grade is recorded
        return None
    logger.info("project %d: a press by %s ignored, %.2f s after the item appeared", project_id, grader.name, seconds)
    return Outcome(
        "too_fast",
        f"ignored: pressed {seconds:.2f} s after the item appeared, sooner than the project's minimum viewing "
        f"time of {minimum:g} s; look at the item and press again (the item is still yours)",
        position,
    )


@_logs_refusals
def grade_card(
    store: Store,
    actor: Actor,
    project_id: int,
    position: int,
    labels: Sequence[str] | Mapping[str, str],
    *,
    seconds: float,
    comment: str = "",
) -> Outcome:
    """Store a side-by-side card's grades, ``labels`` side by side (left to right), or by side name as the HTTP
    API gives them (core.services.side_by_side.labels_by_side), in one transaction.

    The card's order is the project's (core.services.side_by_side.order_of: its seed and card key, the position and
    its targets): side j's grade is stored with the target order[j] and side j (grades.target, grades.side).
    Refused unless the project compares its targets side by side and every side has a grade of its scale;
    the minimum viewing time and the expiry rule are ``grade``'s.
    """
    grader, project = _acting(store, actor, project_id)
    settings = project.settings
    if not settings.side_by_side:
        raise Refused("this project does not grade responses side by side")
    if (early := _too_fast(project_id, grader, position, seconds, settings)) is not None:
        return early
    order = order_of(settings, position)
    if isinstance(labels, Mapping):
        try:
            labels = labels_by_side(labels, len(order))
        except InputError as exc:
            raise Refused(str(exc), field=exc.field) from None
    scale = settings.grading_scale
    for side, label in zip(side_names(len(order)), labels):
        grading.check_label(scale, label, f"labels.{side}")
    values = [scale.value_of(label) for label in labels]
    try:
        by_target = grades_for_targets(order, values)
    except InputError as exc:
        raise Refused(str(exc)) from None
    first = _holds_card(store, project_id, position, grader, settings.design_criterion)
    asked = dict(zip(side_names(len(order)), labels))
    if not first and (same := _as_stored(store, settings, project_id, position, grader, asked, comment)):
        return same
    card = [(target, by_target[target], label) for target, label in zip(order, labels)]
    reservations.record_card(store, project_id, position, card, grader.name, comment=comment, seconds=seconds)
    status = "saved" if first else "changed"
    return Outcome(status, f"{status}: {', '.join(labels)}", position)


@_logs_refusals
def grade_rubric(
    store: Store,
    actor: Actor,
    project_id: int,
    position: int,
    labels: Mapping[str, str],
    *,
    seconds: float,
    comment: str = "",
) -> Outcome:
    """Store a rubric card's grades, ``labels`` criterion -> label, in one transaction (core.rubric.Rubric.
    card_values: every required criterion answered, each label on its criterion's scale; a change replaces the
    grader's whole earlier card). Refused in a project without a rubric; the minimum viewing time and the
    expiry rule are ``grade``'s."""
    grader, project = _acting(store, actor, project_id)
    settings = project.settings
    rubric = settings.rubric
    if rubric is None:
        raise Refused("this project asks one question: grade it with one label (grade)")
    if (early := _too_fast(project_id, grader, position, seconds, settings)) is not None:
        return early
    try:
        card = rubric.card_values(labels)
    except InputError as exc:
        raise Refused(str(exc), field=exc.field) from None
    first = _holds_card(store, project_id, position, grader, settings.design_criterion)
    asked = {name: label for name, _, label in card}
    if not first and (same := _as_stored(store, settings, project_id, position, grader, asked, comment)):
        return same
    left_out = [c for c in rubric.names if c not in {name for name, _, _ in card}]
    # a changed card replaces the whole earlier card: the criteria it leaves out that the earlier one answered go
    withdrawn = [] if first else [c for c in left_out if store.grade_of(project_id, position, grader.name, c)]
    reservations.record_card(
        store, project_id, position, card, grader.name, comment=comment, seconds=seconds, rubric=True
    )
    status = "saved" if first else "changed"
    said = ", ".join(f"{name} {label}" for name, _, label in card)
    gone = f"; withdrawn: {', '.join(withdrawn)}" if withdrawn else ""
    return Outcome(status, f"{status}: {said}{gone}", position)


def stored_press(store: Store, actor: Actor, project_id: int, position: int) -> tuple[dict[str, str], str, int | None]:
    """The acting grader's active press of the item, as the press was sent: its labels keyed "" (a project that
    asks one question), by criterion (a rubric's card) or by side name (a side-by-side card's, from the side each
    grade was shown on), its comment, and the grade's id where the press stored one grade (None for a card of
    several)."""
    grader, project = _acting(store, actor, project_id)
    return _pressed(store, project.settings, project_id, position, grader)


def press_status(store: Store, actor: Actor, project_id: int, showing: showings.Showing) -> str:
    """What the stored press with ``showing``'s token did: "changed" where the acting grader's grade of its item
    stood when the card was released (an earlier card: core.services.cards), "saved" where it was their first (or
    came after an undo took the grade back); the answer to that press sent again says the same (an API review: a
    change sent again after a lost answer was said "saved")."""
    grader, _ = _acting(store, actor, project_id)
    rows = records.item_grades(store, project_id, showing.position)
    mine = rows[rows["grader"] == grader.name]
    released = showing.released_at
    standing = [
        aware(made) < released and (pd.isna(gone) or aware(gone) > released)
        for made, gone in zip(mine["created_at"], mine["retracted_at"])
    ]
    return "changed" if any(standing) else "saved"


def _pressed(
    store: Store, settings: ProjectSettings, project_id: int, position: int, grader: auth.User
) -> tuple[dict[str, str], str, int | None]:
    """`stored_press` for a grader already checked."""
    card = store.card_of(project_id, position, grader.name)
    if settings.side_by_side:
        names = side_names(len(settings.targets))
        keys = [names[int(side)] for side in card["side"]]
    elif settings.rubric is not None:
        keys = list(card["criterion"])
    else:
        keys = [""] * len(card)
    comment = str(card["comment"].iloc[0] or "") if len(card) else ""
    return dict(zip(keys, card["label"])), comment, int(card["id"].iloc[0]) if len(card) == 1 else None


def _as_stored(
    store: Store,
    settings: ProjectSettings,
    project_id: int,
    position: int,
    grader: auth.User,
    asked: dict[str, str],
    comment: str,
) -> Outcome | None:
    """UNCHANGED where a change of the grader's card asks the labels it holds (``asked``, keyed as `stored_press`
    keys them) with its comment or none (a change without a comment keeps the old one): nothing is written (a
    card opened with Back and sent again as it was said "changed", and the audit trail held a change not made);
    None otherwise."""
    stored, said, _ = _pressed(store, settings, project_id, position, grader)
    if stored != asked or comment.strip() not in ("", said):
        return None
    shown = ", ".join(f"{k} {v}" if k else v for k, v in asked.items())
    return Outcome(UNCHANGED, f"unchanged: {shown}, as it was", position)


def _holds_card(store: Store, project_id: int, position: int, grader: auth.User, criterion: str) -> bool:
    """Whether a card's grades of the item are the grader's first (True) or a change of theirs (False), by their
    grade of ``criterion`` (the project's design criterion); Refused for no such item, or a first grade of an
    item the grader no longer holds (reservations.LATE)."""
    if not 0 <= position < store.item_count(project_id):
        raise Refused("no such item")
    if store.grade_of(project_id, position, grader.name, criterion) is not None:
        return False
    if not reservations.hold(store, project_id, position, grader.name):
        raise Refused(reservations.LATE)
    return True


@_logs_refusals
def comment(store: Store, actor: Actor, project_id: int, position: int, text: str) -> Outcome:
    """Set the comment of the grader's grade of the item, leaving the grade alone (its own audit event)."""
    grader = acting_grader(store, actor, project_id)
    if store.set_comment(project_id, position, grader.name, grading.check_comment(text)) is None:
        raise Refused("grade the item first; the comment is saved with the grade")
    return Outcome(COMMENTED, "comment saved", position)


FLAGS_PER_ITEM = 3
"""The most flags one grader raises on one item (`flag`): each new note was a new flag and audit event, without
end, so one grader's loop grew the database and the audit trail by 0.6 MB a second (an attacker's review)."""


@_logs_refusals
def flag(store: Store, actor: Actor, project_id: int, position: int, note: str = "") -> Outcome:
    """Send the item to the review queue (core.services.review) with the grader's note; the item stays theirs
    to grade or skip. Only an item the grader holds or has graded: a flag is about what they were shown. A flag
    the grader raised on the item already with the same note is not raised again (a key pressed twice, a
    request sent again after a lost answer): one flag, one line on the Review page; at most FLAGS_PER_ITEM of
    theirs on one item."""
    grader = acting_grader(store, actor, project_id)
    note = grading.check_comment(note)
    if store.grade_of(project_id, position, grader.name) is None and not reservations.hold(
        store, project_id, position, grader.name
    ):
        raise Refused("flag an item on your card: this one is another grader's now")
    raised = reviews.flags(store, project_id, [position])
    theirs = raised["grader"] == grader.name
    if (theirs & (raised["note"] == note)).any():
        return Outcome(reviews.FLAGGED, "flagged for review (already, with this note)", position)
    if theirs.sum() >= FLAGS_PER_ITEM:
        raise Refused(
            f"you flagged this item {FLAGS_PER_ITEM} times already: a reviewer reads your notes; say more in your "
            "grade's comment"
        )
    reviews.add_flag(store, project_id, position, grader.name, note)
    return Outcome(reviews.FLAGGED, "flagged for review", position)


@_logs_refusals
def skip(store: Store, actor: Actor, project_id: int, position: int, *, seconds: float) -> Outcome:
    """Pass on the item: it goes back to the queue. A press sooner than the minimum viewing time after the item
    appeared is no decision on it either (``grade``'s rule): a skip pressed just after a grade, meant for the
    card before, passed over an item the grader never saw, which then held the project's stop."""
    grader, project = _acting(store, actor, project_id)
    if (early := _too_fast(project_id, grader, position, seconds, project.settings)) is not None:
        return early
    if store.grade_of(project_id, position, grader.name) is not None:
        raise Refused("you graded this item; undo or change the grade instead")
    reservations.skip(store, project_id, position, grader.name)
    return Outcome("skipped", "skipped: the item went back to the queue", position)


NOTHING_TO_UNDO = "you have no grade or skip to take back"


@_logs_refusals
def undo(store: Store, actor: Actor, project_id: int, item_id: str | None = None) -> Outcome:
    """Undo the grader's last action: a skip (taken back, Store.undo_skip: the item is theirs again and no longer
    counts as skipped, unless it has been graded or another grader holds it), else their last grade (retracted;
    the item is theirs again unless another grader took it; where that grade changed an earlier one, the earlier
    one stands again, Store.retract_last_grade). Each Undo reaches one action further back;
    Refused (NOTHING_TO_UNDO) when the grader has neither: nothing was undone, which an answer of "undone"
    hid from a client that undoes until the history is empty. An undo ends the cards shown before it
    (core.services.showings.withdraw). ``item_id``: the item the grader means to undo, Refused where their last
    action is on another (an undo sent again after a lost answer undid one action more: an integrator's
    review)."""
    grader = acting_grader(store, actor, project_id)
    if item_id is not None:
        last = _last_action(store, project_id, grader.name)
        last_id = None if last is None else store.item_ids(project_id, [last]).get(last)
        if last_id != item_id:
            raise Refused(
                f"your last grade or skip is on {'no item' if last_id is None else repr(last_id)}, not on "
                f"{item_id!r}: nothing was undone",
                field="item_id",
            )
    outcome = _undone(store, project_id, grader.name)
    showings.withdraw(store, project_id, grader.name)
    return outcome


def _last_action(store: Store, project_id: int, grader: str) -> int | None:
    """The position `_undone` would act on: the grader's last skip where it came after their last grade, else
    their last graded card (None: nothing to undo)."""
    skipped = store.last_skip_since_grade(project_id, grader)
    if skipped is not None and skipped in store.skipped_positions(project_id):
        return skipped
    graded = store.grader_positions(project_id, grader)
    return graded[-1] if graded else None


def _undone(store: Store, project_id: int, grader: str) -> Outcome:
    """`undo`'s step back: the last skip, else the last card (Refused NOTHING_TO_UNDO without either)."""
    skipped = store.last_skip_since_grade(project_id, grader)
    if skipped is not None and skipped in store.skipped_positions(project_id):
        if reservations.hold(store, project_id, skipped, grader):
            store.undo_skip(project_id, skipped, grader)
            return Outcome("undone", "undone: the skipped item is back", skipped)
    undone = store.retract_last_grade(project_id, grader)
    if undone is None:
        raise Refused(NOTHING_TO_UNDO)
    position = undone.position
    if undone.restored:  # the last card changed an earlier one: that one stands again
        return Outcome("undone", "undone: your change is taken back, and the grade you gave before stands", position)
    if reservations.hold(store, project_id, position, grader):
        return Outcome("undone", "undone: the item is back, ungraded", position)
    return Outcome("undone", "undone: the grade is withdrawn; another grader holds the item now", position)


@_logs_refusals
def reopen(store: Store, actor: Actor, project_id: int, position: int) -> Outcome:
    """Take a skipped item back (from the grader's list): reserved for the grader if nobody holds it."""
    grader = acting_grader(store, actor, project_id)
    if store.grade_of(project_id, position, grader.name) is not None:
        return Outcome("review", "your grade of this item", position)
    if not reservations.hold(store, project_id, position, grader.name):
        raise Refused("another grader has this item now")
    return Outcome("reopened", "the skipped item is yours to grade", position)
