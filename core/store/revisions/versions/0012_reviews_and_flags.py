"""Schema version 12: reviewers' final grades and graders' flags.

``reviews``: the grade a reviewer settled an item with (core.services.review), keyed like a grade without
its grader: (project, position, target, criterion). A changed review retracts the earlier one
(``retracted_at``), so every decision stays in the table. ``flags``: an item a grader sent to review from
the grading card, with the grader's note. Both "" target and criterion in one-model, one-question projects.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def _keyed(name: str, *columns: sa.Column) -> None:
    op.create_table(
        name,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("target", sa.String(200), nullable=False, server_default=""),
        sa.Column("criterion", sa.String(200), nullable=False, server_default=""),
        *columns,
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index(f"ix_{name}_project_position", name, ["project_id", "position"])


def upgrade() -> None:
    _keyed(
        "reviews",
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("retracted_at", WHEN, nullable=True),
    )
    _keyed(
        "flags",
        sa.Column("grader", sa.String(200), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
    )
