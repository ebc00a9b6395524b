"""Schema version 5: the jobs table (preparation, its chunks and simulations, claimed by workers).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=True),
        sa.Column("parent_id", sa.Integer, sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=True),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("uses_model", sa.Boolean, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("checkpoint", sa.JSON, nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("progress_done", sa.Integer, nullable=False),
        sa.Column("progress_total", sa.Integer, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("worker", sa.String(200), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("heartbeat_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
    )
    op.create_index("ix_jobs_state", "jobs", ["state", "id"])
    op.create_index("ix_jobs_project", "jobs", ["project_id", "kind"])
    op.create_index("ix_jobs_parent", "jobs", ["parent_id"])
