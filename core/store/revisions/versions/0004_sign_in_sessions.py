"""Schema version 4: server-side sign-in sessions (a hashed random token per signed-in browser).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sign_in_sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("last_seen_at", WHEN, nullable=False),
    )
    op.create_index("ix_sign_in_sessions_user", "sign_in_sessions", ["user_id"])
