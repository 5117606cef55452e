"""The plan repository on SQLAlchemy 2: SQLite (default) or PostgreSQL, one class for both.

Blocking calls (the service runs them in worker threads). The schema is migrated at open
(``store.migrate``); when the database cannot be reached then, the store still opens and migrates
on first use, so a server whose database is down plans as usual and only saving fails
(``StoreUnavailable``).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from store import migrate
from store.errors import (
    IdempotencyConflict,
    InvalidPageToken,
    PlanNotFound,
    StoreReadOnly,
    StoreUnavailable,
)
from store.location import redacted
from store.models import PlanRow, TagRow
from store.records import MAX_PAGE_SIZE, NewPlan, PlanFilter, PlanPage, SaveOutcome, StoredPlan

log = structlog.get_logger("fleetplan.store")
_TOKEN_VERSION = 1


def _as_utc(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; everything the store writes is UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _naive_utc(where: PlanFilter) -> PlanFilter:
    def naive(moment: datetime | None) -> datetime | None:
        return None if moment is None else _as_utc(moment).replace(tzinfo=None)

    return dataclasses.replace(
        where, created_after=naive(where.created_after), created_before=naive(where.created_before)
    )


def _filter_digest(where: PlanFilter) -> str:
    text = json.dumps(
        [
            where.label,
            where.tag,
            where.created_after.isoformat() if where.created_after else None,
            where.created_before.isoformat() if where.created_before else None,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_page_token(last_id: str, where: PlanFilter) -> str:
    payload = json.dumps({"v": _TOKEN_VERSION, "after": last_id, "filter": _filter_digest(where)})
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_page_token(token: str, where: PlanFilter) -> str:
    """The id the page continues after; ``InvalidPageToken`` for anything else."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        payload = json.loads(raw)
        after = payload["after"]
        ok = payload.get("v") == _TOKEN_VERSION and isinstance(after, str)
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise InvalidPageToken("not a page token of ListPlans (pass next_page_token unchanged)") from exc
    if not ok:
        raise InvalidPageToken("not a page token of ListPlans (pass next_page_token unchanged)")
    if payload.get("filter") != _filter_digest(where):
        raise InvalidPageToken("this page token belongs to a ListPlans call with another filter")
    return str(after)


def _stored(row: PlanRow, *, with_request: bool = True) -> StoredPlan:
    return StoredPlan(
        plan_id=row.id,
        created_at=_as_utc(row.created_at),
        label=row.label,
        tags=tuple(t.tag for t in row.tags),
        request=row.request if with_request else b"",
        response=row.response,
        pricebook_version=row.pricebook_version,
        pricebook_hash=row.pricebook_hash,
        calibration_date=row.calibration_date,
        fleetplan_version=row.fleetplan_version,
        requester=row.requester,
        idempotency_key=row.idempotency_key,
        document=row.document,
    )


def _row(plan: NewPlan, created_at: datetime) -> PlanRow:
    values: dict[str, Any] = {f.name: getattr(plan, f.name) for f in dataclasses.fields(NewPlan)}
    tags = values.pop("tags")
    values["id"] = values.pop("plan_id")
    row = PlanRow(created_at=created_at, **values)
    row.tags = [TagRow(tag=tag, position=i) for i, tag in enumerate(dict.fromkeys(tags))]
    return row


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers never wait for a writer; foreign keys on (tags cascade with their plan).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_store_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1] if ":///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,  # a replica whose database restarted reconnects instead of failing once
        pool_size=8,
        max_overflow=8,
        pool_timeout=10,
        connect_args={"connect_timeout": 5},
    )


