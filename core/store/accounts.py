"""Accounts, project assignments, reservations and the audit trail: their SQL (tables in core/store/models.py).

- ``users``: one row per account; ``name`` is what grades record as their
  grader. Passwords only as hashes (core.services.auth makes them).
- ``memberships``: which account is assigned to which project.
- ``reservations``: the item a grader is being shown, until ``expires_at``.
  The key (project, position, slot) makes a reservation exclusive: slot 0 is
  an item's first grade, slot 1 its second when it is chosen for double
  grading. An expired row no longer counts and is replaced by the next
  reservation of the same key.
- ``audit_events``: who did what when (sign-ins, grade changes, undos,
  settings, uploads, accounts, exports). The project id is kept without a
  foreign key so the trail outlives a deleted project.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlalchemy import (
    Row,
    String,
    Text,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.dml import Update

from core.errors import InputError, Taken
from core.store import sessions, tokens
from core.store.models import (
    AuditEvent,
    Base,
    Grade,
    Membership,
    Reservation,
    SignInAddress,
    SignInFailure,
    User,
    utcnow,
)
from core.store.store import RELEASE

if TYPE_CHECKING:
    from core.store.store import Store


AUDIT_COLUMNS = ["id", "at", "actor", "action", "project_id", "detail"]


@dataclass(frozen=True)
class UserInfo:
    id: int
    name: str
    email: str | None
    role: str
    password_hash: str | None
    active: bool


@dataclass(frozen=True)
class Held:
    """A live reservation: ``position`` of the project, ``slot`` (0 first grade, 1 second), who holds it."""

    position: int
    slot: int
    grader: str
    expires_at: datetime


def _info(row: User | Row) -> UserInfo:
    return UserInfo(row.id, row.name, row.email, row.role, row.password_hash, bool(row.active))


# The reads every API request or grading card repeats, built once (core.store.store.PROJECT_ROW says why).
USER_BY_NAME = select(User.__table__).where(User.name == bindparam("name"))
USER_BY_ID = select(User.__table__).where(User.id == bindparam("user_id"))
FAILURES = select(SignInFailure.__table__).where(
    SignInFailure.name == bindparam("name"), SignInFailure.address == bindparam("address")
)
PROJECTS_OF = select(Membership.project_id).where(Membership.user_id == bindparam("user_id"))
LIVE = select(Reservation.__table__).where(
    Reservation.project_id == bindparam("project_id"), Reservation.expires_at >= bindparam("now")
)
"""The project's reservations that have not expired by ``now``."""
HELD_BY = (
    LIVE.where(Reservation.grader == bindparam("grader")).order_by(Reservation.position, Reservation.slot).limit(1)
)
"""``grader``'s first live reservation in the project (by the grader's index; there is at most one but for a race)."""
CLEAR_FOR_RESERVE = delete(Reservation).where(
    Reservation.project_id == bindparam("project_id"),
    or_(
        Reservation.grader == bindparam("grader"),
        and_(
            Reservation.position == bindparam("position"),
            Reservation.slot == bindparam("slot"),
            Reservation.expires_at < bindparam("now"),
        ),
    ),
)
"""``try_reserve``'s first step: the grader's reservations in the project, and an expired one of the key."""
RESERVE = insert(Reservation)
ACTIVE_GRADERS = select(Grade.grader).where(
    Grade.project_id == bindparam("project_id"), Grade.position == bindparam("position"), Grade.retracted_at.is_(None)
)
"""Who has an active grade of the item (several rows for one grader's card: sides, criteria)."""


# users -------------------------------------------------------------------------


def create_user(store: Store, name: str, role: str, *, password_hash: str | None, email: str | None) -> UserInfo:
    """Insert an account; raises Taken when the name or e-mail is taken."""
    try:
        with store.session() as s, s.begin():
            row = User(name=name, role=role, password_hash=password_hash, email=email, active=True)
            s.add(row)
            s.flush()
            return _info(row)
    except IntegrityError:
        raise Taken(
            f"an account named {name!r}" + (f" or with e-mail {email}" if email else "") + " already exists",
            fix="choose another name or edit that account",
        ) from None


