"""Accounts and roles: who may do what, password hashing and sign-in.

Three roles. ``admin`` creates projects, uploads, changes settings, exports,
manages accounts and reads the audit trail, on every project. ``grader``
grades the projects assigned to them, blind to their dashboards (a running
estimate would bias the grades). ``viewer`` sees the dashboards of the
projects assigned to them, nothing else. Both see the list of their projects. The permission matrix is data (``PERMISSIONS``), so the app, the tests
and the docs read the same table.

Passwords are stored only as salted argon2id hashes (argon2-cffi's
``PasswordHasher``: a random 16-byte salt per hash, parameters inside the
encoded string, so hashes made with older parameters still verify and are
upgraded at the next sign-in). Sign-in through an OpenID Connect provider
(Streamlit's ``st.login``) maps the provider's verified e-mail address onto an
account an admin created; nobody gets in without an account, except in the
open demo mode, which is on only when ``$ACTIVEGRADE_OPEN_DEMO`` is ``1``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from core.errors import InputError
from core.store import Store, accounts

ADMIN, GRADER, VIEWER = "admin", "grader", "viewer"
ROLES = (ADMIN, GRADER, VIEWER)

# Actions the app performs on behalf of a user. Project actions need the
# project's membership unless the role has them on every project (admin).
VIEW_PROJECTS = "view_projects"
CREATE_PROJECT = "create_project"  # includes uploading the pool and samples
PREPARE_PROJECT = "prepare_project"
CHANGE_SETTINGS = "change_settings"
DELETE_PROJECT = "delete_project"
GRADE = "grade"
VIEW_DASHBOARD = "view_dashboard"
EXPORT = "export"
SIMULATE = "simulate"
MANAGE_USERS = "manage_users"  # accounts, roles, project assignments
VIEW_AUDIT = "view_audit"  # read and export the audit trail
ACTIONS = (
    VIEW_PROJECTS,
    CREATE_PROJECT,
    PREPARE_PROJECT,
    CHANGE_SETTINGS,
    DELETE_PROJECT,
    GRADE,
    VIEW_DASHBOARD,
    EXPORT,
    SIMULATE,
    MANAGE_USERS,
    VIEW_AUDIT,
)

PERMISSIONS: Mapping[str, frozenset[str]] = {
    ADMIN: frozenset(ACTIONS),
    GRADER: frozenset({VIEW_PROJECTS, GRADE}),  # not the dashboard: a running estimate would bias their grades
    VIEWER: frozenset({VIEW_PROJECTS, VIEW_DASHBOARD}),
}
"""role -> the actions it may perform (on the projects it may see)."""

ALL_PROJECTS_ROLES = frozenset({ADMIN})
"""Roles that act on every project; the others only on the projects assigned to them."""

OPEN_DEMO_ENV = "ACTIVEGRADE_OPEN_DEMO"
MIN_PASSWORD_LENGTH = 10
MAX_FAILURES = 10
LOCKOUT = timedelta(minutes=15)

_hasher = PasswordHasher()


class AccessDenied(PermissionError):
    """The signed-in user (or nobody) may not perform this action; ``str()`` says why."""


@dataclass(frozen=True)
class User:
    """A signed-in user: ``name`` is what grades and audit events record."""

    name: str
    role: str
    id: int | None = None  # None for the open demo's anonymous user
    email: str | None = None


def open_demo_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """True only when $ACTIVEGRADE_OPEN_DEMO is exactly ``1`` (anyone may use the app as an admin)."""
    return environ.get(OPEN_DEMO_ENV, "").strip() == "1"


def demo_user(name: str) -> User:
    """The open demo's user: whatever name was typed, with the admin role and no account."""
    return User(name=name.strip(), role=ADMIN)


# passwords ----------------------------------------------------------------


def hash_password(password: str) -> str:
    """A salted argon2id hash of ``password`` in PHC string form; raises InputError for a weak one."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(
            f"the password has {len(password)} characters, fewer than {MIN_PASSWORD_LENGTH}",
            fix=f"choose a password of at least {MIN_PASSWORD_LENGTH} characters",
        )
    return _hasher.hash(password)


def verify_password(encoded: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored hash (False for no hash or a malformed one)."""
    if not encoded:
        return False
    try:
        return _hasher.verify(encoded, password)
    except (VerificationError, InvalidHashError):
        return False


# accounts -------------------------------------------------------------------


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}", fix=f"use one of {', '.join(ROLES)}")


def normalise_name(name: str) -> str:
    """Account names are case-insensitive: stored stripped and lower-case."""
    return name.strip().lower()


