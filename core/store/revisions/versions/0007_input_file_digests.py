"""Schema version 7: each input file's SHA-256 digest, so that a Store keeps the files it read by their
content (Store.input_files): every chunk of a preparation reads the project's uploads, and at 10^6 items
that was 61 MB from the database per chunk.

Revision ID: 0007
Revises: 0006
"""

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

FILES = sa.table("input_files", sa.column("id", sa.Integer), sa.column("content", sa.LargeBinary), sa.column("digest"))


def upgrade() -> None:
    op.add_column("input_files", sa.Column("digest", sa.String(64), nullable=True))
    bind = op.get_bind()
    for file_id in bind.execute(sa.select(FILES.c.id)).scalars().all():  # one file in memory at a time
        content = bind.execute(sa.select(FILES.c.content).where(FILES.c.id == file_id)).scalar_one()
        digest = hashlib.sha256(content).hexdigest()
        bind.execute(FILES.update().where(FILES.c.id == file_id).values(digest=digest))
    with op.batch_alter_table("input_files") as batch:
        batch.alter_column("digest", existing_type=sa.String(64), nullable=False)
