"""Showing tokens: one row per item put on a grader's card, named by a random single-use token.

core.services.showings decides what a token may name; this module only reads and writes the rows, each in
one indexed statement: the grader's latest showing (``latest``), a new one (``add``, which purges the
expired rows first, by their indexed expiry), a token's row (``find``, by its unique index) and a press
stored with it (``spend``). Deleting the project deletes its showings (the foreign key cascades).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update

from core.store.models import ShowingToken, aware, aware_or_none

if TYPE_CHECKING:
    from core.store.store import Store


@dataclass(frozen=True)
class ShowingRow:
    token: str
    project_id: int
    grader: str
    position: int
    item_id: str
    reviewing: bool
    released_at: datetime
    expires_at: datetime
    used_at: datetime | None


def _row(row: ShowingToken) -> ShowingRow:
    return ShowingRow(
        row.token,
        row.project_id,
        row.grader,
        row.position,
        row.item_id,
        row.reviewing,
        aware(row.released_at),
        aware(row.expires_at),
        aware_or_none(row.used_at),
    )


def latest(store: Store, project_id: int, grader: str) -> ShowingRow | None:
    """The grader's most recent showing on the project, used or not, expired or not; None when none is kept."""
    with store.session() as s:
        row = s.scalar(
            select(ShowingToken)
            .where(ShowingToken.project_id == project_id, ShowingToken.grader == grader)
            .order_by(ShowingToken.id.desc())
            .limit(1)
        )
        return None if row is None else _row(row)


def add(store: Store, showing: ShowingRow) -> None:
    """Store a new showing, after deleting every row expired by its release (one transaction)."""
    with store.session() as s, s.begin():
        s.execute(delete(ShowingToken).where(ShowingToken.expires_at <= showing.released_at))
        s.add(
            ShowingToken(
                token=showing.token,
                project_id=showing.project_id,
                grader=showing.grader,
                position=showing.position,
                item_id=showing.item_id,
                reviewing=showing.reviewing,
                released_at=showing.released_at,
                expires_at=showing.expires_at,
                used_at=showing.used_at,
            )
        )


def find(store: Store, token: str) -> ShowingRow | None:
    """The row of ``token``; None when there is none (never issued, or purged)."""
    with store.session() as s:
        row = s.scalar(select(ShowingToken).where(ShowingToken.token == token))
        return None if row is None else _row(row)


def spend(store: Store, project_id: int, grader: str, token: str, at: datetime) -> bool:
    """Mark the grader's ``token`` on the project used at ``at``; False when it was used already (or is gone,
    or another's)."""
    with store.session() as s, s.begin():
        done = s.execute(
            update(ShowingToken)
            .where(
                ShowingToken.token == token,
                ShowingToken.project_id == project_id,
                ShowingToken.grader == grader,
                ShowingToken.used_at.is_(None),
            )
            .values(used_at=at)
        )
        return done.rowcount > 0