def create_account(
    store: Store, name: str, role: str, *, password: str | None = None, email: str | None = None
) -> User:
    """Create an account (password and/or OIDC e-mail); raises InputError for a bad or taken name."""
    _check_role(role)
    name = normalise_name(name)
    if not name or len(name) > 200 or not name.isprintable():
        raise InputError(f"invalid account name {name!r}", fix="use 1 to 200 printable characters")
    if password is None and not email:
        raise InputError(f"account {name!r} has neither a password nor an e-mail", fix="give one or both")
    row = accounts.create_user(
        store,
        name,
        role,
        password_hash=None if password is None else hash_password(password),
        email=email.strip().lower() if email else None,
    )
    return _user(row)


def set_password(store: Store, name: str, password: str) -> None:
    """Replace an account's password (hashing it)."""
    accounts.set_password_hash(store, normalise_name(name), hash_password(password))


def set_role(store: Store, name: str, role: str) -> None:
    _check_role(role)
    accounts.set_role(store, normalise_name(name), role)


def _user(row: accounts.UserInfo) -> User:
    return User(name=row.name, role=row.role, id=row.id, email=row.email)


def sign_in(store: Store, name: str, password: str) -> User | None:
    """The account if ``name`` and ``password`` match an active one, else None.

    Every attempt is in the audit trail (``sign_in`` or ``sign_in_failed``).
    After MAX_FAILURES failed attempts for a name within LOCKOUT, further
    attempts fail without checking the password until the window has passed
    (slows down password guessing; an admin sees the attempts in the trail).
    A hash made with older argon2 parameters is replaced by a current one.
    """
    name = normalise_name(name)
    since = datetime.now(UTC) - LOCKOUT
    if accounts.event_count(store, "sign_in_failed", actor=name, since=since) >= MAX_FAILURES:
        accounts.record_event(store, name, "sign_in_locked")
        return None
    row = accounts.user_by_name(store, name)
    # verify against a throw-away hash for unknown names, so timing does not reveal which names exist
    encoded = row.password_hash if row is not None and row.active else _DUMMY_HASH
    ok = verify_password(encoded, password) and row is not None and row.active
    if not ok:
        accounts.record_event(store, name, "sign_in_failed")
        return None
    if _hasher.check_needs_rehash(row.password_hash):
        accounts.set_password_hash(store, name, _hasher.hash(password))
    accounts.record_event(store, name, "sign_in")
    return _user(row)


_DUMMY_HASH = _hasher.hash("not a password of anyone")


def refresh(store: Store, user: User) -> User | None:
    """``user`` as the accounts table has them now: None once the account is disabled or gone, else
    with its current role (a session signed in earlier never keeps a role an admin has taken away)."""
    row = accounts.user_by_name(store, user.name)
    return _user(row) if row is not None and row.active else None


def sign_in_oidc(store: Store, claims: Mapping[str, object]) -> User:
    """The account for an OIDC identity (Streamlit's ``st.user``), matched by verified e-mail.

    Raises AccessDenied, naming the e-mail, when no active account has it:
    an admin must create the account (with that e-mail) first.
    """
    email = str(claims.get("email") or "").strip().lower()
    if not email:
        raise AccessDenied(
            "the identity provider did not send an e-mail address; ask an admin to configure the scope 'email'"
        )
    if claims.get("email_verified") is False:
        raise AccessDenied(f"the identity provider has not verified {email}")
    row = accounts.user_by_email(store, email)
    if row is None or not row.active:
        accounts.record_event(store, email, "sign_in_failed", detail={"via": "oidc"})
        raise AccessDenied(f"no active ActiveGrade account has the e-mail {email}; ask an admin to create one")
    accounts.record_event(store, row.name, "sign_in", detail={"via": "oidc"})
    return _user(row)


# permissions -----------------------------------------------------------------


def allowed(role: str | None, action: str) -> bool:
    """Whether ``role`` (None: signed out) may ever perform ``action`` (the matrix alone)."""
    return role is not None and action in PERMISSIONS.get(role, frozenset())


def visible_projects(store: Store, user: User | None) -> set[int] | None:
    """Project ids the user may open: None means all of them (admins), an empty set when signed out."""
    if user is None:
        return set()
    if user.role in ALL_PROJECTS_ROLES:
        return None
    return set() if user.id is None else accounts.projects_of(store, user.id)


def may(store: Store, user: User | None, action: str, project_id: int | None = None) -> bool:
    """Whether ``user`` may perform ``action`` (on ``project_id`` when given): role and assignment."""
    if user is None or not allowed(user.role, action):
        return False
    if project_id is None:
        return True
    projects = visible_projects(store, user)
    return projects is None or project_id in projects


def require(store: Store, user: User | None, action: str, project_id: int | None = None) -> User:
    """``user`` if ``may(...)``; otherwise raises AccessDenied saying what is missing."""
    if may(store, user, action, project_id):
        return user
    if user is None:
        raise AccessDenied(f"sign in to {action.replace('_', ' ')}")
    if not allowed(user.role, action):
        raise AccessDenied(f"the {user.role} role may not {action.replace('_', ' ')}; ask an admin")
    raise AccessDenied(f"{user.name} is not assigned to project {project_id}; ask an admin to assign you")
