"""Accounts and roles: who may do what, password hashing and sign-in.

Four roles. ``admin`` creates projects, uploads, changes settings, exports,
manages accounts and reads the audit trail, on every project. ``grader``
grades the projects assigned to them, blind to their dashboards (a running
estimate would bias the grades). ``viewer`` sees the dashboards and the record browser of the
projects assigned to them, nothing else. ``reviewer`` settles the items of their projects' review
queue (disagreements, flags, the audit share) and browses their records, blind to the dashboard
too. All see the list of their projects. The permission matrix is data (``PERMISSIONS``), so the app, the tests
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

import contextlib
import ipaddress
import logging
import math
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from core import config
from core.errors import InputError
from core.inputs.limits import MAX_ADDRESS_CHARS, MAX_NAME_CHARS, MAX_PASSWORD_CHARS, check_length
from core.store import Store, accounts

logger = logging.getLogger(__name__)

ADMIN, GRADER, VIEWER, REVIEWER = "admin", "grader", "viewer", "reviewer"
ROLES = (ADMIN, GRADER, VIEWER, REVIEWER)

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
REVIEW = "review"  # settle items: disagreements, flags, the audit share (core.services.review)
BROWSE = "browse"  # every item with its grades, comments and audit events (core.services.browser)
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
    REVIEW,
    BROWSE,
)

PERMISSIONS: Mapping[str, frozenset[str]] = {
    ADMIN: frozenset(ACTIONS),
    GRADER: frozenset({VIEW_PROJECTS, GRADE}),  # not the dashboard: a running estimate would bias their grades
    VIEWER: frozenset({VIEW_PROJECTS, VIEW_DASHBOARD, BROWSE}),
    REVIEWER: frozenset({VIEW_PROJECTS, REVIEW, BROWSE}),  # sees graders' grades, as a final grade needs
}
"""role -> the actions it may perform (on the projects it may see)."""

ALL_PROJECTS_ROLES = frozenset({ADMIN})
"""Roles that act on every project; the others only on the projects assigned to them."""

MIN_PASSWORD_LENGTH = 12
"""New and changed passwords have at least this many characters (OWASP ASVS 4, 2.1.1). A shorter one set before
signs in once more, to choose a new one (``User.must_change_password``), and starts no session."""
FREE_FAILURES = 5
"""Failed sign-ins in a row for one name from one known client address before that address's back-off starts."""
MAX_BACK_OFF = timedelta(minutes=15)
"""The longest wait one address's back-off imposes: 1 s after FREE_FAILURES, doubling with each failure up to this."""
ACCOUNT = "*"
"""The failure bucket of an account from every address together (no client address is ``*``)."""
ACCOUNT_FREE_FAILURES = 20
"""Failed sign-ins in a row for one name, from anywhere, before the account's own back-off starts."""
KNOWN_ADDRESS = timedelta(days=30)
"""How long after a sign-in from an address the account's own back-off does not hold a sign-in from there: it
held every sign-in at the name, so a wrong password a minute from anywhere kept the account's owner out (a
security note); their own office's or home's address stays open, with its own back-off."""
ANY_NAME = "(any name)"
"""The name one address's failed sign-ins at every name together are counted under (parentheses: no account's)."""
ADDRESS_FREE_FAILURES = 20
"""Failed sign-ins from one known address, at any names, before that address's back-off for every name starts:
the per-name buckets let one address try 5 passwords at each of any number of names (password spraying, an
attacker's review), and each unknown name wrote an audit row. An office behind one address makes a few typos
an hour, not 20 in a row."""
MAX_ACCOUNT_BACK_OFF = timedelta(minutes=1)
"""The longest wait the account's back-off imposes: guessing spread over many addresses (or from an unknown
address, where every client looks alike) gets about one try a minute, and the right password waits at most this."""
THROTTLED = "sign_in_throttled"
"""The audit event recorded when an account's back-off starts (its ACCOUNT_FREE_FAILURES-th failure in a row)."""
MAX_CONCURRENT_HASHES = 4
"""Argon2 hashes computed at once (64 MiB each, argon2-cffi's default); further sign-ins wait their turn."""

_hasher = PasswordHasher()
_hash_slots = threading.BoundedSemaphore(MAX_CONCURRENT_HASHES)

