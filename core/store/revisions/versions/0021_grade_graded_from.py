"""Schema version 21: a grade remembers the grade it continues (``graded_from``), so a change keeps its item's
place in the grading order.

The grading order was the grades' ids, and a change is a new row: after the stop, correcting a grade (or
correcting it and undoing the correction) moved the item past the stop, which then came a grade sooner and
reported the estimate without it (a new user's review: 0.5219 where the grades export gives 0.5283). A change's
row keeps the id its replaced grade's item was graded from, an undo's restored copy its original's; an item's
place is its grades' least coalesce(graded_from, id). Grades made before keep NULL: their own ids.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("grades", sa.Column("graded_from", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("grades") as batch:  # SQLite drops a column by copying the table
        batch.drop_column("graded_from")
