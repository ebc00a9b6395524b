"""Where the database lives and how to connect to it.

SQLite (the default, a file under ``./.activegrade/``) runs in WAL mode with
a busy timeout so that the app's background preparation job and several
browser sessions can write side by side. PostgreSQL is used as given by URL
(``postgresql+psycopg://user@host/db``).
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from core import config
from core.errors import InputError

DEFAULT_DIR = Path(".activegrade")
BUSY_TIMEOUT_MS = 30_000


def database_url(configured: str | None = None) -> str:
    """The URL to use: ``configured`` if given, else $ACTIVEGRADE_DB_URL, else the default file."""
    url = configured or config.config().db_url
    if url:
        return url
    return f"sqlite:///{(DEFAULT_DIR / 'activegrade.db').resolve()}"


_PASSWORD_IN_URL = re.compile(r"(?P<head>://[^/@]*?:)(?P<password>[^/]*)@")
"""``scheme://user:password@host``: the password is what follows the first colon after ``//`` up to the
last ``@`` before the path (a password may itself hold ``@`` or ``:``)."""


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, whether or not SQLAlchemy can parse it."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - unparseable: fall back to the URL's generic shape
        return _PASSWORD_IN_URL.sub(lambda m: m.group("head") + "***@", url)


def describe_failure(url: str, error: BaseException) -> str:
    """What to tell a person when the database at ``url`` cannot be opened: the error without the
    URL's password, wherever the driver's message repeats it."""
    text = f"{type(error).__name__}: {error}" if not isinstance(error, InputError) else str(error)
    try:
        password = make_url(url).password
    except Exception:  # noqa: BLE001
        password = _PASSWORD_IN_URL.search(url).group("password") if _PASSWORD_IN_URL.search(url) else None
    text = text.replace(url, redact_url(url))
    return text.replace(str(password), "***") if password else text


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; creates the SQLite file's folder when needed.

    Raises InputError for a URL SQLAlchemy cannot parse or whose driver is
    not installed, naming the setting to fix.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(
            f"cannot parse database URL {redact_url(url)!r}",
            fix=f"set {config.DB_URL} to e.g. sqlite:///path/to/file.db or postgresql+psycopg://user@host/db",
        ) from None
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:":
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except Exception as exc:  # missing driver module, bad option
        raise InputError(
            f"cannot use database URL {parsed.render_as_string(hide_password=True)} ({exc})",
            fix="install the driver it names (PostgreSQL: psycopg[binary]) or fix the URL",
        ) from None
