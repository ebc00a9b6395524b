"""Schema version 1: projects, their input files, prepared items, grades and skips.

Frozen: written out as that version created it, never derived from today's models.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("progress_done", sa.Integer, nullable=False),
        sa.Column("progress_total", sa.Integer, nullable=False),
        sa.Column("progress_message", sa.Text, nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
    )
    op.create_table(
        "input_files",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("project_id", "role"),
    )
    op.create_table(
        "items",
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.String(500), nullable=False),
        sa.Column("stratum", sa.Integer, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
    )
    op.create_table(
        "grades",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("grader", sa.String(200), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("seconds", sa.Float, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("retracted_at", WHEN, nullable=True),
    )
    op.create_index("ix_grades_project_position", "grades", ["project_id", "position"])
    op.create_table(
        "skips",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("grader", sa.String(200), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_skips_project_position", "skips", ["project_id", "position"])
