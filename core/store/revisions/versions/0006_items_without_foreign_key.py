"""Schema version 6: the items table without its foreign key to projects.

PostgreSQL checks a foreign key row by row (a lookup in projects per inserted item), and that check was
more than half of saving 10^6 prepared items: 10.0 s against 4.1 s for the same COPY without it
(benchmarks/scale.md). Items are written by one writer only, Store.save_items, for a project it has
just read, and removed by Store.delete_project with the project in one transaction, so the key guarded
nothing those two do not. The other tables keep theirs.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

NAMES = {"fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s"}
"""Names for the unnamed keys of version 1, so that SQLite's batch mode (a copy of the table) can drop one."""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("items_project_id_fkey", "items", type_="foreignkey")
        return
    with op.batch_alter_table("items", recreate="always", naming_convention=NAMES) as batch:
        batch.drop_constraint("fk_items_project_id_projects", type_="foreignkey")
