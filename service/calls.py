"""Per-RPC record shared by the logging interceptor, the error mapper and the servicers.

The interceptor creates one ``CallRecord`` per RPC and binds it to a context variable; handlers
(which run in the same asyncio task, and in worker threads via ``asyncio.to_thread``, which copies
the context) add solver statistics to it; the interceptor logs it as the RPC's one line.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any

_CURRENT: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("fleetplan_call", default=None)


@dataclass
class CallRecord:
    request_id: str
    method: str
    solver: dict[str, Any] = field(default_factory=dict)
    """Solver statistics of the solve this RPC ran (status, objective, gap, seconds, …)."""
    error_reason: str = ""


def current_call() -> CallRecord | None:
    return _CURRENT.get()


def bind_call(record: CallRecord) -> contextvars.Token[CallRecord | None]:
    return _CURRENT.set(record)


def unbind_call(token: contextvars.Token[CallRecord | None]) -> None:
    _CURRENT.reset(token)
