"""Schema version 19: a project remembers the Idempotency-Key it was created with (``request_key``).

A pipeline whose answer to POST projects was lost (a timeout on a large upload) could not tell whether the
project was made: sent again, it was told the name was taken (an integrator's note). The key a client sends
with its create (the IETF's Idempotency-Key header, as Stripe's API takes it) is kept, unique; the same create
sent again with it is answered with the project it made. Projects made before keep NULL.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("projects", sa.Column("request_key", sa.String(128), nullable=True))
    op.create_index("ix_projects_request_key", "projects", ["request_key"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_projects_request_key", table_name="projects")
    with op.batch_alter_table("projects") as batch:  # SQLite drops a column by copying the table
        batch.drop_column("request_key")
