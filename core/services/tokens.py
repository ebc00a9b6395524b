"""Personal API tokens: created by a signed-in user for themselves or by an admin for anyone, shown once,
stored hashed, revocable, and resolved to their account on every API request.

A token expires: DEFAULT_DAYS after it is made unless its maker names another number of days, at most
MAX_DAYS (GitHub's and GitLab's personal tokens expire too), so a token left in a forgotten script or a
leaked log stops answering by itself. Tokens made before expiry existed (schema 18) have none.

A token acts as its account: ``resolve`` returns the account as the database has it now (current role;
None once it is disabled or the token revoked), and every API handler then calls the same checked services
as the pages with that user, so roles and project assignments apply unchanged. The secret is
``PREFIX`` + 256 random bits (``secrets.token_urlsafe``); only its SHA-256 hash is stored
(core.store.tokens), as for sign-in sessions (core.services.sessions). Creating and revoking are audited.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.errors import InputError, hidden_character
from core.inputs.limits import MAX_ADDRESS_CHARS, MAX_NAME_CHARS, check_length
from core.services import audit, auth
from core.services.outcome import Outcome, Refused, permitted
from core.store import Store, accounts
from core.store import tokens as table
from core.store.models import utcnow

PREFIX = "ag_"
"""Every token starts with this, so a leaked one is recognisable (secret scanners, logs)."""
TOUCH_EVERY = timedelta(minutes=1)
"""A token's last use is written at most this often (not one write per request)."""
FAILURE_NAME = "(api token)"
"""The name wrong tokens are counted under in the sign-in failures table (parentheses: no account's name)."""
DEFAULT_DAYS = 90
"""Days a token answers when its maker names none (GitLab's default and most: a year; GitHub suggests 30)."""
MAX_DAYS = 366
"""The most days a token may be made to answer: a yearly renewal, the longest GitLab allows."""
TOKEN_CREATED = "api_token_created"
TOKEN_REVOKED = "api_token_revoked"


@dataclass(frozen=True)
class TokenInfo:
    """What the Team page and ``activegrade tokens list`` show of a token (never its secret)."""

    id: int
    owner: str
    name: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    expires_at: datetime | None

    @property
    def active(self) -> bool:
        """Not revoked and not expired: the token answers (its account's state aside)."""
        return self.revoked_at is None and not expired(self.expires_at, utcnow())


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(row: table.TokenRow, owner: str) -> TokenInfo:
    return TokenInfo(
        row.id, owner, row.name, row.created_by, row.created_at, row.last_used_at, row.revoked_at, row.expires_at
    )


class TokenExpired(Exception):
    """The token sent is one of ours, and expired at ``expires_at``: its holder is told so (only the holder of
    the secret can learn it), not that it is wrong."""

    def __init__(self, expires_at: datetime) -> None:
        super().__init__(f"the API token expired at {expires_at:%Y-%m-%d %H:%M} UTC")
        self.expires_at = expires_at


def expired(expires_at: datetime | None, now: datetime) -> bool:
    """Whether a token that expires at ``expires_at`` (None: never, a token made before expiry) has by ``now``."""
    return expires_at is not None and now >= expires_at


