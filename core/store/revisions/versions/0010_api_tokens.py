"""Schema version 10: personal API tokens (a hashed random token per token a user or an admin created).

A token stands for its account in the HTTP API (core/api): the same role and project assignments, so a
disabled account's tokens stop working at once. Only the token's SHA-256 hash is stored, as for sign-in
sessions; ``revoked_at`` keeps a revoked token's row (and its name) for the Team page and the audit trail.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("last_used_at", WHEN, nullable=True),
        sa.Column("revoked_at", WHEN, nullable=True),
    )
    op.create_index("ix_api_tokens_user", "api_tokens", ["user_id"])
