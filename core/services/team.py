"""Accounts and project membership: every rule and its audit event, for the Team page and ``python -m core users``.

Each action takes the acting user (the page's signed-in admin, or
auth.OPERATOR from the command line), checks that they may still manage
accounts (core.services.outcome.permitted), applies the rules below, writes
the change and its audit event, and returns an Outcome.

Rules:
- an admin may not demote or disable their own account (another admin must);
- the last active admin can be neither demoted nor disabled, so a deployment
  always keeps someone who can manage it;
- only graders and viewers are assigned to projects: admins act on every
  project (auth.ALL_PROJECTS_ROLES), so assigning one would mean nothing.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterable

from core.errors import InputError
from core.services import account_writes, audit, auth
from core.services.outcome import Outcome, Refused, permitted
from core.store import Store, accounts
from core.store.accounts import UserInfo

log = logging.getLogger(__name__)


def _account(store: Store, name: str) -> accounts.UserInfo:
    found = accounts.user_by_name(store, auth.normalise_name(name))
    if found is None:
        raise InputError(f"no account named {name!r}", fix="check the name in the list of accounts", field="name")
    return found


def _project_name(store: Store, project_id: int) -> str:
    try:
        return store.project(project_id).name
    except KeyError:
        raise Refused(f"project {project_id} has been deleted") from None


def create_account(
    store: Store,
    actor: auth.User | None,
    name: str,
    role: str,
    *,
    password: str | None = None,
    email: str | None = None,
) -> Outcome:
    """A new account (password and/or OIDC e-mail; core.services.account_writes.create_account checks both)."""
    manager = permitted(store, actor, auth.MANAGE_USERS)
    created = account_writes.create_account(store, name, role, password=password, email=email)
    audit.record(store, manager, audit.ACCOUNT_CREATED, name=created.name, role=created.role)
    return Outcome("created", f"created {created.role} account {created.name}")


_setup_code: str | None = None
_code_lock = threading.Lock()


def setup_code() -> str:
    """This process's one-time code for the first-admin form, made and written to the log (WARNING, so the
    operator's console shows it) the first time it is asked for. Whoever opened a fresh deployment first could
    otherwise claim it as its admin (attacker review); only the operator reads the server's log. A command-line
    `users add NAME --role admin` needs none."""
    global _setup_code
    with _code_lock:
        if _setup_code is None:
            _setup_code = secrets.token_urlsafe(9)
            log.warning("No account exists yet: the first-admin form asks for the setup code %s", _setup_code)
        return _setup_code


def create_first_admin(store: Store, name: str, password: str, code: str) -> auth.User | None:
    """The first admin account, created only while there is no account at all (the first-run form, which
    nobody signed in sends) and only with this process's `setup_code`; None when another account exists
    already (two first-admin forms sent at once create one admin, not two)."""
    if not secrets.compare_digest(code.strip().encode(), setup_code().encode()):
        raise InputError(
            "that is not the setup code",
            fix="copy the setup code from the server's log (the line 'the first-admin form asks for the setup "
            "code ...'), or create the admin with `python -m core users add NAME --role admin`",
        )
    name = auth.check_account_name(name)
    row = accounts.create_first_user(store, name, auth.ADMIN, password_hash=auth.hash_password(password))
    if row is None:
        return None
    created = auth.user_of(row)
    audit.record(store, created, audit.ACCOUNT_CREATED, name=created.name, role=created.role)
    return created


def no_account_yet(store: Store) -> bool:
    """Whether the deployment has no account at all (the sign-in page then offers to create the first admin)."""
    return not accounts.users(store)


def everyone(store: Store) -> list[UserInfo]:
    """Every account, for the Team page's list."""
    return accounts.users(store)


def members(store: Store, project_id: int) -> list[UserInfo]:
    """The accounts assigned to the project."""
    return accounts.members(store, project_id)


def last_admin(store: Store, name: str) -> bool:
    """Whether ``name`` is the only active admin account."""
    admins = [u.name for u in accounts.users(store) if u.role == auth.ADMIN and u.active]
    return admins == [name]