NAME_LOCKS = 64
"""Locks that sign-ins share by their name's hash: tries at one name take their turns (`sign_in`), and a
name sprayed by an attacker costs no memory."""
_name_locks = tuple(threading.Lock() for _ in range(NAME_LOCKS))


class AccessDenied(PermissionError):
    """The signed-in user (or nobody) may not perform this action; ``str()`` says why."""


@dataclass(frozen=True)
class User:
    """A signed-in user: ``name`` is what grades and audit events record."""

    name: str
    role: str
    id: int | None = None  # None for the open demo's anonymous user
    email: str | None = None
    must_change_password: bool = field(default=False, compare=False)
    """Signed in with a password shorter than MIN_PASSWORD_LENGTH: may do nothing but choose a new one
    (``replace_short_password``); core.services.sessions.start refuses to start a session for them."""


def open_demo_enabled() -> bool:
    """True only when $ACTIVEGRADE_OPEN_DEMO is ``1`` (anyone may use the app as an admin; core.config)."""
    return config.config().open_demo


OPERATOR = User(name="cli", role=ADMIN)
"""The command line's user (``python -m core users ...``): whoever can reach the database acts as its admin;
audit events name it ``cli``."""


def demo_user(name: str) -> User:
    """The open demo's user: the name typed (`check_grader_name`: InputError for one that is not a name), with
    the admin role and no account."""
    return User(name=check_grader_name(name), role=ADMIN)


PROXY_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip")
"""Headers a reverse proxy adds: a request that has one came through a proxy."""


def check_open_demo_request(headers: Mapping[str, str], peer: str | None) -> None:
    """Raise AccessDenied when the open demo (everyone an admin) is reached from anywhere but this machine or the
    addresses and networks the operator names in ``$ACTIVEGRADE_TRUSTED_PROXIES``. Allowed: a connection whose
    ``peer`` address is one of those (a named proxy, or a client on a named network), or a loopback one that
    came through no reverse proxy (a local proxy not named would expose a demo served on 127.0.0.1 to everyone
    it serves) and names this machine in its ``Host`` (a page of another site whose name an attacker re-pointed
    at 127.0.0.1, DNS rebinding, sends its own name there). ``peer`` None is loopback, as Streamlit reports it."""
    trusted = config.config().trusted_proxies
    if trusted and _in_networks(peer, trusted):
        return
    if any(name.lower() in PROXY_HEADERS for name in headers):
        raise AccessDenied(
            "this open demo (no sign-in, everyone an admin) is reached through a reverse proxy, so it does not "
            f"answer; the operator names the proxy in {config.TRUSTED_PROXIES} to expose it on purpose, or "
            f"unsets {config.OPEN_DEMO}"
        )
    if not _is_loopback(peer):
        raise AccessDenied(
            f"this open demo (no sign-in, everyone an admin) answers only on this machine, and {peer} is another; "
            f"the operator sets {config.TRUSTED_PROXIES} (the addresses or networks allowed in) to expose it on "
            f"purpose, or unsets {config.OPEN_DEMO} and creates accounts"
        )
    host = next((value for name, value in headers.items() if name.lower() == "host"), "")
    if not _names_this_machine(host):
        raise AccessDenied(
            f"this open demo (no sign-in, everyone an admin) answers only to its local names (localhost, "
            f"127.0.0.1, [::1]), and this request names {host[:100]!r}: open the demo at http://localhost:PORT"
        )


def _in_networks(peer: str | None, networks: tuple) -> bool:
    """Whether the connection's ``peer`` address (None: loopback) lies in one of ``networks``."""
    try:
        address = ip_address(peer or "127.0.0.1")
    except ValueError:
        return False
    return any(address in network for network in networks)


def _names_this_machine(host: str) -> bool:
    """Whether a ``Host`` header (name or address, with or without a port) names this machine: localhost or a
    name under .localhost (RFC 6761 keeps them on loopback), or a loopback address; empty (HTTP/1.0, a test
    client) counts, as no browser sends that."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    if name in ("", "localhost") or name.endswith(".localhost"):
        return True
    return _is_loopback(name)


def _is_loopback(peer: str | None) -> bool:
    """Whether the connection's peer address is this machine (None: Streamlit's loopback); a malformed one is not."""
    try:
        return peer is None or ip_address(peer).is_loopback
    except ValueError:
        return False


def ip_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``text`` as an IP address, an IPv4-mapped IPv6 one (::ffff:127.0.0.1, how a server listening on every
    interface of both families sees an IPv4 client) as the IPv4 address it carries; ValueError when malformed."""
    address = ipaddress.ip_address(text)
    mapped = getattr(address, "ipv4_mapped", None)
    return address if mapped is None else mapped


