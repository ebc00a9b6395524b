"""Schema version 16: indexes of a project's grades and skips in id order, so that reading the rows added since
the last read costs their number.

The grading queue's cache (core.store.grade_cache) reads a project's grade and skip rows with ids above the
highest it has seen, on every batch of claims. With only the (project, position) indexes SQLite read every row of
the project and sorted them by id: 0.55 ms at 6,000 grades, the largest part of a press's SQL time under 100
graders (benchmarks/concurrent_graders.md); with (project, id), 0.02 ms. The cache's count of the retracted
grades then took the new index, reading every grade row (0.9 ms), so the partial index of the retracted rows
(0015) holds their retraction time too: SQLite's plan takes it, as before (the counts 0.16 ms, 0.22 before).
PostgreSQL uses the same indexes.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


RETRACTED = sa.text("retracted_at IS NOT NULL")


def upgrade() -> None:
    op.create_index("ix_grades_project_id", "grades", ["project_id", "id"])
    op.create_index("ix_skips_project_id", "skips", ["project_id", "id"])
    _retracted_index(["project_id", "retracted_at"])


def downgrade() -> None:
    _retracted_index(["project_id"])
    op.drop_index("ix_skips_project_id", "skips")
    op.drop_index("ix_grades_project_id", "grades")


def _retracted_index(columns: list[str]) -> None:
    """0015's partial index of the retracted grades, made again on ``columns``."""
    op.drop_index("ix_grades_retracted", "grades")
    op.create_index("ix_grades_retracted", "grades", columns, sqlite_where=RETRACTED, postgresql_where=RETRACTED)
