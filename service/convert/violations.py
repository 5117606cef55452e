"""Error wording: pydantic errors and conversion-time problems as ``FieldViolation``s an analyst
understands, each with its proto field path."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from solver.errors import FieldViolation, InvalidRequest

_E = TypeVar("_E")
_M = TypeVar("_M", bound=BaseModel)

ToProto = Callable[[Sequence[str | int]], str]
"""Translates a pydantic ``loc`` into a proto field path."""

_FIXED_REASONS = {
    "missing": "is required",
    "string_too_short": "must not be empty",
    # The one pattern in the domain (``domain.WorkloadName``): a name with a visible character.
    "string_pattern_mismatch": "must not be blank",
    "finite_number": "must be a finite number",
    "extra_forbidden": "is not a known field",
}
_BOUND_REASONS = {
    "greater_than": ("must be greater than", "gt"),
    "greater_than_equal": ("must be at least", "ge"),
    "less_than": ("must be less than", "lt"),
    "less_than_equal": ("must be at most", "le"),
    "literal_error": ("must be one of", "expected"),
}
"""Error type → (words, the ``ctx`` key of the limit); the reason also shows the value given."""
_LENGTH_REASONS = {
    "too_short": ("needs at least {} item(s)", "min_length"),
    "too_long": ("allows at most {} item(s)", "max_length"),
    "string_too_long": ("must be at most {} characters", "max_length"),
}
_DECIMAL_ERRORS = ("decimal_parsing", "decimal_type")


def reason(error: Mapping[str, Any]) -> str:
    """A pydantic error in words an analyst understands."""
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    value = error.get("input")
    shown = "0 or not set" if value in (0, 0.0, "", None) else repr(value)
    if kind in _FIXED_REASONS:
        return _FIXED_REASONS[kind]
    if kind in _BOUND_REASONS:
        words, key = _BOUND_REASONS[kind]
        return f"{words} {ctx.get(key)} (got {shown})"
    if kind in _LENGTH_REASONS:
        template, key = _LENGTH_REASONS[kind]
        return template.format(ctx.get(key))
    if kind in _DECIMAL_ERRORS:
        return f"must be a decimal number such as '500000000' or '3.99' (got {shown})"
    if kind == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ")
    return str(error.get("msg", "invalid value"))


def _hides_deeper_errors(loc: tuple[Any, ...], kind: str, all_locs: Sequence[tuple[Any, ...]]) -> bool:
    """pydantic also calls a list "too short" when its only items are invalid: the items say why."""
    return kind == "too_short" and any(len(d) > len(loc) and d[: len(loc)] == loc for d in all_locs)


def violations_from(error: ValidationError, to_proto: ToProto) -> list[FieldViolation]:
    """One violation per bad field, paths translated by ``to_proto``."""
    seen: set[tuple[str, str]] = set()
    out: list[FieldViolation] = []
    errors = error.errors()
    all_locs = [tuple(e["loc"]) for e in errors]
    for item in errors:
        if _hides_deeper_errors(tuple(item["loc"]), item["type"], all_locs):
            continue
        loc = [p for p in item["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        path = to_proto(loc)
        why = reason(item)
        if (path, why) not in seen:
            seen.add((path, why))
            out.append(FieldViolation(path, why))
    return out


def validate(
    model: type[_M], data: Mapping[str, Any], to_proto: ToProto, violations: list[FieldViolation]
) -> _M | None:
    """``model`` validated from ``data``, or None with the violations appended."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        violations.extend(violations_from(exc, to_proto))
        return None


def raise_if(violations: list[FieldViolation]) -> None:
    """Raise one violation per field path (the first, most specific reason found for it)."""
    if violations:
        first: dict[str, FieldViolation] = {}
        for v in violations:
            first.setdefault(v.field, v)
        raise InvalidRequest(list(first.values()))


class Collector:
    """Conversion-time violations (unknown enum numbers, non-finite numbers) with their paths."""

    def __init__(self) -> None:
        self.violations: list[FieldViolation] = []

    def add(self, path: str, why: str) -> None:
        self.violations.append(FieldViolation(path, why))

    def enum(self, table: Mapping[Any, _E], value: int, path: str, *, required: bool = False) -> _E | None:
        if value == 0:
            if required:
                self.add(path, "is required")
            return None
        found = table.get(value)
        if found is None:
            self.add(path, f"unknown value {value}")
        return found

    def number(self, value: float, path: str) -> float:
        if not math.isfinite(value):
            self.add(path, "must be a finite number")
            return 0.0
        return value