DEMO_FORBIDDEN = frozenset({MANAGE_USERS})
"""What the open demo's anonymous users may not do although they are admins: accounts belong to real
deployments, and the open demo refuses a database that has any (check_open_demo)."""


def check_open_demo(store: Store) -> None:
    """Raise InputError when the open demo would run on a database with accounts: anyone could then act
    as an admin of a real deployment (reset the admin's password, read every project)."""
    if accounts.users(store):
        raise InputError(
            f"{config.OPEN_DEMO}=1 (open demo: no sign-in, everyone is an admin) was set on a database that has "
            "accounts, so the app refuses to start",
            fix=f"unset {config.OPEN_DEMO} to sign in, or point {config.DB_URL} at a separate demo database (make demo does so)",
        )


# passwords ----------------------------------------------------------------


def hash_password(password: str) -> str:
    """A salted argon2id hash of ``password`` in PHC string form; raises InputError for a weak one
    (short, only spaces) or one over MAX_PASSWORD_CHARS."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(
            f"the password has {len(password)} characters, fewer than {MIN_PASSWORD_LENGTH}",
            fix=f"choose a password of at least {MIN_PASSWORD_LENGTH} characters",
        )
    if not password.strip():
        raise InputError("the password is only spaces", fix="choose a password with other characters too")
    check_length(password, MAX_PASSWORD_CHARS, "the password")
    with _hash_slots:
        return _hasher.hash(password)


def verify_password(encoded: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored hash (False for no hash or a malformed one).
    At most MAX_CONCURRENT_HASHES verifications run at once."""
    if not encoded:
        return False
    try:
        with _hash_slots:
            return _hasher.verify(encoded, password)
    except (VerificationError, InvalidHashError):
        return False


# accounts -------------------------------------------------------------------


def check_role(role: str) -> None:
    if role not in ROLES:
        raise InputError(f"unknown role {role!r}", fix=f"use one of {', '.join(ROLES)}")


def normalise_name(name: str) -> str:
    """Account names are case-insensitive: stored stripped and lower-case."""
    return name.strip().lower()


NAME_PUNCTUATION = frozenset(" ._-@+'")
_SCRIPT_FAMILIES = {
    "HIRAGANA": "CJK",
    "KATAKANA": "CJK",
    "HANGUL": "CJK",
    "ARABIC-INDIC": "ARABIC",
    "EXTENDED": "ARABIC",
}


def _script(char: str) -> str:
    """The script of a letter, or of a digit other than 0-9, by its Unicode name's first word (LATIN, CYRILLIC,
    GREEK, CJK, ...; the Arabic-Indic digits are Arabic's)."""
    word = unicodedata.name(char, "UNKNOWN").split()[0]
    return _SCRIPT_FAMILIES.get(word, word)


def check_account_name(name: str) -> str:
    """``name`` normalised (NFKC, stripped, lower-case) if it is a name people can tell apart; else InputError.

    Letters of one script (Japanese and Korean scripts count as one with CJK ideographs), digits, single
    spaces and ``. _ - @ + '``, at most MAX_NAME_CHARS: no look-alike mixing Latin with Cyrillic or Greek
    (``аdmin`` with a Cyrillic a), no invisible, blank-looking (Hangul filler, Braille blank) or
    control characters.
    """
    return _checked_name(normalise_name(unicodedata.normalize("NFKC", name)), "the account name")


def check_grader_name(name: str) -> str:
    """The open demo's grader name (NFKC, stripped, its case kept) under `check_account_name`'s rules, or
    InputError: it is stored with every grade and shown and exported as an account's name is; "" for no name."""
    name = unicodedata.normalize("NFKC", name).strip()
    return name and _checked_name(name, "the grader name")


