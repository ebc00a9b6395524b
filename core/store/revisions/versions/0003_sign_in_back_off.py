"""Schema version 3: the sign-in back-off table; on SQLite, project ids are never reused (AUTOINCREMENT).

SQLite cannot add AUTOINCREMENT to a table, so the projects table is rebuilt (Alembic's batch mode:
create the new table, copy every row, drop the old one, rename) while core.store.migrations keeps
foreign keys off, so dropping the old table deletes nothing that refers to it. The sequence starts
after the highest project id ever used, audit events of deleted projects included. PostgreSQL's
sequences never reuse an id.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_failures",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("address", sa.String(64), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_failed_at", sa.DateTime(timezone=True), nullable=False),
    )
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    highest = bind.scalar(
        sa.text(
            "SELECT max(coalesce((SELECT max(id) FROM projects), 0),"
            " coalesce((SELECT max(project_id) FROM audit_events), 0))"
        )
    )
    with op.batch_alter_table("projects", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
        pass
    bind.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = 'projects'"))
    bind.execute(sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES ('projects', :seq)"), {"seq": highest})
