"""Writes to accounts that check no actor: create an account, set its password or role, clear its failed sign-ins.

The checked actions of core.services.team call these after checking that the
actor may manage accounts, and record the audit event; tests and benchmarks
call them to set accounts up. Pages, the CLI and the API never import this
module (tests/test_architecture.py), so every change they make to an account
is checked and audited.
"""

from __future__ import annotations

from core.errors import InputError
from core.inputs.limits import MAX_EMAIL_CHARS, check_length
from core.services.auth import User, check_account_name, check_role, hash_password, normalise_name, user_of
from core.store import Store, accounts


def create_account(
    store: Store, name: str, role: str, *, password: str | None = None, email: str | None = None
) -> User:
    """Create an account (password and/or OIDC e-mail); raises InputError for a bad or taken name."""
    check_role(role)
    name = check_account_name(name)
    if email:
        check_length(email.strip(), MAX_EMAIL_CHARS, "the e-mail address")
    if password is None and not email:
        raise InputError(f"account {name!r} has neither a password nor an e-mail", fix="give one or both")
    row = accounts.create_user(
        store,
        name,
        role,
        password_hash=None if password is None else hash_password(password),
        email=email.strip().lower() if email else None,
    )
    return user_of(row)


def set_password(store: Store, name: str, password: str) -> None:
    """Replace an account's password (hashing it)."""
    accounts.set_password_hash(store, normalise_name(name), hash_password(password))


def set_role(store: Store, name: str, role: str) -> None:
    check_role(role)
    accounts.set_role(store, normalise_name(name), role)


def unlock(store: Store, name: str) -> int:
    """Clear every failed sign-in of account ``name`` (all addresses): it may try again at once.
    Returns how many addresses had failures."""
    return accounts.clear_failures(store, normalise_name(name))
