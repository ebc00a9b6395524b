"""The lengths the database stores, checked once at the edge so SQLite and PostgreSQL accept the same values.

SQLite stores a string of any length in a ``VARCHAR(200)`` column; PostgreSQL
refuses it with a ``DataError``. The schema (core/store) takes its column
lengths from here, and the edges (uploads, sign-in, account, project and
scale forms, the grade functions) refuse longer values with an InputError
before anything reaches the database.
"""

from __future__ import annotations

from core.errors import InputError

MAX_NAME_CHARS = 200
"""Account, grader and project names."""
MAX_ID_CHARS = 500
"""An item's id."""
MAX_LABEL_CHARS = 200
"""A grading scale's label."""
MAX_EMAIL_CHARS = 320
"""An e-mail address (RFC 3696: 64 + 1 + 255); also the audit trail's actor column."""
MAX_PASSWORD_CHARS = 1024
"""Longer passwords are refused before hashing (no one types more; hashing megabytes costs time)."""
MAX_FILE_NAME_CHARS = 500
"""An uploaded file's name."""
MAX_ADDRESS_CHARS = 64
"""A client's IP address as Streamlit reports it (IPv6 with a zone fits)."""

MAX_REQUEST_KEY_CHARS = 128
"""An Idempotency-Key a client sends with a create (a UUID is 36; Stripe allows 255)."""


def check_length(value: str, limit: int, what: str, **where) -> str:
    """``value`` if it has at most ``limit`` characters; else an InputError naming ``what`` (and ``where``)."""
    if len(value) > limit:
        raise InputError(
            f"{what} has {len(value):,} characters, more than the {limit:,} allowed",
            fix=f"shorten {what} to at most {limit:,} characters",
            **where,
        )
    return value
