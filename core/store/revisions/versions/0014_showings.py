"""Schema version 14: showing tokens in the database (core.services.showings), no longer in one process.

A row per item put on a grader's card: the random single-use token the press names it by, the project, the
grader, the item's position and id, whether it was an earlier grade reopened for review, the server's time
of release (which bounds the viewing time), when a press with it was stored, and its expiry (the
reservation's TTL). The Grade page, the fast grading route and the HTTP API check each other's tokens, on
any replica and after a restart. Expired rows are purged when a new one is written.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "showings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token", sa.String(32), nullable=False, unique=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("grader", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("item_id", sa.String(500), nullable=False),
        sa.Column("reviewing", sa.Boolean, nullable=False),
        sa.Column("released_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.Column("used_at", WHEN, nullable=True),
    )
    op.create_index("ix_showings_project_grader", "showings", ["project_id", "grader", "id"])
    op.create_index("ix_showings_expires", "showings", ["expires_at"])


def downgrade() -> None:
    op.drop_table("showings")
