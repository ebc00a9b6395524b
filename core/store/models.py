"""The database schema, as SQLAlchemy 2 declarative models.

One row per project, per uploaded input file, per prepared item, per grade
and per skip. Grades are never deleted: an undo or a changed grade sets
``retracted_at`` on the old row, so the history of every decision stays
auditable. The ``grader`` column is a plain name today; accounts (issue 5)
can add a users table and point to it without rewriting grades.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from core.inputs.limits import (
    MAX_ADDRESS_CHARS,
    MAX_EMAIL_CHARS,
    MAX_FILE_NAME_CHARS,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    MAX_REQUEST_KEY_CHARS,
)


def utcnow() -> datetime:
    """Timezone-aware now, the one clock every timestamp column uses."""
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored one is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def aware_or_none(moment: datetime | None) -> datetime | None:
    """`aware` of a nullable column: None stays None."""
    return None if moment is None else aware(moment)


MAX_ROW_ID = 2**63 - 1
"""The largest id a row can have (SQLite's INTEGER, PostgreSQL's bigint): a larger number names no row."""


def storable_id(value: int) -> bool:
    """Whether ``value`` can be a row's id; a lookup by a number outside that range overflows the driver."""
    return 0 < value <= MAX_ROW_ID


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, datetime: DateTime(timezone=True)}


class Project(Base):
    """A grading project: its settings and the state of its preparation."""

    __tablename__ = "projects"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # new -> preparing -> ready, or failed (error holds the message)
    status: Mapped[str] = mapped_column(String(20), default="new")
    progress_done: Mapped[int] = mapped_column(default=0)
    progress_total: Mapped[int] = mapped_column(default=0)
    progress_message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str] = mapped_column(Text, default="")
    # heartbeat of the preparation job: a stale one means the job died
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    request_key: Mapped[str | None] = mapped_column(String(MAX_REQUEST_KEY_CHARS), unique=True, index=True)
    """The Idempotency-Key the project was created with, if any (revision 0019): the same create sent again
    with it is answered with this project."""
    # SQLite would otherwise give a deleted project's id to the next one, which then inherits its
    # audit events (PostgreSQL's sequences never reuse an id)
    __table_args__ = {"sqlite_autoincrement": True}


def content_digest(context) -> str:
    """The SHA-256 (hex) of the content an input file row is inserted with (a column default's context)."""
    return hashlib.sha256(context.get_current_parameters()["content"]).hexdigest()


class InputFile(Base):
    """An uploaded pool or samples file, kept so preparation can be rerun."""

    __tablename__ = "input_files"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(20))  # "pool" or "samples"
    name: Mapped[str] = mapped_column(String(MAX_FILE_NAME_CHARS))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    digest: Mapped[str] = mapped_column(String(64), default=lambda context: content_digest(context))
    """SHA-256 of ``content`` (hex), set on insert: Store.input_files keeps files by it (revision 0007)."""
    __table_args__ = (UniqueConstraint("project_id", "role"),)


class Item(Base):
    """One prepared pool item; ``position`` is its 0-based row in the pool. No foreign key to projects
    (revision 0006: its row-by-row check was most of saving a large pool); Store.delete_project removes
    a project's items with it."""

    __tablename__ = "items"
    project_id: Mapped[int] = mapped_column(primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[str] = mapped_column(String(MAX_ID_CHARS))
    stratum: Mapped[int] = mapped_column()
    # every other column of the prepared row (prompt, response, entropy, ...)
    data: Mapped[dict[str, Any]] = mapped_column()


class Grade(Base):
    """One grade as submitted; ``retracted_at`` is set by undo or a later change.

    A grade is keyed by (project, position, target, criterion, grader): ``target`` names the model whose
    response was graded where a project compares several ("" in a one-model project), ``criterion`` the
    rubric question it answers ("" in a one-question project). Revision 0009 added both. ``side`` is the
    0-based side of a side-by-side card the response was shown on (None for a response graded alone;
    revision 0013).
    """

    __tablename__ = "grades"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column()
    target: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    criterion: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    side: Mapped[int | None] = mapped_column(nullable=True)
    value: Mapped[float] = mapped_column(Float)
    label: Mapped[str] = mapped_column(String(MAX_LABEL_CHARS))
    grader: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    comment: Mapped[str] = mapped_column(Text, default="")
    seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    retracted_at: Mapped[datetime | None] = mapped_column(nullable=True)
    graded_from: Mapped[int | None] = mapped_column(nullable=True)
    """The id of the grade this one continues (a change's of the grade it replaced, an undo's restored copy its
    original's, each that grade's own ``graded_from`` where it had one); None for a first grade. An item's place
    in the grading order is its grades' least ``grading_key`` (revision 0021)."""
    __table_args__ = (
        Index("ix_grades_project_position", "project_id", "position"),
        Index("ix_grades_project_id", "project_id", "id"),  # the rows added since: core.store.grade_cache
        Index(  # the few retracted rows alone: core.store.grade_cache counts them on every card (retracted_at:
            "ix_grades_retracted",  # SQLite's plan prefers it to ix_grades_project_id for that count)
            "project_id",
            "retracted_at",
            sqlite_where=text("retracted_at IS NOT NULL"),
            postgresql_where=text("retracted_at IS NOT NULL"),
        ),
    )


class Skip(Base):
    """An item a grader passed on; it goes back to the queue, ungraded."""

    __tablename__ = "skips"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column()
    grader: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    __table_args__ = (
        Index("ix_skips_project_position", "project_id", "position"),
        Index("ix_skips_project_id", "project_id", "id"),  # the rows added since: core.store.grade_cache
    )


def grading_key():
    """coalesce(graded_from, id): where a grade stands in the grading order (``Grade.graded_from``); ordered by
    it, then by id, an item comes at its first grade and a change or an undo keeps its place."""
    return func.coalesce(Grade.graded_from, Grade.id)


class Review(Base):
    """A reviewer's final grade of an item (core.services.review), keyed like a grade without its grader:
    (project, position, target, criterion). A changed review retracts the earlier one (``retracted_at``)."""

    __tablename__ = "reviews"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column()
    target: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    criterion: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    value: Mapped[float] = mapped_column(Float)
    label: Mapped[str] = mapped_column(String(MAX_LABEL_CHARS))
    reviewer: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    retracted_at: Mapped[datetime | None] = mapped_column(nullable=True)
    __table_args__ = (Index("ix_reviews_project_position", "project_id", "position"),)


class Flag(Base):
    """An item a grader sent to review from the grading card, with their note (revision 0012)."""

    __tablename__ = "flags"
    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column()
    target: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    criterion: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="", server_default="")
    grader: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    __table_args__ = (Index("ix_flags_project_position", "project_id", "position"),)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), unique=True)
    email: Mapped[str | None] = mapped_column(String(MAX_EMAIL_CHARS), unique=True, nullable=True)
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str | None] = mapped_column(Text, nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Membership(Base):
    __tablename__ = "memberships"
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Reservation(Base):
    __tablename__ = "reservations"
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    slot: Mapped[int] = mapped_column(Integer, primary_key=True)
    grader: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    reserved_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()
    __table_args__ = (Index("ix_reservations_project_grader", "project_id", "grader"),)


class AuditEvent(Base):
    __tablename__ = "audit_events"
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    actor: Mapped[str] = mapped_column(String(MAX_EMAIL_CHARS))
    action: Mapped[str] = mapped_column(String(50))
    project_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    chain_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """SHA-256 of the chain up to this event, once sealed (core.store.audit_chain); None until then."""
    __table_args__ = (Index("ix_audit_events_project", "project_id"),)


class SignInFailure(Base):
    """Failed sign-ins in a row for one account name from one client address (core.services.auth's back-off)."""

    __tablename__ = "sign_in_failures"
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), primary_key=True)
    address: Mapped[str] = mapped_column(String(MAX_ADDRESS_CHARS), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    last_failed_at: Mapped[datetime] = mapped_column()


class SignInAddress(Base):
    """An address (core.services.auth.address_bucket) an account signed in from, and when it last did: the
    account's own back-off does not hold a sign-in from there (core.services.auth.sign_in)."""

    __tablename__ = "sign_in_addresses"
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), primary_key=True)
    address: Mapped[str] = mapped_column(String(MAX_ADDRESS_CHARS), primary_key=True)
    signed_in_at: Mapped[datetime] = mapped_column()


