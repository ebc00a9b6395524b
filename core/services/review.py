"""Review and adjudication: the queue a reviewer works, the final grade they set, and the validation sample.

An item comes to review for three reasons (``QueueEntry.reasons``): its grades disagree, a grader
flagged it from the grading card (core.services.grade_actions.flag), or it is graded and in the
project's random audit share (``audit_positions``, ``ProjectSettings.audit_share``). A reviewer (or an
admin) sees the item, every grade with its grader and comment, and the flags, and sets the final grade
(``settle``): stored in ``reviews`` with its audit event, never over a grade of the reviewer's own.
Every action takes the acting user and checks the role, the assignment and the project each time
(core.services.outcome.permitted).

The final grade of an item is decided in one place, core.stats.rater_agreement.final_grades (the
reviewed grade, else the mean grader's grade), which core.store.Store.graded_positions applies: the
estimate, the queue and every export read final grades from there. The random items checked, the
double-graded share with its disagreements settled and the audited share once reviewed, are the
validation sample of core.stats.validation (``validation_finals``, ``validated``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.services import auth, grading
from core.services.outcome import Outcome, Refused, permitted
from core.services.reservations import double_graded, drawn_positions
from core.stats.allocation import Design
from core.stats.validation import Validated, validated_estimate
from core.store import Store, reviews

AUDIT_SEED_OFFSET = 7_919
"""Keeps the audit draw independent of the queue's order and of the double-graded share for one seed."""
DISAGREEMENT, FLAGGED, AUDIT = "disagreement", "flagged", "audit"
REASONS = (FLAGGED, DISAGREEMENT, AUDIT)
"""Why an item is in the review queue, in the order the queue serves them."""


def audit_positions(n_items: int, share: float, seed: int) -> frozenset[int]:
    """The pool's items picked for a reviewer's audit once graded: round(share * n_items) at random."""
    return drawn_positions(n_items, share, seed + AUDIT_SEED_OFFSET)


def audited(store: Store, project_id: int) -> frozenset[int]:
    """The project's audit share, from its settings (``audit_share``, ``seed``)."""
    settings = store.project(project_id).settings
    return audit_positions(store.item_count(project_id), settings.audit_share, settings.seed)


@dataclass(frozen=True)
class QueueEntry:
    position: int
    reasons: tuple[str, ...]


def queue(store: Store, actor: auth.User | None, project_id: int) -> list[QueueEntry]:
    """The items waiting for review (no final grade yet): flagged first, then disagreements, then the audit
    share, each oldest first."""
    permitted(store, actor, auth.REVIEW, project_id)
    graded = store.graded_positions(project_id)
    sources = {
        FLAGGED: [int(p) for p in dict.fromkeys(reviews.flags(store, project_id)["position"])],
        DISAGREEMENT: reviews.disagreements(store, project_id),
        AUDIT: [p for p in graded if p in audited(store, project_id)],
    }
    settled = set(reviews.reviews(store, project_id)["position"])
    reasons: dict[int, list[str]] = {}
    for reason in REASONS:
        for position in sources[reason]:
            if position not in settled:
                reasons.setdefault(position, []).append(reason)
    return [QueueEntry(p, tuple(r)) for p, r in reasons.items()]


@dataclass(frozen=True)
class ReviewItem:
    """What a reviewer sees of one item: the item, its active grades (grader, label, comment, time), the
    flags, and its final grade now (``review``: the active review as a dict, or None)."""

    position: int
    item: dict[str, Any]
    grades: pd.DataFrame
    flags: pd.DataFrame
    review: dict[str, Any] | None


def item(store: Store, actor: auth.User | None, project_id: int, position: int) -> ReviewItem:
    """The item at ``position`` as a reviewer sees it (Refused without the review permission)."""
    permitted(store, actor, auth.REVIEW, project_id)
    try:
        shown = store.item(project_id, position)
    except KeyError:
        raise Refused("no such item") from None
    grades = store.grades(project_id)
    review = reviews.reviews(store, project_id, [position])
    return ReviewItem(
        position=position,
        item=shown,
        grades=grades[grades["position"] == position].reset_index(drop=True),
        flags=reviews.flags(store, project_id, [position]),
        review=None if review.empty else review.iloc[-1].to_dict(),
    )


def settle(
    store: Store, actor: auth.User | None, project_id: int, position: int, label: str, *, note: str = ""
) -> Outcome:
    """Set the item's final grade to ``label`` (a grade of the project's scale), with the reviewer's note.

    Refused unless the actor may review the project, the project is ready, the item has a grade, and none
    of its grades is the reviewer's own (nobody settles a disagreement they are part of). A second
    review of the item replaces the first, which stays in the table, retracted; both are audited.
    """
    reviewer = permitted(store, actor, auth.REVIEW, project_id)
    try:
        project = store.project(project_id)
    except KeyError:
        raise Refused("the project was deleted") from None
    if project.status != "ready":
        raise Refused(f"the project is not ready ({project.status})")
    scale = project.settings.grading_scale
    try:
        value = scale.value_of(label)
    except KeyError:
        raise Refused(f"{label!r} is not a grade of this project") from None
    grades = store.grades(project_id)
    graders = set(grades.loc[grades["position"] == position, "grader"])
    if not graders:
        raise Refused("the item has no grade yet; it comes to review once graded")
    if reviewer.name in graders:
        raise Refused("you graded this item yourself; another reviewer settles it")
    reviews.add_review(
        store, project_id, position, value=value, label=label, reviewer=reviewer.name, note=grading.check_comment(note)
    )
    return Outcome("reviewed", f"final grade: {label}", position)


def validation_finals(store: Store, project_id: int) -> dict[int, float]:
    """The validation sample's final grades (position -> grade): the double-graded share's items graded
    twice (their disagreements settled by review where a reviewer has, else their mean grade: the
    estimand's rule) and the audit share's items once reviewed. Both are random draws of the pool,
    independent of the grades, so the items not yet checked leave the rest a random sample."""
    finals = store.graded_positions(project_id)
    counts = store.grades(project_id)["position"].value_counts()
    twice = {int(p) for p, k in counts.items() if k >= 2} & double_graded(store, project_id)
    settled = set(reviews.reviews(store, project_id)["position"]) & audited(store, project_id)
    return {p: finals[p] for p in finals if p in twice or p in settled}


def validated(store: Store, project_id: int, design: Design) -> Validated:
    """The project's estimate corrected on its validation sample (core.stats.validation)."""
    return validated_estimate(design, store.first_grades(project_id), validation_finals(store, project_id))
