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

from sqlalchemy import Connection, Engine, MetaData, inspect, select
from sqlalchemy.schema import CreateTable

from core.store import accounts
from core.store.models import Base, Project, SchemaVersion


def _add_accounts(connection: Connection) -> None:
    """Version 2: users, memberships, reservations and audit events (core/store/accounts.py)."""
    Base.metadata.create_all(connection, tables=accounts.TABLES)


def _sign_in_back_off_and_unique_project_ids(connection: Connection) -> None:
    """Version 3: the sign-in back-off table; on SQLite, project ids never reused (AUTOINCREMENT).

    SQLite cannot add AUTOINCREMENT to a table, so the projects table is rebuilt the way SQLite's
    documentation prescribes (https://sqlite.org/lang_altertable.html#otheralter): foreign keys
    off (outside any transaction), then in one transaction create the new table, copy every row,
    drop the old one, rename the new one, check the foreign keys. Grades, items and every other
    table keep their rows: they refer to projects by name, which the new table takes over. The
    sequence starts after the highest project id ever used, audit events of deleted projects included.
    """
    Base.metadata.create_all(connection, tables=[accounts.SignInFailure.__table__])
    if connection.dialect.name != "sqlite":
        return
    raw = connection.connection.driver_connection
    if raw.in_transaction:  # nothing was written on this connection yet; be sure before switching keys off
        raw.commit()
    raw.execute("PRAGMA foreign_keys=OFF")  # the connection is discarded afterwards (upgrade disposes the pool)
    raw.execute("BEGIN")
    table = Project.__table__.to_metadata(MetaData(), name="projects_rebuilt")
    raw.execute(str(CreateTable(table).compile(dialect=connection.dialect)))
    columns = ", ".join(c.name for c in Project.__table__.columns)
    raw.execute(f"INSERT INTO projects_rebuilt ({columns}) SELECT {columns} FROM projects")
    raw.execute("DROP TABLE projects")
    raw.execute("ALTER TABLE projects_rebuilt RENAME TO projects")
    highest = raw.execute(
        "SELECT max(coalesce((SELECT max(id) FROM projects), 0), coalesce((SELECT max(project_id) FROM audit_events), 0))"
    ).fetchone()[0]
    raw.execute("DELETE FROM sqlite_sequence WHERE name = 'projects'")
    raw.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('projects', ?)", (highest,))
    if raw.execute("PRAGMA foreign_key_check").fetchall():
        raw.rollback()
        raise RuntimeError("rebuilding the projects table broke a foreign key; the database is unchanged")


# MIGRATIONS[k] upgrades a database from version k + 1 to k + 2.
# Version 1 is the schema the first release created.
MIGRATIONS: list[Callable[[Connection], None]] = [_add_accounts, _sign_in_back_off_and_unique_project_ids]
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
    engine.dispose()  # no connection a migration changed (e.g. foreign keys off) serves the app afterwards
    return version
