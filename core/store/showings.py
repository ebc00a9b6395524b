"""Showing tokens: one row per item put on a grader's card, named by a random single-use token.

core.services.showings decides what a token may name; this module only reads and writes the rows, each in
one indexed statement: the grader's latest showing (``latest``), their latest unused one of an item
(``unused_of_item``), a new one (``add``, which purges the
expired rows first, by their indexed expiry), a token's row (``find``, by its unique index), a press made
with it (``spend``, one atomic update), a press that did not act after all (``unspend``) and the grader's
unused tokens ended at once (``expire_unused``). Deleting the project deletes its showings (the foreign key cascades).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Row, bindparam, delete, func, insert, select, update

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


# The statements of every card and press, built once (core.store.store.PROJECT_ROW says why).
LATEST = (
    select(ShowingToken.__table__)
    .where(ShowingToken.project_id == bindparam("project_id"), ShowingToken.grader == bindparam("grader"))
    .order_by(ShowingToken.id.desc())
    .limit(1)
)
UNUSED_OF_ITEM = (
    select(ShowingToken.__table__)
    .where(
        ShowingToken.project_id == bindparam("project_id"),
        ShowingToken.grader == bindparam("grader"),
        ShowingToken.position == bindparam("position"),
        ShowingToken.used_at.is_(None),
    )
    .order_by(ShowingToken.id.desc())
    .limit(1)
)
BY_TOKEN = select(ShowingToken.__table__).where(ShowingToken.token == bindparam("token"))
LAST_USED = select(func.max(ShowingToken.used_at)).where(
    ShowingToken.project_id == bindparam("project_id"),
    ShowingToken.grader == bindparam("grader"),
    ShowingToken.position == bindparam("position"),
)
PURGE = delete(ShowingToken).where(ShowingToken.expires_at <= bindparam("released_at"))
"""Every showing expired by a new one's release."""
ADD = insert(ShowingToken)
SPEND = (
    update(ShowingToken)
    .where(
        ShowingToken.token == bindparam("spent"),  # an update's parameters may not take its columns' names
        ShowingToken.project_id == bindparam("in_project"),
        ShowingToken.grader == bindparam("by"),
        ShowingToken.used_at.is_(None),
    )
    .values(used_at=bindparam("at"))
)
"""Mark a token used: ``spent`` (the token) of grader ``by`` in project ``in_project``, ``at`` a time."""
UNSPEND = (
    update(ShowingToken)
    .where(
        ShowingToken.token == bindparam("spent"),
        ShowingToken.project_id == bindparam("in_project"),
        ShowingToken.grader == bindparam("by"),
    )
    .values(used_at=None)
)
"""Mark a token unused again (a press that spent it did not act)."""
EXPIRE_UNUSED = (
    update(ShowingToken)
    .where(
        ShowingToken.project_id == bindparam("in_project"),
        ShowingToken.grader == bindparam("by"),
        ShowingToken.used_at.is_(None),
        ShowingToken.expires_at > bindparam("at"),
    )
    .values(expires_at=bindparam("at"))
)
"""End every unused, unexpired token of grader ``by`` in project ``in_project`` at ``at``."""


def _row(row: ShowingToken | Row) -> ShowingRow:
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
    row = store.first_row(LATEST, project_id=project_id, grader=grader)
    return None if row is None else _row(row)


def unused_of_item(store: Store, project_id: int, grader: str, position: int) -> ShowingRow | None:
    """The grader's most recent unused showing of the item at ``position``, expired or not; None when none is kept."""
    row = store.first_row(UNUSED_OF_ITEM, project_id=project_id, grader=grader, position=position)
    return None if row is None else _row(row)


def last_used(store: Store, project_id: int, grader: str, position: int) -> datetime | None:
    """When the grader last pressed a card of the item at ``position`` (None: never, or purged)."""
    row = store.first_row(LAST_USED, project_id=project_id, grader=grader, position=position)
    return None if row is None else aware_or_none(row[0])


def add(store: Store, showing: ShowingRow) -> None:
    """Store a new showing, after deleting every row expired by its release (one transaction)."""
    with store.engine.begin() as c:
        c.execute(PURGE, {"released_at": showing.released_at})
        c.execute(ADD, asdict(showing))


def find(store: Store, token: str) -> ShowingRow | None:
    """The row of ``token``; None when there is none (never issued, or purged)."""
    row = store.first_row(BY_TOKEN, token=token)
    return None if row is None else _row(row)


def spend(store: Store, project_id: int, grader: str, token: str, at: datetime) -> bool:
    """Mark the grader's ``token`` on the project used at ``at``; False when it was used already (or is gone,
    or another's)."""
    with store.engine.begin() as c:
        done = c.execute(SPEND, {"spent": token, "in_project": project_id, "by": grader, "at": at})
        return done.rowcount > 0


def unspend(store: Store, project_id: int, grader: str, token: str) -> None:
    """Mark the grader's ``token`` on the project unused again."""
    with store.engine.begin() as c:
        c.execute(UNSPEND, {"spent": token, "in_project": project_id, "by": grader})


def expire_unused(store: Store, project_id: int, grader: str, at: datetime) -> None:
    """End the grader's unused tokens on the project at ``at``: none names its item any more."""
    with store.engine.begin() as c:
        c.execute(EXPIRE_UNUSED, {"in_project": project_id, "by": grader, "at": at})
