"""Domain errors → gRPC status, in one place (``grpc_errors``).

| raised | status | ErrorInfo reason (+ other details) |
| --- | --- | --- |
| ``pydantic.ValidationError``, ``InvalidRequest`` | INVALID_ARGUMENT | ``INVALID_REQUEST`` + BadRequest |
| ``pricebook.errors.UnknownEntryError`` | INVALID_ARGUMENT | ``UNKNOWN_ENTRY`` + BadRequest |
| ``solver.errors.SolveCancelled`` | CANCELLED | ``SOLVE_CANCELLED`` |
| ``solver.errors.DeadlineExceeded`` | DEADLINE_EXCEEDED | ``DEADLINE_EXCEEDED`` |
| ``ResourceExhausted`` | RESOURCE_EXHAUSTED | ``SERVER_BUSY`` + RetryInfo |
| ``ShuttingDown`` | UNAVAILABLE | ``SHUTTING_DOWN`` + RetryInfo |
| ``store.errors.PlanNotFound`` | NOT_FOUND | ``PLAN_NOT_FOUND`` + ResourceInfo |
| ``store.errors.StoreDisabled``, ``…ReadOnly`` | FAILED_PRECONDITION | ``STORE_DISABLED``, ``…_READ_ONLY`` |
| ``store.errors.StoreUnavailable`` | UNAVAILABLE | ``STORE_UNAVAILABLE`` + RetryInfo |
| ``NotImplementedError`` | UNIMPLEMENTED | ``NOT_IMPLEMENTED`` |
| anything else | INTERNAL | ``INTERNAL``; traceback logged, never sent to the client |

Statuses follow AIP-193: one ``ErrorInfo`` (reason UPPER_SNAKE, domain ``fleetplan.v1``) and at
most one detail of each type.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
import structlog
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from pydantic import ValidationError

from api.contract import ERROR_DOMAIN
from pricebook.errors import UnknownEntryError
from service.calls import current_call
from service.convert.violations import violations_from
from solver.errors import DeadlineExceeded, FieldViolation, InvalidRequest, SolveCancelled
from store.errors import PlanNotFound, StoreDisabled, StoreReadOnly, StoreUnavailable

log = structlog.get_logger("fleetplan.service")


class ResourceExhausted(Exception):
    """Too many solves queued; the client should retry after ``retry_after_s``."""

    def __init__(self, message: str, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ShuttingDown(Exception):
    """The server is shutting down and the solve had no verified plan yet; retry on another replica."""


class WorkerLost(Exception):
    """The worker process running the call stopped (killed, out of memory); a retry gets a new one."""


def _pack(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _error_info(reason: str, **metadata: str) -> error_details_pb2.ErrorInfo:
    return error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=metadata)


MAX_VIOLATIONS_SENT = 20
"""Field violations carried in one status; the rest are counted. The status travels in a trailer,
and gRPC clients drop trailers over 16 KiB (the caller would see RESOURCE_EXHAUSTED instead)."""
MAX_TEXT_CHARS = 300
"""Longest field path or description sent (they can echo caller-supplied text)."""


def _clip(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bad_request_status(
    violations: Sequence[FieldViolation], reason: str = "INVALID_REQUEST"
) -> status_pb2.Status:
    sent = list(violations[:MAX_VIOLATIONS_SENT])
    if len(violations) > MAX_VIOLATIONS_SENT:
        rest = len(violations) - MAX_VIOLATIONS_SENT
        sent.append(FieldViolation("(more)", f"{rest} more violations not listed; fix the ones above first"))
    bad = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=_clip(v.field), description=_clip(v.reason))
            for v in sent
        ]
    )
    fields = ", ".join(dict.fromkeys(_clip(v.field, 100) for v in violations[:MAX_VIOLATIONS_SENT]))
    summary = "; ".join(f"{_clip(v.field, 100)}: {_clip(v.reason, 200)}" for v in violations[:5])
    more = f" (and {len(violations) - 5} more)" if len(violations) > 5 else ""
    return status_pb2.Status(
        code=code_pb2.INVALID_ARGUMENT,
        message=f"invalid request: {summary}{more}",
        details=[_pack(_error_info(reason, fields=fields[:1000])), _pack(bad)],
    )


def _retry_info(seconds: float) -> error_details_pb2.RetryInfo:
    return error_details_pb2.RetryInfo(
        retry_delay=duration_pb2.Duration(seconds=int(seconds), nanos=int((seconds % 1) * 1e9))
    )


def _store_status(exc: BaseException) -> status_pb2.Status | None:
    """The status of a plan-store error; None for any other error."""
    if isinstance(exc, PlanNotFound):
        resource = error_details_pb2.ResourceInfo(
            resource_type="fleetplan.v1.SavedPlan", resource_name=exc.plan_id, description=str(exc)
        )
        return status_pb2.Status(
            code=code_pb2.NOT_FOUND,
            message=str(exc),
            details=[_pack(_error_info("PLAN_NOT_FOUND", plan_id=exc.plan_id)), _pack(resource)],
        )
    if isinstance(exc, StoreDisabled | StoreReadOnly):
        reason = "STORE_DISABLED" if isinstance(exc, StoreDisabled) else "STORE_READ_ONLY"
        return status_pb2.Status(
            code=code_pb2.FAILED_PRECONDITION, message=str(exc), details=[_pack(_error_info(reason))]
        )
    if isinstance(exc, StoreUnavailable):
        return status_pb2.Status(
            code=code_pb2.UNAVAILABLE,
            message=str(exc)[:MAX_TEXT_CHARS],
            details=[_pack(_error_info("STORE_UNAVAILABLE")), _pack(_retry_info(1.0))],
        )
    return None


def status_for(exc: BaseException) -> status_pb2.Status:
    """The google.rpc.Status for a domain error (INTERNAL for anything unexpected)."""
    store_status = _store_status(exc)
    if store_status is not None:
        return store_status
    if isinstance(exc, InvalidRequest):
        return bad_request_status(exc.violations)
    if isinstance(exc, ValidationError):
        return bad_request_status(violations_from(exc, lambda loc: ".".join(str(p) for p in loc)))
    if isinstance(exc, UnknownEntryError):
        hint = f"; did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        field = getattr(exc, "field", "") or exc.kind
        return bad_request_status(
            [FieldViolation(field, f"unknown {exc.kind} {exc.key!r}{hint}")], "UNKNOWN_ENTRY"
        )
    if isinstance(exc, SolveCancelled):
        return status_pb2.Status(
            code=code_pb2.CANCELLED,
            message="the solve was cancelled",
            details=[_pack(_error_info("SOLVE_CANCELLED"))],
        )
    if isinstance(exc, DeadlineExceeded):
        return status_pb2.Status(
            code=code_pb2.DEADLINE_EXCEEDED,
            message=f"no verified plan within the deadline: {exc}",
            details=[_pack(_error_info("DEADLINE_EXCEEDED"))],
        )
    if isinstance(exc, ResourceExhausted):
        retry = error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(
                seconds=int(exc.retry_after_s), nanos=int((exc.retry_after_s % 1) * 1e9)
            )
        )
        return status_pb2.Status(
            code=code_pb2.RESOURCE_EXHAUSTED,
            message=str(exc),
            details=[_pack(_error_info("SERVER_BUSY")), _pack(retry)],
        )
    if isinstance(exc, (ShuttingDown, WorkerLost)):
        return status_pb2.Status(
            code=code_pb2.UNAVAILABLE,
            message=str(exc),
            details=[
                _pack(_error_info("SHUTTING_DOWN" if isinstance(exc, ShuttingDown) else "WORKER_LOST")),
                _pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=1))),
            ],
        )
    if isinstance(exc, NotImplementedError):
        return status_pb2.Status(
            code=code_pb2.UNIMPLEMENTED, message=str(exc), details=[_pack(_error_info("NOT_IMPLEMENTED"))]
        )
    return status_pb2.Status(
        code=code_pb2.INTERNAL,
        message="internal error; it has been logged with the request id",
        details=[_pack(_error_info("INTERNAL"))],
    )


async def _abort(context: grpc.aio.ServicerContext, exc: BaseException) -> None:
    status = status_for(exc)
    if status.code == code_pb2.INTERNAL:
        log.error("rpc.internal_error", exc_info=exc)
    call = current_call()
    if call is not None:
        call.error_reason = str(exc)[:500] if status.code != code_pb2.INTERNAL else type(exc).__name__
    await context.abort_with_status(rpc_status.to_status(status))


def grpc_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Map domain errors raised by a unary or server-streaming aio handler to rich statuses."""
    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def stream(self: Any, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            try:
                async for item in method(self, request, context):
                    yield item
            except (asyncio.CancelledError, grpc.aio.AbortError):
                raise
            except Exception as exc:
                await _abort(context, exc)

        return stream

    @functools.wraps(method)
    async def unary(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            await _abort(context, exc)
            raise AssertionError("unreachable: abort raises") from exc

    return unary


__all__ = [
    "ERROR_DOMAIN",
    "ResourceExhausted",
    "ShuttingDown",
    "bad_request_status",
    "grpc_errors",
    "status_for",
]
