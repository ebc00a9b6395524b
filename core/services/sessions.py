"""Sign-in sessions that survive a reload and a new tab, and end when they must.

Signing in makes a random token (``secrets.token_urlsafe``, 256 bits); the
browser keeps it in a cookie and the database keeps only its SHA-256 hash
(core.store.sessions). Every request resolves the token again (``resume``):
the session must exist, be younger than the absolute limit, have been used
within the idle limit, and belong to an active account, whose current role it
gets. Signing out deletes the row; so do a new password, disabling and a role
change (core.store.accounts), so every browser of that user is signed out at
its next request.

Limits: ``$ACTIVEGRADE_SESSION_IDLE_HOURS`` (default 12) and
``$ACTIVEGRADE_SESSION_MAX_DAYS`` (default 7), read by core.config.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from core import config
from core.services import auth
from core.store import Store, accounts
from core.store import sessions as table
from core.store.models import utcnow

TOUCH_EVERY = timedelta(minutes=1)
"""Activity is written at most this often per session (not one write per key press)."""


@dataclass(frozen=True)
class Limits:
    idle: timedelta = config.Config.session_idle
    absolute: timedelta = config.Config.session_max


def limits() -> Limits:
    """The configured limits (core.config; InputError for a value that is not a positive number)."""
    current = config.config()
    return Limits(idle=current.session_idle, absolute=current.session_max)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def start(store: Store, user: auth.User) -> str:
    """A new session for a signed-in account; returns the token for the cookie (never stored)."""
    if user.id is None:
        raise ValueError("only an account can have a sign-in session")
    if user.must_change_password:
        raise auth.AccessDenied("choose a new password first: yours is shorter than the minimum")
    token = secrets.token_urlsafe(32)
    table.add(store, _hash(token), user.id)
    return token


def resume(
    store: Store, token: str | None, *, now: datetime | None = None, limit: Limits | None = None
) -> auth.User | None:
    """The account of a live session, with its current role; None (and the row deleted when it has
    expired) otherwise."""
    if not isinstance(token, str) or not token:
        return None
    now = now or utcnow()
    limit = limit or limits()
    digest = _hash(token)
    row = table.find(store, digest)
    if row is None:
        return None
    if now - row.created_at > limit.absolute or now - row.last_seen_at > limit.idle:
        table.remove(store, digest)
        return None
    user = accounts.user_by_id(store, row.user_id)
    if user is None or not user.active:
        return None
    if now - row.last_seen_at > TOUCH_EVERY:
        table.touch(store, digest, now)
    return auth.User(name=user.name, role=user.role, id=user.id, email=user.email)


def end(store: Store, token: str | None) -> None:
    """Sign out: the session is gone for every tab that shares its cookie."""
    if token:
        table.remove(store, _hash(token))