def _checked_name(name: str, what: str) -> str:
    """``name`` if it passes `check_account_name`'s rules, else InputError naming it ``what``."""
    fix = f"use letters of one alphabet, digits, single spaces and {' '.join(sorted(NAME_PUNCTUATION - {' '}))}"
    check_length(name, MAX_NAME_CHARS, what)
    if not any(c.isalnum() and unicodedata.category(c) != "Lm" for c in name):  # a run of tatweels reads as a line
        raise InputError(f"{what} has no letter or digit", fix=fix)
    odd = [c for c in name if not (c in NAME_PUNCTUATION or (c.isalnum() and "FILLER" not in unicodedata.name(c, "")))]
    if odd:
        raise InputError(f"{what} holds the character {ascii(odd[0])}", fix=fix)
    if "  " in name:
        raise InputError(f"{what} has two spaces in a row", fix=fix)
    if not name[0].isalnum():  # "=cmd", "+1", "@x": read as a formula where a spreadsheet opens the name
        raise InputError(f"{what} starts with {name[0]!r}", fix=f"start it with a letter or digit; {fix}")
    scripts = {_script(c) for c in name if c.isalpha() or (c.isdigit() and not c.isascii())}  # "admin١" too
    if len(scripts) > 1:
        raise InputError(
            f"{what} mixes the scripts {', '.join(sorted(scripts))}, so it can look like another name", fix=fix
        )
    return name


def user_of(row: accounts.UserInfo) -> User:
    """The User an account row signs in as."""
    return User(name=row.name, role=row.role, id=row.id, email=row.email)


class SignInThrottled(AccessDenied):
    """Too many failed sign-ins for this name (from this address, or from everywhere), or wrong API tokens:
    ``str()`` says how long to wait, ``retry_after`` in whole seconds (HTTP's Retry-After)."""

    def __init__(self, what: str, left: timedelta) -> None:
        self.retry_after = math.ceil(left.total_seconds())
        super().__init__(f"{what}: try again in {self.retry_after} s")


def back_off(failures: int, free: int = FREE_FAILURES, cap: timedelta = MAX_BACK_OFF) -> timedelta:
    """The wait after ``failures`` failed sign-ins in a row: none for the first ``free``, then 1 s doubling with
    each further failure, at most ``cap`` (exponential back-off, as RFC 6749's and NIST SP 800-63B's throttling
    advice has it: slow guessing down, never lock anyone out for good)."""
    if failures < free:
        return timedelta(0)
    return min(timedelta(seconds=2 ** min(failures - free, 20)), cap)


@dataclass(frozen=True)
class Throttle:
    """A back-off in force: sign-ins for ``name`` from ``address`` (ACCOUNT: from every address) wait until
    ``until``; it began with the last of ``failures`` failed sign-ins in a row, at ``since``."""

    name: str
    address: str
    failures: int
    since: datetime
    until: datetime


def _limits(name: str, bucket: str) -> tuple[int, timedelta]:
    """(free failures, longest wait) of a failure bucket: an account's own (ACCOUNT), one address's at one name,
    or one address's at every name (ANY_NAME)."""
    if name == ANY_NAME:
        return ADDRESS_FREE_FAILURES, MAX_BACK_OFF
    return (ACCOUNT_FREE_FAILURES, MAX_ACCOUNT_BACK_OFF) if bucket == ACCOUNT else (FREE_FAILURES, MAX_BACK_OFF)


def recent_failures(store: Store, name: str, bucket: str, now: datetime) -> tuple[int, datetime | None]:
    """(failures in a row, the last one's time) of a bucket that no success clears (one address's at every name,
    ANY_NAME; one address's wrong API tokens): its count starts again after a quiet spell of MAX_BACK_OFF without
    a failure, so a colleague's old typos do not make their next one wait."""
    failures, last = accounts.failures(store, name, bucket)
    if last is not None and now - last > MAX_BACK_OFF:
        accounts.clear_failures(store, name, bucket)
        return 0, None
    return failures, last


def _held_until(name: str, bucket: str, failures: int, last: datetime | None) -> datetime | None:
    """When the bucket's back-off after ``failures`` failures, the last at ``last``, ends (None: no failure)."""
    return None if last is None else last + back_off(failures, *_limits(name, bucket))


def throttled(store: Store) -> list[Throttle]:
    """The back-offs in force now, by account and address: the failures sign_in reads, under its rule."""
    now = datetime.now(UTC)
    found = []
    for name, bucket, failures, last in accounts.all_failures(store):
        until = _held_until(name, bucket, failures, last)
        if until is not None and until > now:
            found.append(Throttle(name=name, address=bucket, failures=failures, since=last, until=until))
    return found


