"""Personal API tokens: one row per token, referenced by a random secret sent as ``Authorization: Bearer``.

Only a SHA-256 hash of the secret is stored (as for sign-in sessions, core.store.sessions), so a copy of
the database lets nobody call the API. A revoked token keeps its row (``revoked_at``) so the Team page
can still list it; deleting the account deletes its tokens (the foreign key cascades).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import Row, bindparam, select, update

from core.store.models import ApiToken, aware, aware_or_none, storable_id, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store.store import Store


@dataclass(frozen=True)
class TokenRow:
    id: int
    user_id: int
    name: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    expires_at: datetime | None


def _row(row: ApiToken | Row) -> TokenRow:
    return TokenRow(
        row.id,
        row.user_id,
        row.name,
        row.created_by,
        aware(row.created_at),
        aware_or_none(row.last_used_at),
        aware_or_none(row.revoked_at),
        aware_or_none(row.expires_at),
    )


def add(
    store: Store, token_hash: str, user_id: int, name: str, created_by: str, created_at: datetime, expires_at: datetime
) -> TokenRow:
    with store.session() as s, s.begin():
        row = ApiToken(
            token_hash=token_hash,
            user_id=user_id,
            name=name,
            created_by=created_by,
            created_at=created_at,
            expires_at=expires_at,
        )
        s.add(row)
        s.flush()
        return _row(row)


FIND = select(ApiToken.__table__).where(ApiToken.token_hash == bindparam("token_hash"))
"""A token's row by its hash, read on every API request: built once (core.store.store.PROJECT_ROW says why)."""


def find(store: Store, token_hash: str) -> TokenRow | None:
    row = store.first_row(FIND, token_hash=token_hash)
    return None if row is None else _row(row)


def by_id(store: Store, token_id: int) -> TokenRow | None:
    if not storable_id(token_id):
        return None
    with store.session() as s:
        row = s.get(ApiToken, token_id)
        return None if row is None else _row(row)


def of_user(store: Store, user_id: int) -> list[TokenRow]:
    """The account's tokens, revoked ones included, oldest first."""
    with store.session() as s:
        rows = s.scalars(select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.id))
        return [_row(r) for r in rows]


def touch(store: Store, token_id: int, at: datetime) -> None:
    """Record that the token was used at ``at``."""
    with store.session() as s, s.begin():
        s.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=at))


def revoke_for_user(session: Session, user_id: int) -> None:
    """Revoke every token of the account still in force, inside the caller's transaction (a new password:
    core.store.accounts)."""
    session.execute(
        update(ApiToken).where(ApiToken.user_id == user_id, ApiToken.revoked_at.is_(None)).values(revoked_at=utcnow())
    )


def revoke(store: Store, token_id: int) -> bool:
    """Revoke the token now; False when it was revoked already (or does not exist)."""
    with store.session() as s, s.begin():
        done = s.execute(
            update(ApiToken).where(ApiToken.id == token_id, ApiToken.revoked_at.is_(None)).values(revoked_at=utcnow())
        )
        return done.rowcount > 0
