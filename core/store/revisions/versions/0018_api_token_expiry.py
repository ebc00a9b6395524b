"""Schema version 18: an API token expires (``expires_at``), as the tokens of GitHub and GitLab do.

A token stood for its account until someone revoked it, so one copied into a forgotten script or a leaked CI
log stayed good for years (an attacker's note). A token made from now on carries the moment it stops
answering (core.services.tokens.DEFAULT_DAYS after its creation unless its maker says otherwise). The tokens
made before keep ``expires_at`` NULL, so no running pipeline stops on an upgrade; the Team page and
`activegrade tokens list` show them as never expiring, to be replaced.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:  # SQLite drops a column by copying the table
        batch.drop_column("expires_at")
