"""Errors of the plan store, on the project's base types (``pricebook.errors``): the service maps
them to statuses in one place (``service.errors``)."""

from __future__ import annotations

from pricebook.errors import FieldViolation, FleetplanError, InvalidRequest


class StoreError(FleetplanError):
    """Base of the plan store's errors."""


class PlanNotFound(StoreError):
    """No saved plan has this id (never saved, or deleted)."""

    def __init__(self, plan_id: str) -> None:
        self.plan_id = plan_id
        super().__init__(f"no saved plan has id {plan_id!r}")


class StoreDisabled(StoreError):
    """The server runs without a plan store (``--store none``)."""

    def __init__(self) -> None:
        super().__init__("this server has no plan store (started with --store none)")


class StoreReadOnly(StoreError):
    """The store is opened read-only: plans can be read, not saved or deleted."""

    def __init__(self) -> None:
        super().__init__("the plan store is read-only on this server (--store-read-only)")


class StoreUnavailable(StoreError):
    """The database cannot be reached (or is locked); the call may be retried."""


class InvalidPageToken(InvalidRequest):
    """A page token this store did not issue, or one issued for another filter."""

    def __init__(self, reason: str) -> None:
        super().__init__([FieldViolation("page_token", reason)])


class IdempotencyConflict(InvalidRequest):
    """A request id already used by a different request."""

    def __init__(self, field: str, key: str) -> None:
        super().__init__(
            [FieldViolation(field, f"request id {key!r} was already used for a different request")]
        )