def create_first_user(store: Store, name: str, role: str, *, password_hash: str) -> UserInfo | None:
    """Insert the account only if there is no account at all (one statement, INSERT ... SELECT ...
    WHERE NOT EXISTS, under SQLite's write lock; on PostgreSQL behind a transaction-scoped advisory
    lock, since read committed would let two such statements both see an empty table). Returns the
    account, or None when another one exists: of two first-admin forms sent at once, one wins."""
    with store.session() as s, s.begin():
        if s.get_bind().dialect.name == "postgresql":
            s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _FIRST_USER_LOCK})
        values = select(
            literal(name, String()),
            literal(role, String()),
            literal(password_hash, Text()),
            literal(True),
            literal(utcnow(), User.created_at.type),
        ).where(~exists(select(User.id)))
        columns = ["name", "role", "password_hash", "active", "created_at"]
        created = s.scalar(insert(User).from_select(columns, values).returning(User.id))
        return None if created is None else _info(s.get(User, created))


_FIRST_USER_LOCK = 0x41474631  # "AGF1": any constant the app uses for nothing else


def user_by_name(store: Store, name: str) -> UserInfo | None:
    row = store.first_row(USER_BY_NAME, name=name)
    return None if row is None else _info(row)


def user_by_id(store: Store, user_id: int) -> UserInfo | None:
    row = store.first_row(USER_BY_ID, user_id=user_id)
    return None if row is None else _info(row)


def user_by_email(store: Store, email: str) -> UserInfo | None:
    with store.session() as s:
        row = s.scalar(select(User).where(User.email == email))
        return None if row is None else _info(row)


def users(store: Store) -> list[UserInfo]:
    """Every account, by name."""
    with store.session() as s:
        return [_info(r) for r in s.scalars(select(User).order_by(User.name))]


def _update_user(store: Store, name: str, **values: Any) -> None:
    """Change the account; a new password, a changed role or disabling ends its sign-in sessions
    in the same transaction (the user signs in again, under the new terms), and a new password revokes its
    API tokens too: resetting a password is the answer to a stolen one, and a token made with it must not
    outlive it (a token follows a new role or a disabled account by itself: core.services.tokens.resolve)."""
    with store.session() as s, s.begin():
        row = s.scalar(select(User).where(User.name == name).with_for_update())
        if row is None:
            raise InputError(f"no account named {name!r}", fix="check the name in the members list")
        ends_sessions = (
            "password_hash" in values or values.get("role", row.role) != row.role or values.get("active", True) is False
        )
        for column, value in values.items():
            setattr(row, column, value)
        if ends_sessions:
            sessions.end_for_user(s, row.id)
        if "password_hash" in values:
            tokens.revoke_for_user(s, row.id)


def set_password_hash(store: Store, name: str, password_hash: str) -> None:
    _update_user(store, name, password_hash=password_hash)


def set_role(store: Store, name: str, role: str) -> None:
    _update_user(store, name, role=role)


def set_active(store: Store, name: str, active: bool) -> None:
    _update_user(store, name, active=active)


# sign-in failures -----------------------------------------------------------------


def failures(store: Store, name: str, address: str) -> tuple[int, datetime | None]:
    """(failed sign-ins in a row, the last one's time) for ``name`` from ``address`` (core.services.auth.ACCOUNT:
    from every address together)."""
    row = store.first_row(FAILURES, name=name, address=address)
    return (0, None) if row is None else (row.failures, _aware(row.last_failed_at))


