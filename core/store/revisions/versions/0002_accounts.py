"""Schema version 2: accounts, project assignments, reservations and the audit trail.

Frozen: written out as that version created it, never derived from today's models.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("email", sa.String(320), nullable=True, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("password_hash", sa.Text, nullable=True),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "memberships",
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_table(
        "reservations",
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("slot", sa.Integer, primary_key=True),
        sa.Column("grader", sa.String(200), nullable=False),
        sa.Column("reserved_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
    )
    op.create_index("ix_reservations_project_grader", "reservations", ["project_id", "grader"])
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", WHEN, nullable=False),
        sa.Column("actor", sa.String(320), nullable=False),
        sa.Column("action", sa.String(50), nullable=False),
        sa.Column("project_id", sa.Integer, nullable=True),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    op.create_index("ix_audit_events_project", "audit_events", ["project_id"])
