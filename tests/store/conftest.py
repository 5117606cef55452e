"""Every store test runs against SQLite (a file) and a real PostgreSQL: ``store_spec`` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from store.location import store_url
from store.sql import SqlPlanStore


@pytest.fixture
def repository(store_spec: str) -> Iterator[SqlPlanStore]:
    url = store_url(store_spec)
    assert url is not None
    store = SqlPlanStore(url)
    yield store
    store.close()
