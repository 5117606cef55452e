"""Schema migrations, run programmatically at start-up (no alembic.ini, no command line).

On PostgreSQL the upgrade holds a session advisory lock, so replicas that start together migrate
once: the first takes the lock and upgrades, the others wait for it and then find nothing to do.
On SQLite an exclusive lock on a file beside the database does the same for processes on one
machine (SQLite's own locking would fail the losers with "database is locked"). Within one
process, upgrades also run one at a time (Alembic loads its environment as a module).
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
ADVISORY_LOCK_ID = 0x666C_7470_6C61_6E  # "fltplan": one lock id for fleetplan's schema upgrades
_IN_PROCESS = threading.Lock()


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


@contextlib.contextmanager
def _sqlite_file_lock(engine: Engine) -> Iterator[None]:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision (a no-op when it is there already)."""
    with _IN_PROCESS, _sqlite_file_lock(engine):
        _upgrade(engine)


def _upgrade(engine: Engine) -> None:
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