def _aware(moment: datetime) -> datetime:
    """``moment`` in UTC (SQLite hands back naive times)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def all_failures(store: Store) -> list[tuple[str, str, int, datetime]]:
    """Every (name, address, failed sign-ins in a row, the last one's time) on record, by name and address."""
    query = select(SignInFailure).order_by(SignInFailure.name, SignInFailure.address)
    with store.session() as s:
        return [(r.name, r.address, r.failures, _aware(r.last_failed_at)) for r in s.scalars(query)]


def add_failure(store: Store, name: str, address: str) -> None:
    """One more failed sign-in for ``name`` from ``address``; concurrent ones all count."""
    where = (SignInFailure.name == name, SignInFailure.address == address)
    counted = update(SignInFailure).where(*where).values(failures=SignInFailure.failures + 1, last_failed_at=utcnow())
    _upsert(store, counted, lambda: SignInFailure(name=name, address=address, failures=1, last_failed_at=utcnow()))


def _upsert(store: Store, changed: Update, new: Callable[[], Base]) -> None:
    """``changed`` (an update of one row by its key), or where it changed no row the row ``new`` makes, in one
    transaction; two first inserts at once: the loser's fails, and its update then counts."""
    for _attempt in range(2):
        try:
            with store.session() as s, s.begin():
                if not s.execute(changed).rowcount:
                    s.add(new())
            return
        except IntegrityError:
            continue


def clear_failures(store: Store, name: str, address: str | None = None) -> int:
    """Forget the failures of ``name`` (from ``address`` only, when given); returns how many rows went."""
    query = delete(SignInFailure).where(SignInFailure.name == name)
    if address is not None:
        query = query.where(SignInFailure.address == address)
    with store.session() as s, s.begin():
        return s.execute(query).rowcount


def record_sign_in_address(store: Store, name: str, address: str) -> None:
    """``name`` signed in from ``address`` now (one row per name and address, its time the latest)."""
    where = (SignInAddress.name == name, SignInAddress.address == address)
    seen = update(SignInAddress).where(*where).values(signed_in_at=utcnow())
    _upsert(store, seen, lambda: SignInAddress(name=name, address=address, signed_in_at=utcnow()))


def signed_in_from(store: Store, name: str, address: str, since: datetime) -> bool:
    """Whether ``name`` signed in from ``address`` at ``since`` or later."""
    query = select(SignInAddress.signed_in_at).where(SignInAddress.name == name, SignInAddress.address == address)
    with store.session() as s:
        last = s.scalar(query)
    return last is not None and _aware(last) >= since


# memberships ---------------------------------------------------------------------


def assign(store: Store, project_id: int, user_id: int) -> None:
    """Assign the account to the project (no-op when it already is)."""
    with store.session() as s, s.begin():
        if s.get(Membership, (project_id, user_id)) is None:
            s.add(Membership(project_id=project_id, user_id=user_id))


def unassign(store: Store, project_id: int, user_id: int) -> None:
    with store.session() as s, s.begin():
        s.execute(delete(Membership).where(Membership.project_id == project_id, Membership.user_id == user_id))


def projects_of(store: Store, user_id: int) -> set[int]:
    return {row.project_id for row in store.all_rows(PROJECTS_OF, user_id=user_id)}


def members(store: Store, project_id: int) -> list[UserInfo]:
    with store.session() as s:
        rows = s.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.project_id == project_id)
            .order_by(User.name)
        )
        return [_info(r) for r in rows]


# reservations ----------------------------------------------------------------------


class _NotNeeded(Exception):
    """Rolls back a reservation whose item no longer needs that grade."""


def try_reserve(store: Store, project_id: int, position: int, slot: int, grader: str, ttl: timedelta) -> bool:
    """Reserve (position, slot) for ``grader`` if it is free and still needs that grade; True on success.

    One transaction: drop an expired reservation of the key and the grader's
    other reservations in the project, insert the new one (the primary key
    refuses a second live holder), then check that the item has exactly
    ``slot`` active grades, none of them by ``grader``; otherwise roll back.
    The insert comes first so the check reads the state after every
    concurrent commit (PostgreSQL read committed; SQLite's write lock).
    """
    now = utcnow()
    key = {"project_id": project_id, "position": position, "slot": slot, "grader": grader}
    try:
        with store.engine.begin() as c:
            c.execute(CLEAR_FOR_RESERVE, key | {"now": now})
            c.execute(RESERVE, key | {"reserved_at": now, "expires_at": now + ttl})
            graders = set(c.execute(ACTIVE_GRADERS, key).scalars())
            if len(graders) != slot or grader in graders:
                raise _NotNeeded
            return True
    except (IntegrityError, _NotNeeded):
        return False


def live(store: Store, project_id: int) -> list[Held]:
    """The project's reservations that have not expired."""
    rows = store.all_rows(LIVE, project_id=project_id, now=utcnow())
    return [Held(r.position, r.slot, r.grader, r.expires_at) for r in rows]


def held(store: Store, project_id: int, grader: str) -> Held | None:
    """The grader's live reservation in the project, if any: read alone (every grade asks, core.services.
    reservations.hold), not picked out of every grader's (100 rows a grade with 100 graders)."""
    row = store.first_row(HELD_BY, project_id=project_id, grader=grader, now=utcnow())
    return None if row is None else Held(row.position, row.slot, row.grader, row.expires_at)


