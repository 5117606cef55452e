"""Schema migrations, run programmatically at start-up (no alembic.ini, no command line).

On PostgreSQL the upgrade holds a session advisory lock, so replicas that start together migrate
once: the first takes the lock and upgrades, the others wait for it and then find nothing to do.
On SQLite an exclusive lock on a file beside the database does the same for processes on one
machine (SQLite's own locking alone can fail a waiting writer with "database is locked" after its
busy timeout). Within one process, upgrades run one at a time (Alembic loads its environment as a
module). A database already at ``HEAD_REVISION`` is recognised by one query, without importing
Alembic (about 0.7 s of a cold ``fleetplan`` start on a busy machine).
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError, ProgrammingError

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
HEAD_REVISION = "0001"
"""The newest revision in ``migrations/versions`` (a test checks it is Alembic's head)."""
ADVISORY_LOCK_ID = 0x666C_7470_6C61_6E  # "fltplan": one lock id for fleetplan's schema upgrades
_IN_PROCESS = threading.Lock()


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config  # noqa: PLC0415 - Alembic only when a schema changes

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """Alembic's head revision of the shipped migrations."""
    from alembic.script import ScriptDirectory  # noqa: PLC0415 - see _config

    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None, "no migrations shipped"
    return head


def current_revision(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415 - see _config

    return MigrationContext.configure(connection).get_current_revision()


def at_head(connection: Connection) -> bool:
    """Whether the database is at ``HEAD_REVISION`` (False for an empty database)."""
    try:
        versions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except (OperationalError, ProgrammingError):  # no alembic_version table yet
        connection.rollback()
        return False
    connection.rollback()
    return list(versions) == [HEAD_REVISION]


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
    with engine.connect() as connection:
        if at_head(connection):
            return
    with _IN_PROCESS, _sqlite_file_lock(engine):
        _upgrade(engine)


def _upgrade(engine: Engine) -> None:
    from alembic import command  # noqa: PLC0415 - see _config

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
