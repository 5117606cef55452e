"""Every store test runs against SQLite (a file) and a real PostgreSQL (``tests.pg``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.location import store_url
from store.sql import SqlPlanStore


@pytest.fixture(params=["sqlite", "postgresql"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--store`` value naming an empty database."""
    if request.param == "sqlite":
        return str(tmp_path / "plans.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def repository(store_spec: str) -> Iterator[SqlPlanStore]:
    url = store_url(store_spec)
    assert url is not None
    store = SqlPlanStore(url)
    yield store
    store.close()
