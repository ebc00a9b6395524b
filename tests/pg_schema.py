"""A throw-away schema on the test PostgreSQL server ($ACTIVEGRADE_TEST_PG_URL, which scripts/test.sh
starts), shared by the store and reliability tests; the test skips when the variable is unset."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text

PG_URL_ENV = "ACTIVEGRADE_TEST_PG_URL"


@contextmanager
def throwaway_schema_url() -> Iterator[str]:
    """A database URL whose tables live in a fresh schema, dropped with everything in it afterwards."""
    base = os.environ.get(PG_URL_ENV)
    if not base:
        pytest.skip(f"{PG_URL_ENV} is not set (scripts/test.sh starts PostgreSQL)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()
