"""Reading proto fields into the plain dicts pydantic validates: a field that is not set stays out of
the dict, so the domain's default applies."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message


def optional(message: Message, name: str) -> Any:
    """An ``optional`` scalar or sub-message of ``message``, or None when it is not set."""
    return getattr(message, name) if message.HasField(name) else None


def put(out: dict[str, Any], key: str, value: Any) -> None:
    """``out[key] = value`` unless ``value`` is None."""
    if value is not None:
        out[key] = value
