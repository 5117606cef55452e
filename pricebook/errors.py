"""Errors of the pricebook (a broken book at start-up, an id that is not in it) and the base types
of every error fleetplan raises on purpose (re-exported by ``solver.errors``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class PricebookError(Exception):
    """A pricebook that cannot be loaded: names the file, the entry and the field."""

    def __init__(self, file: str, entry: str, field: str, reason: str) -> None:
        self.file = file
        self.entry = entry
        self.field = field
        self.reason = reason
        super().__init__(f"{file}: entry {entry!r}, field {field!r}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:  # pickled back from the server's worker processes
        return (type(self), (self.file, self.entry, self.field, self.reason), self.__dict__)


class UnknownEntryError(LookupError):
    """An id that is not in the pricebook (GPU, model, server, offer)."""

    def __init__(self, kind: str, key: str, suggestions: Sequence[str] = ()) -> None:
        self.kind = kind
        self.key = key
        self.suggestions = tuple(suggestions)
        hint = f" (did you mean {', '.join(self.suggestions)}?)" if self.suggestions else ""
        super().__init__(f"unknown {kind} {key!r}{hint}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind, self.key, self.suggestions), self.__dict__)


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

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.violations,), self.__dict__)
