"""Schema version 15: a partial index of the retracted grades, so that counting them costs their number.

The grading queue's cache (core.store.grade_cache) counts a project's retracted grades on every card, to learn
whether a grade was changed or undone since its last read. Without an index of them that count read every
grade row of the project, a cost growing with the grades (about 1.8 ms a card at 9,000 grades); the partial
index holds only the retracted rows, a few, on SQLite and PostgreSQL alike.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

RETRACTED = sa.text("retracted_at IS NOT NULL")


def upgrade() -> None:
    op.create_index("ix_grades_retracted", "grades", ["project_id"], sqlite_where=RETRACTED, postgresql_where=RETRACTED)


def downgrade() -> None:
    op.drop_index("ix_grades_retracted", "grades")
