"""Domain errors. The service maps each to one gRPC status code in one place.

The base types (``FleetplanError``, ``FieldViolation``, ``InvalidRequest``) are defined in the
bottom layer, ``pricebook.errors``, so that the pricebook can refuse a bad override with them;
they are re-exported here, where the solver and the service look for them.
"""

from __future__ import annotations

from pricebook.errors import FieldViolation, FleetplanError, InvalidRequest, PricebookError, UnknownEntryError

__all__ = [
    "DeadlineExceeded",
    "FieldViolation",
    "FleetplanError",
    "InvalidRequest",
    "PlanVerificationError",
    "PricebookError",
    "SolveCancelled",
    "UnknownEntryError",
]


class SolveCancelled(FleetplanError):
    """The caller cancelled; the solve stopped."""


class DeadlineExceeded(FleetplanError):
    """The deadline passed before any verified plan was found."""


class PlanVerificationError(FleetplanError):
    """A plan failed the independent evaluator: a bug in the model builder, never user error."""
