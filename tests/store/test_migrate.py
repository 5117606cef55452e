"""Migrations: the shipped revisions build exactly the models' schema, and replicas starting
together on one empty database migrate it once (PostgreSQL: under the advisory lock)."""

from __future__ import annotations

import subprocess
import sys
import time

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from store import migrate
from store.location import store_url
from store.models import Base


def _url(spec: str) -> str:
    url = store_url(spec)
    assert url is not None
    return url


def test_migrated_schema_matches_the_models(store_spec: str) -> None:
    engine = create_engine(_url(store_spec))
    try:
        migrate.upgrade(engine)
        with engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
            assert diff == []
            assert migrate.current_revision(connection) == migrate.head_revision()
    finally:
        engine.dispose()


REPLICA = """
import sys, time
from store.sql import SqlPlanStore
start_at = float(sys.argv[2])
time.sleep(max(0.0, start_at - time.time()))  # every replica starts at the same moment
SqlPlanStore(sys.argv[1]).close()  # what a replica does at start-up: open (and migrate) the store
"""


def test_replicas_starting_together_migrate_once(store_spec: str) -> None:
    """Four processes (the advisory lock / file lock works across processes, not threads)."""
    url = _url(store_spec)
    start_at = f"{time.time() + 3.0:.3f}"
    replicas = [
        subprocess.Popen([sys.executable, "-c", REPLICA, url, start_at], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    failures = []
    for replica in replicas:
        _, stderr = replica.communicate(timeout=120)
        # A replica that lost a race would log store.unreachable_at_start ("database is locked",
        # "relation already exists"): the store opens anyway, so look at what it said too.
        if replica.returncode != 0 or "unreachable_at_start" in stderr or "Traceback" in stderr:
            failures.append(stderr[-2000:])
    assert failures == []
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
            assert [v[0] for v in versions] == [migrate.head_revision()]
            assert {"plans", "plan_tags"} <= set(inspect(connection).get_table_names())
    finally:
        engine.dispose()


def test_the_fast_path_knows_the_newest_revision() -> None:
    assert migrate.head_revision() == migrate.HEAD_REVISION


def test_a_second_upgrade_is_a_no_op(store_spec: str) -> None:
    engine = create_engine(_url(store_spec))
    try:
        with engine.connect() as connection:
            assert not migrate.at_head(connection)
        migrate.upgrade(engine)
        migrate.upgrade(engine)
        with engine.connect() as connection:
            assert migrate.at_head(connection)
            assert migrate.current_revision(connection) == migrate.head_revision()
    finally:
        engine.dispose()
