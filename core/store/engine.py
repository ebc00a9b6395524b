"""Where the database lives and how to connect to it.

SQLite (the default, a file under ``./.activegrade/``) runs in WAL mode with
a busy timeout so that the app's background preparation job and several
browser sessions can write side by side. PostgreSQL is used as given by URL
(``postgresql+psycopg://user@host/db``).
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from core.errors import InputError

URL_ENV = "ACTIVEGRADE_DB_URL"
DEFAULT_DIR = Path(".activegrade")
BUSY_TIMEOUT_MS = 30_000


def database_url(configured: str | None = None) -> str:
    """The URL to use: ``configured`` if given, else $ACTIVEGRADE_DB_URL, else the default file."""
    url = configured or os.environ.get(URL_ENV)
    if url:
        return url
    return f"sqlite:///{(DEFAULT_DIR / 'activegrade.db').resolve()}"


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
    except ArgumentError as exc:
        raise InputError(
            f"cannot parse database URL {url!r} ({exc})",
            fix=f"set {URL_ENV} to e.g. sqlite:///path/to/file.db or postgresql+psycopg://user@host/db",
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
