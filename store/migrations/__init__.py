"""Alembic migrations of the plan store, run by ``store.migrate.upgrade`` at start-up."""