def change_account(
    store: Store,
    actor: auth.User | None,
    name: str,
    *,
    role: str | None = None,
    active: bool | None = None,
    password: str | None = None,
) -> Outcome:
    """Change an account's role, active flag and/or password (None: keep); one audit event with what changed.

    Refused for one's own demotion or disabling and for the last active admin's (module docstring).
    """
    manager = permitted(store, actor, auth.MANAGE_USERS)
    current = _account(store, name)
    role = current.role if role is None else role
    active = current.active if active is None else active
    loses_admin = current.role == auth.ADMIN and current.active and (role != auth.ADMIN or not active)
    if loses_admin and current.name == manager.name and manager.id is not None:
        raise Refused("you cannot demote or disable your own account; ask another admin")
    if loses_admin and last_admin(store, current.name):
        raise Refused(f"{current.name} is the last active admin; make another account admin first")
    if password:
        account_writes.set_password(store, current.name, password)
    if role != current.role:
        account_writes.set_role(store, current.name, role)
    if active != current.active:
        accounts.set_active(store, current.name, active)
    audit.record(
        store,
        manager,
        audit.ACCOUNT_CHANGED,
        name=current.name,
        role=role,
        active=active,
        password_changed=bool(password),
    )
    return Outcome("changed", f"account {current.name} saved")


def unlock(store: Store, actor: auth.User | None, name: str) -> Outcome:
    """End the account's sign-in back-off after failed tries, from every address."""
    manager = permitted(store, actor, auth.MANAGE_USERS)
    account = _account(store, name)
    account_writes.unlock(store, account.name)
    audit.record(store, manager, audit.ACCOUNT_UNLOCKED, name=account.name)
    return Outcome("unlocked", f"{account.name} may sign in again")


def throttled(store: Store, actor: auth.User | None) -> list[auth.Throttle]:
    """The accounts whose sign-ins wait now after failed tries (core.services.auth.throttled), for an admin
    deciding whom to ``unlock``."""
    permitted(store, actor, auth.MANAGE_USERS)
    return auth.throttled(store)


def _membership(
    store: Store, actor: auth.User | None, project_id: int, name: str
) -> tuple[auth.User, accounts.UserInfo, str]:
    """The manager (MANAGE_USERS checked), the account named and the project's name, for an assignment made or
    taken back; Refused for an admin, who acts on every project (taken off one, it answered unchanged where
    assigned it refused: a review)."""
    manager = permitted(store, actor, auth.MANAGE_USERS)
    account, project = _account(store, name), _project_name(store, project_id)
    if account.role in auth.ALL_PROJECTS_ROLES:
        raise Refused(f"{account.name} is an admin and acts on every project; assign graders, reviewers and viewers")
    return manager, account, project


def assign(store: Store, actor: auth.User | None, project_id: int, name: str) -> Outcome:
    """Assign a grader or viewer to the project (nothing to do when already assigned)."""
    manager, account, project = _membership(store, actor, project_id, name)
    if project_id in accounts.projects_of(store, account.id):
        return Outcome("unchanged", f"{account.name} is already assigned to {project}")
    accounts.assign(store, project_id, account.id)
    audit.record(store, manager, audit.MEMBER_ADDED, project_id, name=account.name)
    return Outcome("assigned", f"{account.name} assigned to {project}")


def unassign(store: Store, actor: auth.User | None, project_id: int, name: str) -> Outcome:
    """Take an account off the project (nothing to do when it is not assigned)."""
    manager, account, project = _membership(store, actor, project_id, name)
    if project_id not in accounts.projects_of(store, account.id):
        return Outcome("unchanged", f"{account.name} is not assigned to {project}")
    accounts.unassign(store, project_id, account.id)
    accounts.release(store, project_id, account.name)  # their hold lapsed only after its 10 minutes (a review)
    audit.record(store, manager, audit.MEMBER_REMOVED, project_id, name=account.name)
    return Outcome("unassigned", f"{account.name} unassigned from {project}")


def set_members(store: Store, actor: auth.User | None, project_id: int, names: Iterable[str]) -> Outcome:
    """Make exactly ``names`` the project's assigned graders and viewers (one event per change)."""
    wanted = {auth.normalise_name(n) for n in names}
    assigned = {u.name for u in accounts.members(store, project_id) if u.role not in auth.ALL_PROJECTS_ROLES}
    done = [assign(store, actor, project_id, n) for n in sorted(wanted - assigned)]
    done += [unassign(store, actor, project_id, n) for n in sorted(assigned - wanted)]
    return Outcome("saved", "; ".join(o.message for o in done) or "no change")


def assignable(store: Store) -> list[str]:
    """Accounts a project can be assigned to (graders and viewers), by name."""
    return [u.name for u in accounts.users(store) if u.role not in auth.ALL_PROJECTS_ROLES]