class SqlPlanStore:
    """``store.records.PlanRepository`` on a SQLAlchemy engine."""

    def __init__(self, url: str, *, read_only: bool = False, migrate_now: bool = True) -> None:
        self.url = url
        self._read_only = read_only
        self._engine = create_store_engine(url)
        self._sessions = sessionmaker(self._engine, expire_on_commit=False)
        self._schema_ready = False
        self._schema_lock = threading.Lock()
        if migrate_now:
            try:
                self._ensure_schema()
            except StoreUnavailable as exc:
                log.warning("store.unreachable_at_start", url=redacted(url), error=str(exc))

    @property
    def writable(self) -> bool:
        return not self._read_only

    @property
    def description(self) -> str:
        return redacted(self.url) + ("" if self.writable else " (read-only)")

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    # -- plumbing ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _unavailable_as_error(self) -> Iterator[None]:
        try:
            yield
        except (OperationalError, InterfaceError) as exc:
            raise StoreUnavailable(f"the plan store cannot be reached: {exc.orig}") from exc
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise StoreUnavailable(f"the plan store connection was lost: {exc.orig}") from exc
            raise

    def _ensure_schema(self) -> None:
        if self._schema_ready:
            return
        with self._schema_lock, self._unavailable_as_error():
            if not self._schema_ready:
                if not self._read_only:
                    migrate.upgrade(self._engine)
                self._schema_ready = True

    @contextlib.contextmanager
    def _session(self) -> Iterator[Session]:
        self._ensure_schema()
        with self._unavailable_as_error(), self._sessions() as session:
            yield session

    def _require_writable(self) -> None:
        if self._read_only:
            raise StoreReadOnly()

    # -- PlanRepository ------------------------------------------------------------------------

    def save(self, plan: NewPlan) -> SaveOutcome:
        self._require_writable()
        if plan.idempotency_key is not None:
            earlier = self.find_by_key(plan.idempotency_key)
            if earlier is not None:
                return self._replay(earlier, plan)
        try:
            with self._session() as session, session.begin():
                row = _row(plan, datetime.now(UTC))
                session.add(row)
                session.flush()
                stored = _stored(row)
        except IntegrityError:
            # Another replica saved the same key between our look-up and our insert.
            if plan.idempotency_key is None:
                raise
            earlier = self.find_by_key(plan.idempotency_key)
            if earlier is None:
                raise
            return self._replay(earlier, plan)
        return SaveOutcome(stored, created=True)

    @staticmethod
    def _replay(earlier: StoredPlan, plan: NewPlan) -> SaveOutcome:
        if earlier.request != plan.request:
            raise IdempotencyConflict("request_id", plan.idempotency_key or "")
        return SaveOutcome(earlier, created=False)

    def find_by_key(self, idempotency_key: str) -> StoredPlan | None:
        with self._session() as session:
            row = session.scalars(select(PlanRow).where(PlanRow.idempotency_key == idempotency_key)).first()
            return None if row is None else _stored(row)

    def get(self, plan_id: str) -> StoredPlan:
        with self._session() as session:
            row = session.get(PlanRow, plan_id)
            if row is None:
                raise PlanNotFound(plan_id)
            return _stored(row)

    def list(self, where: PlanFilter, page_size: int, page_token: str = "") -> PlanPage:
        size = max(1, min(page_size, MAX_PAGE_SIZE))
        if self.dialect == "sqlite":  # SQLite keeps naive UTC datetimes; compare like with like
            where = _naive_utc(where)
        query = select(PlanRow).order_by(PlanRow.id.desc()).limit(size + 1)
        if page_token:
            query = query.where(PlanRow.id < decode_page_token(page_token, where))
        if where.label is not None:
            query = query.where(PlanRow.label == where.label)
        if where.tag is not None:
            query = query.where(PlanRow.tags.any(TagRow.tag == where.tag))
        if where.created_after is not None:
            query = query.where(PlanRow.created_at >= where.created_after)
        if where.created_before is not None:
            query = query.where(PlanRow.created_at < where.created_before)
        with self._session() as session:
            rows = list(session.scalars(query).all())
            plans = tuple(_stored(row, with_request=False) for row in rows[:size])
        token = encode_page_token(plans[-1].plan_id, where) if len(rows) > size else ""
        return PlanPage(plans, token)

    def delete(self, plan_id: str) -> None:
        self._require_writable()
        with self._session() as session, session.begin():
            row = session.get(PlanRow, plan_id)
            if row is None:
                raise PlanNotFound(plan_id)
            session.delete(row)

    def set_document(self, plan_id: str, document: str | None) -> None:
        self._require_writable()
        with self._session() as session, session.begin():
            row = session.get(PlanRow, plan_id)
            if row is None:
                raise PlanNotFound(plan_id)
            row.document = document

    def close(self) -> None:
        self._engine.dispose()
