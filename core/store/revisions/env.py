"""Alembic environment: migrations run on the connection core.store.migrations.upgrade hands over."""

from alembic import context

from core.store.models import Base

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite alters a table by copying it; batch mode does that
)
with context.begin_transaction():
    context.run_migrations()
