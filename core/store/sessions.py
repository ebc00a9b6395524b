"""Sign-in sessions: one row per signed-in browser, referenced by a random token in a cookie.

Only a SHA-256 hash of the token is stored, so a copy of the database does not
let anyone sign in. A row lives until the user signs out, its idle or absolute
limit passes (core.services.sessions decides), or the account changes in a way that
must sign the user out everywhere: a new password, disabling, a role change
(``end_for_user``, called by core.store.accounts in the same transaction), or
deletion (the foreign key cascades).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.store.models import SignInSession, aware

if TYPE_CHECKING:
    from core.store.store import Store


@dataclass(frozen=True)
class SessionRow:
    user_id: int
    created_at: datetime
    last_seen_at: datetime


def add(store: Store, token_hash: str, user_id: int) -> None:
    with store.session() as s, s.begin():
        s.add(SignInSession(token_hash=token_hash, user_id=user_id))


def find(store: Store, token_hash: str) -> SessionRow | None:
    with store.session() as s:
        row = s.scalar(select(SignInSession).where(SignInSession.token_hash == token_hash))
        return None if row is None else SessionRow(row.user_id, aware(row.created_at), aware(row.last_seen_at))


def touch(store: Store, token_hash: str, at: datetime) -> None:
    """Record activity at ``at`` (restarts the idle clock)."""
    with store.session() as s, s.begin():
        s.execute(update(SignInSession).where(SignInSession.token_hash == token_hash).values(last_seen_at=at))


def remove(store: Store, token_hash: str) -> None:
    with store.session() as s, s.begin():
        s.execute(delete(SignInSession).where(SignInSession.token_hash == token_hash))


def end_for_user(session: Session, user_id: int) -> None:
    """Delete every session of the account, inside the caller's transaction."""
    session.execute(delete(SignInSession).where(SignInSession.user_id == user_id))