UNKNOWN_ADDRESS = f"an address not known (this machine, or a proxy not named in ${config.TRUSTED_PROXIES})"
"""Where a sign-in came from when `client_address` is None: Streamlit gives no address for a loopback client."""


def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The client's IP address: the connection's ``peer`` (None: loopback, as Streamlit reports it), or, when
    the peer is one of the trusted proxies (``$ACTIVEGRADE_TRUSTED_PROXIES``, core.config), the right-most
    address of ``X-Forwarded-For`` that is not a trusted proxy itself (the ones left of it are the client's
    to forge). None when unknown."""
    trusted = config.config().trusted_proxies
    if not (trusted and forwarded_for and _in_networks(peer, trusted)):
        return peer
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _in_networks(hop, trusted):
            try:
                return str(ip_address(hop))
            except ValueError:
                return None  # a malformed hop: unknown, never a name a client can choose
    return peer


IPV6_PREFIX = 64
"""The IPv6 network whose addresses share a failure bucket (`address_bucket`)."""


def address_bucket(address: str) -> str:
    """The failure bucket of a client ``address``: the address itself, an IPv6 one's /IPV6_PREFIX network. Every
    IPv6 client holds a /64 at least: counted per address, rotating through it passed the back-offs (60 guesses,
    none throttled, an attacker's review)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6 and parsed.ipv4_mapped is not None:  # ::ffff:192.0.2.10 is 192.0.2.10
        return str(parsed.ipv4_mapped)
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_PREFIX}", strict=False))
    return address


NO_ACCOUNT = "(a name no account has)"
"""The actor of a failed sign-in at a name no account has, in the log and the audit trail: never what was typed
(no account name holds parentheses, `check_account_name`)."""


def sign_in(store: Store, name: str, password: str, address: str | None = None) -> User | None:
    """The account if ``name`` and ``password`` match an active one, else None.

    Every attempt is in the audit trail (``sign_in`` or ``sign_in_failed``, with the client ``address`` when
    known). Two back-offs make the next try wait (``back_off``; raises SignInThrottled, checking nothing,
    while one lasts), each cleared by a success or an admin's ``unlock``:
    - one address's failures for the name (only when the address is known): FREE_FAILURES free, then up to
      MAX_BACK_OFF. An attacker slows down only their own tries at that name;
    - the account's failures from everywhere (bucket ACCOUNT): ACCOUNT_FREE_FAILURES free, then up to
      MAX_ACCOUNT_BACK_OFF, with a THROTTLED audit event when it starts. Guessing spread over many
      addresses is slowed as much as from one; and where the address is unknown (localhost, a proxy not
      named as trusted) no one shares a long wait: the right password waits at most a minute. It does not
      hold a sign-in from an address the account signed in from within KNOWN_ADDRESS, whose own back-off
      does: whoever knows the name cannot keep its owner out from there;
    - one known address's failures at every name together (name ANY_NAME): ADDRESS_FREE_FAILURES free, then
      up to MAX_BACK_OFF; guessing one password at many names (spraying) is slowed as guessing at one is. A
      success clears nothing here (a sprayer with an account of their own would sign in between guesses);
      the count starts again after a quiet spell of MAX_BACK_OFF.
    A name over MAX_NAME_CHARS or a password over MAX_PASSWORD_CHARS fails without hashing. Unknown names,
    disabled accounts and accounts without a password (OIDC only) are checked against a throw-away hash, so
    timing does not tell them apart. A hash made with older argon2 parameters is replaced by a current one.

    Tries at one name take their turns (a lock per name, in this process): checked all at once, tries sent
    together all passed the back-off before the first failure was written, so each window let any number of
    guesses through. Several app processes on one database each keep their own turns.
    """
    name = normalise_name(name)[:MAX_NAME_CHARS]
    address = (address or "")[:MAX_ADDRESS_CHARS]
    from_bucket = address and address_bucket(address)
    turns = sorted({hash(name) % NAME_LOCKS, hash((ANY_NAME, from_bucket)) % NAME_LOCKS})  # one order: no deadlock
    with contextlib.ExitStack() as held:  # the back-offs read, the check and the failures written as one
        for turn in turns:
            held.enter_context(_name_locks[turn])
        return _sign_in(store, name, password, address, from_bucket)


