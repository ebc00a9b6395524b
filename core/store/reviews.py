"""Reviewers' final grades and graders' flags: their SQL (tables ``reviews`` and ``flags``, revision 0012).

A review is keyed (project, position, target, criterion): one active review per key, a changed one
retracts the earlier row in the same transaction, which also writes its audit event, as the store does
for grades (core.store.store.GRADE_EVENTS). A rubric item's final grades, one per criterion the reviewer
settles, are stored together in one transaction (``add_reviews``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
from sqlalchemy import func, select, update

from core.store.models import Flag, Grade, Review, utcnow

if TYPE_CHECKING:
    from core.store.store import Store

REVIEWED, FLAGGED = "reviewed", "flagged"
"""Audit events written with the review or the flag itself (actor: the reviewer, the grader)."""
REVIEW_COLUMNS = ["id", "position", "target", "criterion", "value", "label", "reviewer", "note", "created_at"]
FLAG_COLUMNS = ["id", "position", "target", "criterion", "grader", "note", "created_at"]


def add_review(
    store: Store,
    project_id: int,
    position: int,
    *,
    value: float,
    label: str,
    reviewer: str,
    note: str = "",
    target: str = "",
    criterion: str = "",
) -> int:
    """Set the item's final grade (retracting an earlier review of the same key) with its audit event; its id."""
    [review_id] = add_reviews(
        store, project_id, position, [(target, criterion, value, label)], reviewer=reviewer, note=note
    )
    return review_id


def add_reviews(
    store: Store,
    project_id: int,
    position: int,
    finals: Sequence[tuple[str, str, float, str]],
    *,
    reviewer: str,
    note: str = "",
) -> list[int]:
    """Set the item's final grades, ``finals`` listing (target, criterion, value, label): a rubric's criteria,
    or a comparison's targets, in one transaction: each retracts the earlier review of its key and writes its
    audit event, and either all are stored or none. Returns the review ids, in ``finals``' order."""
    from core.store.store import _event

    with store._writing("the review", project_id), store.session() as s, s.begin():
        now = utcnow()
        ids = []
        for target, criterion, value, label in finals:
            earlier = s.scalars(
                update(Review)
                .where(
                    Review.project_id == project_id,
                    Review.position == position,
                    Review.target == target,
                    Review.criterion == criterion,
                    Review.retracted_at.is_(None),
                )
                .values(retracted_at=now)
                .returning(Review.label)
            ).all()
            review = Review(
                project_id=project_id,
                position=position,
                target=target,
                criterion=criterion,
                value=float(value),
                label=label,
                reviewer=reviewer,
                note=note,
                created_at=now,
            )
            s.add(review)
            s.flush()
            detail = {"target": target, "criterion": criterion} if target or criterion else {}
            _event(
                s,
                reviewer,
                REVIEWED,
                project_id,
                position=position,
                before=earlier[-1] if earlier else None,
                after=label,
                **detail,
            )
            ids.append(review.id)
        return ids


def reviews(store: Store, project_id: int, positions: list[int] | None = None) -> pd.DataFrame:
    """Active reviews, oldest first (of ``positions`` when given): REVIEW_COLUMNS."""
    query = select(*(getattr(Review, c) for c in REVIEW_COLUMNS)).where(
        Review.project_id == project_id, Review.retracted_at.is_(None)
    )
    if positions is not None:
        query = query.where(Review.position.in_(positions))
    with store.session() as s:
        rows = s.execute(query.order_by(Review.id)).all()
    return pd.DataFrame.from_records(rows, columns=REVIEW_COLUMNS)


def add_flag(store: Store, project_id: int, position: int, grader: str, note: str = "") -> int:
    """Record that ``grader`` sent the item to review, with its audit event; the flag's id."""
    from core.store.store import _event

    with store._writing("the flag", project_id), store.session() as s, s.begin():
        flag = Flag(project_id=project_id, position=position, grader=grader, note=note)
        s.add(flag)
        s.flush()
        _event(s, grader, FLAGGED, project_id, position=position, note=note)
        return flag.id


def flags(store: Store, project_id: int, positions: list[int] | None = None) -> pd.DataFrame:
    """Flags, oldest first (of ``positions`` when given): FLAG_COLUMNS."""
    query = select(*(getattr(Flag, c) for c in FLAG_COLUMNS)).where(Flag.project_id == project_id)
    if positions is not None:
        query = query.where(Flag.position.in_(positions))
    with store.session() as s:
        rows = s.execute(query.order_by(Flag.id)).all()
    return pd.DataFrame.from_records(rows, columns=FLAG_COLUMNS)


def disagreements(store: Store, project_id: int, positions: list[int] | None = None) -> dict[int, list[str]]:
    """Position -> the parts of the item whose active grades differ (the grades of one target and criterion),
    each named by `part`: a rubric's criteria, a comparison's targets, "" for a one-question project's one
    grade; items in the order of their oldest such grade (of ``positions`` when given)."""
    query = select(Grade.position, Grade.target, Grade.criterion).where(
        Grade.project_id == project_id, Grade.retracted_at.is_(None)
    )
    if positions is not None:
        query = query.where(Grade.position.in_(positions))
    with store.session() as s:
        rows = s.execute(
            query.group_by(Grade.position, Grade.target, Grade.criterion)
            .having(func.min(Grade.value) != func.max(Grade.value))
            .order_by(func.min(Grade.id))
        ).all()
    found: dict[int, list[str]] = {}
    for position, target, criterion in rows:
        parts = found.setdefault(int(position), [])
        if part(target, criterion) not in parts:
            parts.append(part(target, criterion))
    return found


def part(target: str, criterion: str) -> str:
    """The part of an item a grade or a review is of, by name: its target in a comparison, its criterion in a
    rubric project ("" in a one-question project). A project has targets or criteria, never both
    (core.settings), so the name says which."""
    return target or criterion
