"""Schema version 17: every comparison made before card keys existed gets one, and its cards are shown afresh.

A side-by-side card's order is drawn from the project's seed, the item's position and, since this version, a
secret card key made with the project (core.services.side_by_side.card_order; ProjectSettings.card_key).
Without a key the order follows from the seed, which is 0 by default, and the code: a security review named
the model behind every response of a comparison made before. Each such project gains a key here, and its
showings are dropped: a card shown in the old order is shown again in the new one before its grade is taken
(a press on a dropped token is refused and the page loads the card again), so no grade is read in an order
the grader did not see. Grades already given keep the side they were given on. No table changes.

Revision ID: 0017
Revises: 0016
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

PROJECTS = sa.table("projects", sa.column("id", sa.Integer), sa.column("settings", sa.JSON))
SHOWINGS = sa.table("showings", sa.column("project_id", sa.Integer))


def upgrade() -> None:
    bind = op.get_bind()
    for project_id, settings in bind.execute(sa.select(PROJECTS.c.id, PROJECTS.c.settings)).all():
        settings = dict(settings or {})
        if settings.get("targets") and not settings.get("card_key"):
            settings["card_key"] = secrets.token_hex(16)
            bind.execute(PROJECTS.update().where(PROJECTS.c.id == project_id).values(settings=settings))
            bind.execute(SHOWINGS.delete().where(SHOWINGS.c.project_id == project_id))


def downgrade() -> None:
    """The keys stay: an older version reads the settings it knows."""
