"""What the store keeps per plan, how plans are queried, and the one repository interface.

The store knows nothing of protobuf: the request and the response are opaque bytes (the service
serialises them), ``document`` is opaque JSON text another part of the service may fill.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

MAX_LABEL_CHARS = 200
MAX_TAG_CHARS = 64
MAX_TAGS = 32
MAX_KEY_CHARS = 128
MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class NewPlan:
    """A plan to save. ``plan_id`` is allocated first (``new_ulid``) because the response the
    caller gets, and the store keeps, names it."""

    plan_id: str
    request: bytes
    response: bytes
    label: str = ""
    tags: tuple[str, ...] = ()
    pricebook_version: str = ""
    pricebook_hash: str = ""
    calibration_date: str = ""
    fleetplan_version: str = ""
    requester: str = ""
    idempotency_key: str | None = None
    """Caller's request id: saving twice with one key stores one plan (AIP-155)."""
    document: str | None = None
    """Opaque JSON text (e.g. a report's data), or None."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredPlan(NewPlan):
    created_at: datetime
    """When it was saved (UTC)."""


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    plan: StoredPlan
    created: bool
    """False when the idempotency key had already saved ``plan`` (a retried call)."""


@dataclass(frozen=True, slots=True)
class PlanFilter:
    """Plans to list: every given condition holds (None = any)."""

    label: str | None = None
    tag: str | None = None
    created_after: datetime | None = None
    """Inclusive."""
    created_before: datetime | None = None
    """Exclusive."""


@dataclass(frozen=True, slots=True)
class PlanPage:
    plans: tuple[StoredPlan, ...]
    """Newest first, without the request bytes (``get`` has them)."""
    next_page_token: str
    """Empty on the last page."""


class PlanRepository(Protocol):
    """Saved plans. Every method may raise ``StoreUnavailable``; writes on a read-only store raise
    ``StoreReadOnly``."""

    @property
    def writable(self) -> bool: ...

    @property
    def description(self) -> str:
        """Where the plans are, for logs (no password), e.g. ``sqlite:////…/plans.db``."""
        ...

    def save(self, plan: NewPlan) -> SaveOutcome:
        """Store ``plan``; with an idempotency key already used, the plan saved under it."""
        ...

    def find_by_key(self, idempotency_key: str) -> StoredPlan | None: ...

    def get(self, plan_id: str) -> StoredPlan:
        """The plan (``PlanNotFound`` if there is none)."""
        ...

    def list(self, where: PlanFilter, page_size: int, page_token: str = "") -> PlanPage:
        """A page of plans matching ``where`` (``InvalidPageToken`` for a token not from here)."""
        ...

    def delete(self, plan_id: str) -> None:
        """Remove the plan (``PlanNotFound`` if there is none)."""
        ...

    def set_document(self, plan_id: str, document: str | None) -> None:
        """Replace the plan's opaque JSON ``document`` (``PlanNotFound`` if there is none)."""
        ...

    def close(self) -> None: ...
