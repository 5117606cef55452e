"""Jobs for ``tests/service/test_worker_pool.py``: module functions (a worker imports them by name)
that report what their token saw, so the tests can tell the server's signals reached the worker."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator

import structlog
import structlog.contextvars

from service.limits import SolveToken
from solver.errors import FieldViolation, InvalidRequest, SolveCancelled

WAIT_S = 120.0


def where(_token: SolveToken) -> int:
    """The process the job ran in."""
    return os.getpid()


def until_cancelled(_token: SolveToken) -> None:
    """Raise ``SolveCancelled`` once the token fires, as a solve's checkpoints do."""
    if _token.wait(WAIT_S):
        raise SolveCancelled("cancelled in the worker")


def until_wrapped_up(token: SolveToken) -> tuple[int, str]:
    """Return (pid, wrap-up reason) once the token is wrapped up, as a MIP returns its best plan."""
    deadline = time.monotonic() + WAIT_S
    while not token.wrapped_up and time.monotonic() < deadline:
        time.sleep(0.01)
    return os.getpid(), token.wrap_up_reason


def bad_field(_token: SolveToken) -> None:
    raise InvalidRequest([FieldViolation("workloads[0].sla", "cannot be met")])


def counting(count: int, token: SolveToken) -> Iterator[int]:
    """Yield 0…count-1, then wait to be cancelled (a sweep the caller walks away from)."""
    yield from range(count)


def die(_token: SolveToken) -> None:
    """The worker process ends mid-job (killed, out of memory)."""
    os._exit(3)


def log_context(_token: SolveToken) -> dict[str, object]:
    """The structlog context the job's log lines carry."""
    return dict(structlog.contextvars.get_contextvars())


def logs_info(_token: SolveToken) -> bool:
    """Whether an info line would be written here."""
    return bool(structlog.get_logger().bind().is_enabled_for(logging.INFO))


def imported(_token: SolveToken) -> bool:
    """Whether the planner's calls were imported before any job needed them."""
    return "service.domain_calls" in sys.modules
