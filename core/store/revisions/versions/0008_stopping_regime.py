"""Schema version 8: every project made before stopping regimes existed keeps the rule it was made with.

Projects now choose how grading may stop (core.stats.stopping: planned looks by default, or any grade with
the anytime-valid interval). A project stored before had the anytime interval, so its settings gain
``"regime": "anytime"``; new projects take the default. No table changes.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

PROJECTS = sa.table("projects", sa.column("id", sa.Integer), sa.column("settings", sa.JSON))


def upgrade() -> None:
    bind = op.get_bind()
    for project_id, settings in bind.execute(sa.select(PROJECTS.c.id, PROJECTS.c.settings)).all():
        settings = dict(settings or {})
        if "regime" not in settings:
            settings["regime"] = "anytime"
            bind.execute(PROJECTS.update().where(PROJECTS.c.id == project_id).values(settings=settings))