def check_days(days: object) -> int:
    """``days`` as the whole number of days a new token answers, 1 to MAX_DAYS; InputError otherwise."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise InputError(
            f"a token's life is {days!r} days",
            fix=f"give a whole number of days from 1 to {MAX_DAYS} (default {DEFAULT_DAYS}); make a new token then",
        )
    return days


def _owner_for(
    store: Store, actor: auth.User | None, owner: str, *, creating: bool = False
) -> tuple[auth.User, accounts.UserInfo]:
    """(the acting user now, the owner's account) if the actor may manage the owner's tokens: their own
    (any active account) or, with MANAGE_USERS, anyone's; Refused otherwise. A disabled account's tokens are
    listed and revoked as any (its tokens answer again if it is enabled again: an operator revokes them first),
    but none is ``creating`` for it."""
    name = auth.normalise_name(owner)
    current = None if actor is None or actor.id is None else auth.refresh(store, actor)
    if current is None or current.name != name:
        current = permitted(store, actor, auth.MANAGE_USERS)
    account = accounts.user_by_name(store, name)
    if account is None:
        raise InputError(f"no account named {owner!r}", fix="check the name in the list of accounts")
    if creating and not account.active:
        raise InputError(f"the account {owner!r} is disabled", fix="enable it before giving it a token")
    return current, account


def create(
    store: Store, actor: auth.User | None, owner: str, name: str, days: int = DEFAULT_DAYS
) -> tuple[TokenInfo, str]:
    """A new token for ``owner`` named ``name`` (what it is for) that answers for ``days`` days (`check_days`);
    returns it with its secret, which is shown once and never stored."""
    days = check_days(days)
    current, account = _owner_for(store, actor, owner, creating=True)
    name = check_length(name.strip(), MAX_NAME_CHARS, "the token's name")
    if not name:
        raise InputError("the token has no name", fix="name what it is for, e.g. 'CI export'")
    if (hidden := hidden_character(name)) is not None:  # an escape sequence forged lines in `tokens list`
        raise InputError(f"the token's name holds the character {hidden}", fix="name it with visible characters")
    secret = PREFIX + secrets.token_urlsafe(32)
    now = utcnow()
    row = table.add(store, _hash(secret), account.id, name, current.name, now, now + timedelta(days=days))
    audit.record(store, current, TOKEN_CREATED, owner=account.name, token=name, token_id=row.id, days=days)
    return _info(row, account.name), secret


def listed(store: Store, actor: auth.User | None, owner: str) -> list[TokenInfo]:
    """The owner's tokens, revoked ones included, oldest first."""
    _, account = _owner_for(store, actor, owner)
    return [_info(row, account.name) for row in table.of_user(store, account.id)]


def revoke(store: Store, actor: auth.User | None, token_id: int) -> Outcome:
    """Revoke a token: its next request is refused. The owner's own, or anyone's with MANAGE_USERS."""
    row = table.by_id(store, token_id)
    owner = None if row is None else accounts.user_by_id(store, row.user_id)
    if row is None or owner is None:
        raise Refused(f"no API token {token_id}: list the account's tokens for their ids")
    current, _ = _owner_for(store, actor, owner.name)
    if not table.revoke(store, token_id):
        return Outcome("unchanged", f"token {token_id} ({row.name}) was revoked already")
    audit.record(store, current, TOKEN_REVOKED, owner=owner.name, token=row.name, token_id=token_id)
    return Outcome("revoked", f"token {token_id} ({row.name}) of {owner.name} revoked")


def resolve(
    store: Store, secret: str | None, address: str | None = None, *, now: datetime | None = None
) -> auth.User | None:
    """The account a live token stands for, with its current role; None for an unknown or revoked token or a
    disabled account; TokenExpired for an expired one. Records the use (at most every TOUCH_EVERY).

    Wrong tokens are throttled like wrong passwords (core.services.auth.back_off, in the same failures
    table under the name FAILURE_NAME, which no account can have): after auth.FREE_FAILURES wrong tokens in
    a row from ``address``, each further wrong one within the back-off raises auth.SignInThrottled (HTTP
    429) and counts again, doubling the wait up to auth.MAX_BACK_OFF. A right token always passes (2^256
    secrets: throttling it would protect nothing and would lock out a colleague behind the same address),
    but clears nothing: the count is the address's, not an account's, so a guesser holding a token of
    their own could otherwise wipe it between guesses. The count starts again after a quiet spell of
    auth.MAX_BACK_OFF without a wrong token (a colleague's old typos do not make their next one wait)."""
    bucket = auth.address_bucket((address or "")[:MAX_ADDRESS_CHARS])
    now = now or utcnow()
    account = _account_of(store, secret, now)
    if account is not None:
        return account
    failures, last = auth.recent_failures(store, FAILURE_NAME, bucket, now)
    accounts.add_failure(store, FAILURE_NAME, bucket)
    if last is not None and (left := last + auth.back_off(failures) - now) > timedelta(0):
        raise auth.SignInThrottled("too many wrong API tokens from here", left)
    return None


def _account_of(store: Store, secret: str | None, now: datetime) -> auth.User | None:
    if not isinstance(secret, str) or not secret.startswith(PREFIX) or len(secret) > 200:
        return None
    row = table.find(store, _hash(secret))
    if row is None or row.revoked_at is not None:
        return None
    if expired(row.expires_at, now):
        raise TokenExpired(row.expires_at)
    account = accounts.user_by_id(store, row.user_id)
    if account is None or not account.active:
        return None
    if row.last_used_at is None or now - row.last_used_at > TOUCH_EVERY:
        table.touch(store, row.id, now)
    return auth.User(name=account.name, role=account.role, id=account.id, email=account.email)
