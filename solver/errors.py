"""Domain errors. The service maps each to one gRPC status code in one place."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pricebook.errors import PricebookError, UnknownEntryError

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


class FleetplanError(Exception):
    """Base of every error fleetplan raises on purpose."""


@dataclass(frozen=True, slots=True)
class FieldViolation:
    field: str
    """Path in the request, e.g. ``workloads[2].sla.ttft_p95_ms``."""
    reason: str


class InvalidRequest(FleetplanError):
    """Bad input: one violation per bad field."""

    def __init__(self, violations: Sequence[FieldViolation]) -> None:
        self.violations = tuple(violations)
        super().__init__("; ".join(f"{v.field}: {v.reason}" for v in self.violations))


class SolveCancelled(FleetplanError):
    """The caller cancelled; the solve stopped."""


class DeadlineExceeded(FleetplanError):
    """The deadline passed before any verified plan was found."""


class PlanVerificationError(FleetplanError):
    """A plan failed the independent evaluator: a bug in the model builder, never user error."""