class Job(Base):
    """Long work (preparing a project, a chunk of it, a simulation) waiting for or held by a worker.

    queued -> running -> done, or failed (``error`` holds the message). A running job whose
    ``heartbeat_at`` is older than the workers' expiry is taken over by another worker (``attempts``
    counts the starts); a job with unfinished children (``parent_id``: the chunks of a preparation)
    waits, queued, until they are done. ``checkpoint`` is what a job keeps to resume from,
    ``result`` what it hands on (a chunk's scores, a simulation's figures).
    """

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), nullable=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), nullable=True)
    state: Mapped[str] = mapped_column(String(20), default="queued")
    uses_model: Mapped[bool] = mapped_column(Boolean, default=False)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    checkpoint: Mapped[dict[str, Any]] = mapped_column(default=dict)
    result: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    progress_done: Mapped[int] = mapped_column(default=0)
    progress_total: Mapped[int] = mapped_column(default=0)
    message: Mapped[str] = mapped_column(Text, default="")
    attempts: Mapped[int] = mapped_column(default=0)
    error: Mapped[str] = mapped_column(Text, default="")
    worker: Mapped[str | None] = mapped_column(String(MAX_NAME_CHARS), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)
    __table_args__ = (
        Index("ix_jobs_state", "state", "id"),
        Index("ix_jobs_project", "project_id", "kind"),
        Index("ix_jobs_parent", "parent_id"),
    )


class SignInSession(Base):
    __tablename__ = "sign_in_sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    __table_args__ = (Index("ix_sign_in_sessions_user", "user_id"),)


class ApiToken(Base):
    """A personal API token (core.services.tokens): only its SHA-256 hash is stored; revoked ones are kept."""

    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    created_by: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(nullable=True)
    """When the token stops answering (schema 18); None: a token made before tokens expired."""
    __table_args__ = (Index("ix_api_tokens_user", "user_id"),)


class ShowingToken(Base):
    """An item put on a grader's card (core.services.showings): the single-use token a press names it by.

    Shared by the Grade page, the fast grading route and the HTTP API, so a token one of them issued is
    checked by any of them, on any replica, after a restart. ``released_at`` is the server's time the card
    was sent (it bounds the viewing time), ``used_at`` when a press with it was stored; a row is purged once
    ``expires_at`` (core.services.showings.TTL after release) has passed (revision 0014).
    """

    __tablename__ = "showings"
    id: Mapped[int] = mapped_column(primary_key=True)
    token: Mapped[str] = mapped_column(String(32), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    grader: Mapped[str] = mapped_column(String(MAX_NAME_CHARS))
    position: Mapped[int] = mapped_column()
    item_id: Mapped[str] = mapped_column(String(MAX_ID_CHARS))
    reviewing: Mapped[bool] = mapped_column(Boolean)
    released_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(nullable=True)
    __table_args__ = (
        Index("ix_showings_project_grader", "project_id", "grader", "id"),
        Index("ix_showings_expires", "expires_at"),
    )