def _sign_in(store: Store, name: str, password: str, address: str, from_bucket: str) -> User | None:
    """`sign_in` for a normalised ``name``, under its name's and its address's locks; ``from_bucket`` the
    address's failure bucket (`address_bucket`)."""
    if from_bucket:
        until = _held_until(ANY_NAME, from_bucket, *recent_failures(store, ANY_NAME, from_bucket, datetime.now(UTC)))
        if until is not None and (left := until - datetime.now(UTC)) > timedelta(0):
            logger.warning(
                "sign-ins from %s held back %.0f s more (back-off at any name)", address, left.total_seconds()
            )
            raise SignInThrottled("too many failed sign-ins from here", left)
    buckets = [ACCOUNT, from_bucket] if from_bucket else [ACCOUNT]
    known = bool(from_bucket) and accounts.signed_in_from(store, name, from_bucket, datetime.now(UTC) - KNOWN_ADDRESS)
    for bucket in buckets[known:]:  # an address the account signed in from lately: its own back-off alone
        until = _held_until(name, bucket, *accounts.failures(store, name, bucket))
        if until is not None and (left := until - datetime.now(UTC)) > timedelta(0):
            where = " from here" if bucket == from_bucket else ""
            logger.warning(
                "sign-in for %r%s held back %.0f s more (back-off)",
                name,
                f" from {address}" if where else "",
                left.total_seconds(),
            )
            raise SignInThrottled(f"too many failed sign-ins for {name!r}{where}", left)
    too_long = len(password) > MAX_PASSWORD_CHARS
    row = None if too_long else accounts.user_by_name(store, name)
    usable = row is not None and row.active and bool(row.password_hash)
    ok = not too_long and verify_password(row.password_hash if usable else _DUMMY_HASH, password) and usable
    detail = {"address": address} if address else {}
    if not ok:
        # an account's name, never what was typed where none has it: a password typed into the name field
        # reached the log (a security review)
        who = repr(name) if row is not None else NO_ACCOUNT
        logger.info("sign-in refused for %s from %s", who, address or UNKNOWN_ADDRESS)
        for bucket in buckets:
            accounts.add_failure(store, name, bucket)
        if from_bucket:
            accounts.add_failure(store, ANY_NAME, from_bucket)
        # in the audit trail too: an admin saw (and exported) a password typed into the name field, and anyone
        # could write a spreadsheet formula there (an attacker's review)
        actor = name if row is not None else NO_ACCOUNT
        accounts.record_event(store, actor, "sign_in_failed", detail=detail)
        if accounts.failures(store, name, ACCOUNT)[0] == ACCOUNT_FREE_FAILURES:
            accounts.record_event(store, actor, THROTTLED, detail={"failures": ACCOUNT_FREE_FAILURES, **detail})
        return None
    for bucket in buckets[known:]:  # the account's own count stands where it held nothing: an owner's sign-in from
        accounts.clear_failures(store, name, bucket)  # home gave whoever guesses elsewhere 20 fresh tries (a review)
    if from_bucket:
        accounts.record_sign_in_address(store, name, from_bucket)
    if _hasher.check_needs_rehash(row.password_hash):
        accounts.set_password_hash(store, name, _hasher.hash(password))
    accounts.record_event(store, name, "sign_in", detail=detail)
    return replace(user_of(row), must_change_password=len(password) < MIN_PASSWORD_LENGTH)


def replace_short_password(store: Store, user: User, new_password: str) -> User:
    """Set the new password of a user who signed in with one shorter than MIN_PASSWORD_LENGTH (InputError
    for a new one hash_password refuses, the old one among them); the user, free to start a session."""
    if not user.must_change_password or user.id is None:
        raise AccessDenied("no password change is pending; sign in again")
    row = accounts.user_by_name(store, user.name)
    if row is None or not row.active or row.id != user.id:
        raise AccessDenied("your account is disabled or gone; ask an admin")
    accounts.set_password_hash(store, user.name, hash_password(new_password))
    accounts.record_event(store, user.name, "password_changed", detail={"reason": "shorter than the minimum"})
    return replace(user_of(row), must_change_password=False)


_DUMMY_HASH = _hasher.hash("not a password of anyone")


