"""Schema creation and upgrade with Alembic, run by the app itself on every start.

Every schema change is one frozen revision under ``core/store/revisions/versions/``,
written out as it changes the schema, never derived from today's models, so
that a database of any released version upgrades step by step. A new database
runs every revision from the first. A database made before Alembic carries the
``schema_version`` table of versions 1 and 2: it is stamped with the matching
revision (0001 or 0002), that table is dropped, and it upgrades like any other.
Everything runs in one transaction; on PostgreSQL an advisory lock keeps two
processes that start at once from upgrading together.

To change the schema: edit ``core/store/models.py``, then add a revision file
beside the others (``revision`` one more than the head, ``down_revision`` the
head) whose ``upgrade()`` makes the change with ``alembic.op``; batch mode is on,
so ``op.batch_alter_table`` rebuilds a SQLite table where ALTER cannot.
tests/test_migrations.py checks that the revisions build exactly the models.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, inspect, text

from core.errors import InputError

logger = logging.getLogger(__name__)

REVISIONS = Path(__file__).with_name("revisions")
LEGACY_VERSIONS = {1: "0001", 2: "0002"}
"""The revision matching each version of the schema_version table that came before Alembic."""
_LOCK_KEY = 0x4163_7469_7665  # PostgreSQL advisory lock for schema upgrades ("Active")


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(REVISIONS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def head() -> str:
    """The newest revision this code knows (read once: its scripts do not change while the process runs)."""
    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at, or None for a database never set up by Alembic."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> str | None:
    """Bring the database to ``head()``; returns the revision it was at before (None if it was new).

    Raises InputError when the database is newer than this code, rather than
    guessing at a schema it does not know.
    """
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:  # outside any transaction: a rebuilt table's old copy is dropped without cascading
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        try:
            with connection.begin():
                before = _upgrade(connection)
                if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                    raise RuntimeError("the schema upgrade broke a foreign key; the database is unchanged")
        finally:
            if sqlite:
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                connection.commit()
    if before != head():  # any process may be the one that migrates (docs/deployment.md, Upgrades): it says so
        logger.info("database schema upgraded from %s to %s", before or "nothing (a new database)", head())
    return before


def _upgrade(connection: Connection) -> str | None:
    """upgrade() inside its transaction."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    before = current_revision(connection)
    if before is None and inspect(connection).has_table("schema_version"):
        legacy = connection.scalar(text("SELECT max(version) FROM schema_version"))
        if legacy not in LEGACY_VERSIONS:
            raise _newer(f"schema version {legacy}")
        before = LEGACY_VERSIONS[legacy]
        command.stamp(_config(connection), before)
        connection.execute(text("DROP TABLE schema_version"))
    if before is not None:
        try:
            ScriptDirectory.from_config(_config()).get_revision(before)
        except CommandError:
            raise _newer(f"revision {before}") from None
    command.upgrade(_config(connection), "head")

    return before


def _newer(what: str) -> InputError:
    """The refusal of a database a later ActiveGrade upgraded: one line for the CLI and the page, no traceback."""
    return InputError(
        f"the database is at {what}, newer than this ActiveGrade (knows up to revision {head()})",
        fix="upgrade ActiveGrade, or point $ACTIVEGRADE_DB_URL (--db-url) at a database this version made",
    )
