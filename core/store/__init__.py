"""Persistence: SQLAlchemy models, engine setup, schema upgrade and the read/write functions.

Nothing outside this package issues SQL. Open a database with
``Store.open(url)``; the default is a SQLite file under ``./.activegrade/``,
overridden by ``$ACTIVEGRADE_DB_URL`` or an explicit URL (PostgreSQL:
``postgresql+psycopg://user@host/db``).
"""

from core.store.engine import database_url, make_engine
from core.store.migrations import head, upgrade
from core.store.store import GRADE_COLUMNS, UNREADABLE, ProjectInfo, Store, json_safe

__all__ = [
    "GRADE_COLUMNS",
    "ProjectInfo",
    "Store",
    "UNREADABLE",
    "database_url",
    "json_safe",
    "head",
    "make_engine",
    "upgrade",
]