def recheck(store: Store, user: User | None, action: str, project_id: int | None = None) -> User:
    """``user`` as the database has them now, if they may still perform ``action`` (on ``project_id``);
    else raises AccessDenied saying why.

    For everything that runs without the page's gate: Streamlit fragments (a grading card, a live
    dashboard) rerun on their own and keep their callbacks after the page stopped, so each of them,
    and each callback, calls this first. It reads the account (disabled, demoted), the project
    assignment and the project itself (deleted) again; the open demo's user passes only while the
    open demo is on.
    """
    if user is None:
        raise AccessDenied("you are signed out; sign in again")
    if user.id is None:
        current = user if open_demo_enabled() else None
    else:
        current = refresh(store, user)
    if current is None:
        raise AccessDenied("your account is disabled or you are signed out; sign in again")
    if project_id is not None and not store.has_project(project_id):
        raise AccessDenied(f"project {project_id} has been deleted; choose another project")
    return require(store, current, action, project_id)


def refresh(store: Store, user: User) -> User | None:
    """``user`` as the accounts table has them now: None once the account is disabled or gone, else
    with its current role (a session signed in earlier never keeps a role an admin has taken away)."""
    row = accounts.user_by_name(store, user.name)
    return user_of(row) if row is not None and row.active else None


def sign_in_oidc(store: Store, claims: Mapping[str, object]) -> User:
    """The account for an OIDC identity (Streamlit's ``st.user``), matched by verified e-mail.

    Raises AccessDenied, naming the e-mail, when no active account has it:
    an admin must create the account (with that e-mail) first; and where the
    provider does not say it verified the e-mail (``email_verified`` true): a
    missing claim counted as verified, so a provider whose users set their own
    e-mail and that sends no such claim signed anyone in as the admin whose
    e-mail they typed (an attacker's review).
    """
    email = str(claims.get("email") or "").strip().lower()
    if not email:
        raise AccessDenied(
            "the identity provider did not send an e-mail address; ask an admin to configure the scope 'email'"
        )
    if claims.get("email_verified") is not True:
        said = "has not verified" if claims.get("email_verified") is False else "did not say it verified"
        raise AccessDenied(
            f"the identity provider {said} {email}; ask an admin to have it send the claim email_verified"
        )
    row = accounts.user_by_email(store, email)
    if row is None or not row.active:
        accounts.record_event(store, email, "sign_in_failed", detail={"via": "oidc"})
        logger.info("OIDC sign-in refused: no active account has the e-mail %r", email)
        raise AccessDenied(f"no active ActiveGrade account has the e-mail {email}; ask an admin to create one")
    accounts.record_event(store, row.name, "sign_in", detail={"via": "oidc"})
    return user_of(row)


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
    """Whether ``user`` may perform ``action`` (on ``project_id`` when given): role and assignment
    (the open demo's users, who have no account, never DEMO_FORBIDDEN)."""
    if user is None or not allowed(user.role, action) or (user.id is None and action in DEMO_FORBIDDEN):
        return False
    if project_id is None:
        return True
    projects = visible_projects(store, user)
    return projects is None or project_id in projects


ACTION_WORDS = {
    VIEW_PROJECTS: "see the projects",
    CREATE_PROJECT: "create a project",
    PREPARE_PROJECT: "prepare a project",
    CHANGE_SETTINGS: "change a project's settings",
    DELETE_PROJECT: "delete a project",
    GRADE: "grade",
    VIEW_DASHBOARD: "see a project's dashboard, reading and items",
    EXPORT: "export a project's grades and report",
    SIMULATE: "run simulations",
    MANAGE_USERS: "manage accounts, roles and assignments",
    VIEW_AUDIT: "see the audit trail",
    REVIEW: "review grades",
    BROWSE: "browse the records",
}
"""Each action in words, for the refusals (`require`)."""


def require(store: Store, user: User | None, action: str, project_id: int | None = None) -> User:
    """``user`` if ``may(...)``; otherwise raises AccessDenied saying what is missing."""
    if may(store, user, action, project_id):
        return user
    words = ACTION_WORDS.get(action, action.replace("_", " "))
    if user is None:
        raise AccessDenied(f"sign in to {words}")
    if not allowed(user.role, action):
        raise AccessDenied(f"the {user.role} role may not {words}; ask an admin")
    raise AccessDenied(f"{user.name} is not assigned to project {project_id}; ask an admin to assign you")
