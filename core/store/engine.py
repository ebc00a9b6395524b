"""Where the database lives and how to connect to it.

SQLite (the default, a file under ``./.activegrade/``) runs in WAL mode with
a busy timeout so that the app's background preparation job and several
browser sessions can write side by side; the writers of one process take
turns on a lock of the process (core.store.write_turns) instead of polling
SQLite's. PostgreSQL is used as given by URL
(``postgresql+psycopg://user@host/db``).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from core import config
from core.errors import InputError
from core.store.json_codec import dumps, loads
from core.store.write_turns import TurnConnection

DEFAULT_DIR = Path(".activegrade")
BUSY_TIMEOUT_MS = 30_000
SQLITE_POOL = 48
"""SQLite connections kept open for reuse: at least one per thread that may read at once (the API's handlers,
core.api.http.API_THREADS; the server's other routes on anyio's default 40; the app's sessions). SQLAlchemy's
default of 5 closed every connection beyond the fifth when it came back, so under 100 graders most requests
opened a new one (the file, WAL and the pragmas): server CPU 11.2 ms a grade, 8.4 ms with 48 kept
(benchmarks/concurrent_graders.md). An idle SQLite connection costs a file handle and its page cache, nothing
on a server."""


def database_url(configured: str | None = None) -> str:
    """The URL to use: ``configured`` if given, else $ACTIVEGRADE_DB_URL, else the default file."""
    url = configured or config.config().db_url
    if url:
        return url
    return f"sqlite:///{(DEFAULT_DIR / 'activegrade.db').resolve()}"


_PASSWORD_IN_URL = re.compile(r"(?P<head>(?:^|://)[^/@]*?:)(?P<password>[^/]*)@")
"""``scheme://user:password@host`` (or ``user:password@host`` with the scheme forgotten): the password is what
follows the first colon after ``//`` (or the start) up to the last ``@`` before the path (a password may itself
hold ``@`` or ``:``)."""
_PASSWORD_IN_QUERY = re.compile(r"[?&][^=&#]*password[^=&#]*=(?P<password>[^&#]*)", re.IGNORECASE)
"""``?password=...`` (libpq, hence psycopg, reads the password from the query too; ``sslpassword`` likewise)."""


def url_secrets(url: str) -> list[str]:
    """Every password ``url`` holds, as written and percent-decoded, longest first: the user's and any query
    parameter named like ``password``. Found by pattern, so a URL SQLAlchemy cannot parse gives them too."""
    found = [m.group("password") for m in _PASSWORD_IN_URL.finditer(url)]
    found += [m.group("password") for m in _PASSWORD_IN_QUERY.finditer(url)]
    found += [unquote(secret) for secret in found]
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def _redacted(text: str, secrets: list[str]) -> str:
    """``text`` with each of ``secrets`` replaced by ``***`` where it stands as a whole (not inside a longer run
    of letters and digits: a password "p" masked every p of the message, garbling it and spelling the password
    out, a new user's review)."""
    for secret in secrets:
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", "***", text)
    return text


def _masked(match: re.Match) -> str:
    """A password pattern's ``match`` with its ``password`` group, where not empty, as ``***``."""
    whole, start, end = match.group(0), *(k - match.start() for k in match.span("password"))
    return whole[:start] + ("***" if end > start else "") + whole[end:]


def redact_url(url: str) -> str:
    """``url`` with every password in it (url_secrets) replaced by ``***``, whether or not SQLAlchemy can parse
    it: the password's own place, nothing else."""
    for pattern in (_PASSWORD_IN_URL, _PASSWORD_IN_QUERY):
        url = pattern.sub(_masked, url)
    return url


def describe_failure(url: str, error: BaseException) -> str:
    """What to tell a person when the database at ``url`` cannot be opened: the error without the
    URL's passwords, wherever the driver's message repeats them."""
    text = f"{type(error).__name__}: {error}" if not isinstance(error, InputError) else str(error)
    return _redacted(text.replace(url, redact_url(url)), url_secrets(url))


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def parse_url(url: str) -> URL:
    """``url`` parsed; InputError naming the setting to fix where SQLAlchemy cannot parse it."""
    try:
        return make_url(url)
    except ArgumentError:
        raise InputError(
            f"cannot parse database URL {redact_url(url)!r}",
            fix=f"set {config.DB_URL} to e.g. sqlite:///path/to/file.db or postgresql+psycopg://user@host/db",
        ) from None


def sqlite_file(parsed: URL) -> Path | None:
    """The file a SQLite URL names; None for another database, or one in memory."""
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).expanduser()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; creates the SQLite file's folder when needed.

    Raises InputError for a URL SQLAlchemy cannot parse or whose driver is
    not installed, naming the setting to fix.
    """
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        file = sqlite_file(parsed)
        if file is not None:
            file.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            parsed,
            pool_size=SQLITE_POOL,
            connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "factory": TurnConnection},
            json_serializer=dumps,
            json_deserializer=loads,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(parsed, pool_pre_ping=True, json_serializer=dumps, json_deserializer=loads)
    except Exception as exc:  # missing driver module, bad option
        raise InputError(
            f"cannot use database URL {redact_url(url)} ({_redacted(str(exc), url_secrets(url))})",
            fix="install the driver it names (PostgreSQL: psycopg[binary]) or fix the URL",
        ) from None
