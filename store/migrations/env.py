"""Alembic environment: always programmatic (``store.migrate``), on the connection it is handed,
so the advisory lock taken on that connection covers the whole upgrade."""

from __future__ import annotations

from alembic import context

from store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