def renew(store: Store, project_id: int, grader: str, ttl: timedelta) -> None:
    """Push the grader's reservation's expiry to now + ttl (the grader is still on it)."""
    with store.session() as s, s.begin():
        s.execute(
            update(Reservation)
            .where(Reservation.project_id == project_id, Reservation.grader == grader)
            .values(expires_at=utcnow() + ttl)
        )


def release(store: Store, project_id: int, grader: str) -> None:
    """Drop the grader's reservation in the project (after a grade or a skip)."""
    with store.engine.begin() as c:
        c.execute(RELEASE, {"project_id": project_id, "grader": grader})


def reserved(store: Store, project_id: int, *, slot: int | None = None) -> dict[int, str]:
    """Live reservations of the project: position -> grader (of ``slot`` when given)."""
    return {r.position: r.grader for r in live(store, project_id) if slot is None or r.slot == slot}


def awaiting_second_grade(store: Store, project_id: int, positions: Iterable[int], grader: str) -> list[int]:
    """Of ``positions``, those with exactly one active grade, given by someone other than ``grader``; oldest first."""
    wanted = [int(p) for p in positions]
    if not wanted:
        return []
    with store.session() as s:
        rows = s.execute(
            select(Grade.position)
            .where(Grade.project_id == project_id, Grade.retracted_at.is_(None), Grade.position.in_(wanted))
            .group_by(Grade.position)
            .having(func.count(func.distinct(Grade.grader)) == 1, func.max(Grade.grader) != grader)
            .order_by(func.min(Grade.id))
        ).all()
    return [int(r[0]) for r in rows]


def grade_count(store: Store, project_id: int, position: int) -> int:
    """How many graders have graded the item (active grades; a card's several grades count once)."""
    with store.session() as s:
        return int(
            s.scalar(
                select(func.count(func.distinct(Grade.grader)))
                .select_from(Grade)
                .where(Grade.project_id == project_id, Grade.position == position, Grade.retracted_at.is_(None))
            )
        )


# audit trail ----------------------------------------------------------------------------


def record_event(
    store: Store, actor: str, action: str, *, project_id: int | None = None, detail: dict[str, Any] | None = None
) -> None:
    """Append an event to the audit trail (its own transaction)."""
    from core.store.store import json_safe

    with store.session() as s, s.begin():
        s.add(AuditEvent(actor=actor, action=action, project_id=project_id, detail=json_safe(detail or {})))


def events(store: Store, project_id: int | None = None, last: int | None = None) -> pd.DataFrame:
    """The audit trail, oldest first (one project's when given): AUDIT_COLUMNS; its ``last`` events only when
    given (a page shows the latest: reading the whole trail on every render let a grader's flags grow it into
    seconds and a gigabyte a render, an attacker's review)."""
    query = select(*(getattr(AuditEvent, c) for c in AUDIT_COLUMNS)).order_by(AuditEvent.id.desc())
    if project_id is not None:
        query = query.where(AuditEvent.project_id == project_id)
    if last is not None:
        query = query.limit(last)
    with store.session() as s:
        rows = s.execute(query).all()
    return pd.DataFrame.from_records(rows[::-1], columns=AUDIT_COLUMNS)


def event_count(store: Store, project_id: int | None = None) -> int:
    """How many events the audit trail holds (one project's when given)."""
    query = select(func.count()).select_from(AuditEvent)
    if project_id is not None:
        query = query.where(AuditEvent.project_id == project_id)
    with store.session() as s:
        return int(s.scalar(query) or 0)


def last_active_project(store: Store, name: str, project_ids: Iterable[int]) -> int | None:
    """Of ``project_ids``, the one in which ``name`` last graded or did anything the audit trail records
    (changed settings, exported, ...); None when they did nothing in any of them."""
    ids = list(project_ids)
    if not name or not ids:
        return None
    queries = (
        select(Grade.project_id, func.max(Grade.created_at))
        .where(Grade.grader == name, Grade.project_id.in_(ids))
        .group_by(Grade.project_id),
        select(AuditEvent.project_id, func.max(AuditEvent.at))
        .where(AuditEvent.actor == name, AuditEvent.project_id.in_(ids))
        .group_by(AuditEvent.project_id),
    )
    with store.session() as s:
        latest = [row for query in queries for row in s.execute(query).all()]
    return max(latest, key=lambda row: row[1])[0] if latest else None
