"""Schema version 20: where each account last signed in (``sign_in_addresses``).

The account's own back-off (core.services.auth.ACCOUNT) held every sign-in at a name, so anyone who knew it
could keep its owner out with a wrong password a minute (a security note). The address buckets an account
signed in from are kept, with the time of the last success there; the account's back-off does not hold a
sign-in from one of them (that address's own back-off still does).

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_addresses",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("address", sa.String(64), primary_key=True),
        sa.Column("signed_in_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sign_in_addresses")
