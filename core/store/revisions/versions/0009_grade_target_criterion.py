"""Schema version 9: a grade names the target model and the rubric criterion it belongs to.

A grade's key becomes (project, position, target, criterion, grader), designed once for comparing models
(several targets' responses to one item) and for rubrics (several questions per response). Both columns
are "" for the one-model, one-question projects that every grade stored before belongs to, so those
grades keep their meaning unchanged.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("grades") as batch:
        batch.add_column(sa.Column("target", sa.String(200), nullable=False, server_default=""))
        batch.add_column(sa.Column("criterion", sa.String(200), nullable=False, server_default=""))
