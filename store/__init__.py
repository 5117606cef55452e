"""The plan store: saved plans behind one repository interface (``records.PlanRepository``), on
SQLAlchemy 2 with Alembic migrations (``migrate``), SQLite by default and PostgreSQL for teams.

It keeps opaque bytes and JSON text; it knows nothing of protobuf or the solver. ``open_store``
turns ``--store`` text into a repository (or None when the store is disabled).
"""

from __future__ import annotations

from store.location import store_url
from store.records import PlanRepository


def open_store(spec: str | None, *, read_only: bool = False) -> PlanRepository | None:
    """The repository ``spec`` names (see ``store.location``); None for ``none``."""
    url = store_url(spec)
    if url is None:
        return None
    # SQLAlchemy (a few tenths of a second of imports) only for a server that has a store.
    from store.sql import SqlPlanStore  # noqa: PLC0415 - see above

    return SqlPlanStore(url, read_only=read_only)


def describe(repository: PlanRepository | None) -> str:
    """The store for a log line: where it is, or ``none``."""
    return "none" if repository is None else repository.description


__all__ = ["PlanRepository", "describe", "open_store"]
