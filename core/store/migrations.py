"""Schema creation and upgrade, run by the app itself on every start.

A fresh database gets the current models' tables in one go and is stamped
with the latest version (the same recipe Alembic recommends: create_all, then
stamp head). An existing database runs, in order, every migration above its
stored version, each in its own transaction. To change the schema: edit the
models, then append a function to MIGRATIONS that brings an existing database
from the previous version to the new one (e.g. ``ALTER TABLE ... ADD COLUMN``).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, Engine, inspect, select

from core.store import accounts, sessions
from core.store.models import Base, SchemaVersion


def _add_accounts(connection: Connection) -> None:
    """Version 2: users, memberships, reservations and audit events (core/store/accounts.py)."""
    Base.metadata.create_all(connection, tables=accounts.TABLES)


def _add_sign_in_sessions(connection: Connection) -> None:
    """Version 3: server-side sign-in sessions (core/store/sessions.py)."""
    Base.metadata.create_all(connection, tables=sessions.TABLES)


# MIGRATIONS[k] upgrades a database from version k + 1 to k + 2.
# Version 1 is the schema the first release created.
MIGRATIONS: list[Callable[[Connection], None]] = [_add_accounts, _add_sign_in_sessions]
LATEST = 1 + len(MIGRATIONS)


def current_version(connection: Connection) -> int | None:
    """The stored schema version, or None for a database never set up."""
    if not inspect(connection).has_table(SchemaVersion.__tablename__):
        return None
    return connection.scalar(select(SchemaVersion.version))


def _stamp(connection: Connection, version: int) -> None:
    connection.execute(SchemaVersion.__table__.delete())
    connection.execute(SchemaVersion.__table__.insert().values(version=version))


def upgrade(engine: Engine) -> int:
    """Bring the database to LATEST; returns the version it was at before (0 if new).

    Raises RuntimeError when the database is newer than this code, rather
    than guessing at a schema it does not know.
    """
    with engine.begin() as connection:
        version = current_version(connection)
        if version is None:
            Base.metadata.create_all(connection)
            _stamp(connection, LATEST)
            return 0
    if version > LATEST:
        raise RuntimeError(
            f"the database is at schema version {version}, newer than this ActiveGrade "
            f"(knows up to {LATEST}); upgrade ActiveGrade"
        )
    for step in range(version, LATEST):
        with engine.begin() as connection:
            MIGRATIONS[step - 1](connection)
            _stamp(connection, step + 1)
    return version
