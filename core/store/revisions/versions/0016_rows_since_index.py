"""Schema version 16: indexes of a project's grades and skips in id order, so that reading the rows added since
the last read costs their number.

The grading queue's cache (core.store.grade_cache) reads a project's grade and skip rows with ids above the
highest it has seen, on every batch of claims. With only the (project, position) indexes SQLite read every row of
the project and sorted them by id: 0.36 ms at 6,000 grades, a third of a press's SQL time under 100 graders
(benchmarks/concurrent_graders.md); with (project, id), 0.01 ms. PostgreSQL uses the same indexes.

Revision ID: 0016
Revises: 0015
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_grades_project_id", "grades", ["project_id", "id"])
    op.create_index("ix_skips_project_id", "skips", ["project_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_skips_project_id", "skips")
    op.drop_index("ix_grades_project_id", "grades")
