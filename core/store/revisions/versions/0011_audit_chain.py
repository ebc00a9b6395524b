"""Schema version 11: each audit event, once sealed, holds the hash of the chain up to it.

``audit_events.chain_hash`` is SHA-256 over the previous sealed event's chain hash and this event's own
fields (core.store.audit_chain): changing, removing or inserting an earlier event breaks every later link,
which ``core.store.audit_chain.verify`` finds. Events stored before are NULL until the first seal, which
chains them from the start.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("audit_events") as batch:
        batch.add_column(sa.Column("chain_hash", sa.String(64), nullable=True))
