"""Schema version 13: a grade given on a side-by-side card records the side its response was shown on.

A comparison project graded side by side shows every target's response to an item on one card, in an order
drawn at random for the item (core.services.side_by_side.card_order). ``grades.side`` is the 0-based side
(left to right) of the graded response, so the order each grader saw is recorded with their grades; it is
NULL for a grade given to one response alone (every one-model grade stored before).

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("grades") as batch:
        batch.add_column(sa.Column("side", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("grades") as batch:
        batch.drop_column("side")
