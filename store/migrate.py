"""Schema migrations, run programmatically at start-up (no alembic.ini, no command line).

On PostgreSQL the upgrade holds a session advisory lock, so replicas that start together migrate
once: the first takes the lock and upgrades, the others wait for it and then find nothing to do.
SQLite serialises writers itself (the upgrade is one transaction).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
ADVISORY_LOCK_ID = 0x666C_7470_6C61_6E  # "fltplan": one lock id for fleetplan's schema upgrades


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None, "no migrations shipped"
    return head


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision (a no-op when it is there already)."""
    with engine.connect() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres:
            connection.execute(text("SELECT pg_advisory_lock(:id)"), {"id": ADVISORY_LOCK_ID})
            connection.commit()
        try:
            if current_revision(connection) != head_revision():
                command.upgrade(_config(connection), "head")
                connection.commit()
        finally:
            if postgres:
                connection.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": ADVISORY_LOCK_ID})
                connection.commit()
