"""Databases as released versions made them, before Alembic: the SQL in tests/data/schemas."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

SCHEMAS = Path(__file__).parent / "data" / "schemas"


def create_legacy_schema(engine: Engine, version: int) -> None:
    """The empty tables (and schema_version row) of version ``version`` (1 or 2), on SQLite or PostgreSQL."""
    path = SCHEMAS / f"v{version}.{engine.dialect.name}.sql"
    body = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("--"))
    with engine.begin() as c:
        for statement in body.split(";"):
            if statement.strip():
                c.execute(text(statement))
