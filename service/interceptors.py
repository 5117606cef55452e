"""Per-RPC logging: one structlog line per call with request id, method, status, duration and
the solver statistics of the solve the call ran (if any).

The request id is the caller's ``x-request-id`` metadata (truncated to 64 characters) or a new
UUID4; it is bound to structlog's context variables for every line logged during the call and
returned to the caller in the initial metadata.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog
import structlog.tracebacks

from service.calls import CallRecord, bind_call, unbind_call
from service.security import redact_sensitive

REQUEST_ID_KEY = "x-request-id"
log = structlog.get_logger("fleetplan.rpc")


_WRITE_LOCK = threading.Lock()
"""One writer at a time: ``print`` wrote a record and its newline separately, so records logged
at once from several threads ended up glued onto one line."""


class StderrLogger:
    """Writes each line to the *current* ``sys.stderr``: a stream captured when logging was
    configured (a test's capture buffer, a closed pipe) is never kept around and written to later.
    Each record is one write of the line and its newline, under a lock."""

    def msg(self, message: str) -> None:
        line = message + "\n"
        with _WRITE_LOCK:
            sys.stderr.write(line)
            sys.stderr.flush()

    debug = info = warning = warn = error = critical = exception = fatal = failure = err = msg


def stderr_logger_factory(*_args: Any) -> StderrLogger:
    return StderrLogger()


def configure_logging(*, json: bool | None = None, level: int = logging.INFO) -> None:
    """structlog to stderr: human-readable on a terminal, JSON lines otherwise."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        # Tokens never; prices and request bodies only at debug level (service.security).
        redact_sensitive,
    ]
    if as_json:
        # Tracebacks as data, without local variables (they would hold request bodies and prices).
        no_locals = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        processors += [structlog.processors.ExceptionRenderer(no_locals), structlog.processors.JSONRenderer()]
    else:
        processors += [structlog.dev.ConsoleRenderer()]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=stderr_logger_factory,
        cache_logger_on_first_use=True,
    )


def _request_id(details: grpc.HandlerCallDetails) -> str:
    for key, value in details.invocation_metadata or ():
        if key == REQUEST_ID_KEY and isinstance(value, str) and value.strip():
            return value.strip()[:64]
    return str(uuid.uuid4())


def _status_name(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if isinstance(code, int):
        for status in grpc.StatusCode:
            if status.value[0] == code:
                return str(status.name)
    if error is not None:
        return (
            "CANCELLED"
            if isinstance(error, BaseException) and type(error).__name__ == "CancelledError"
            else "UNKNOWN"
        )
    return "OK"


class _Timer:
    def __init__(self, method: str, request_id: str) -> None:
        self.record = CallRecord(request_id=request_id, method=method)
        self.start = time.perf_counter()

    def finish(self, context: grpc.aio.ServicerContext, error: BaseException | None) -> None:
        fields: dict[str, Any] = {
            "request_id": self.record.request_id,
            "method": self.record.method,
            "status": _status_name(context, error),
            "duration_ms": round((time.perf_counter() - self.start) * 1000.0, 2),
        }
        if self.record.solver:
            fields["solver"] = self.record.solver
        if self.record.error_reason:
            fields["error"] = self.record.error_reason
        log.info("rpc", **fields)


class RequestLoggingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps every unary-unary and unary-stream handler of the server."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        request_id = _request_id(handler_call_details)

        if handler.unary_unary is not None:
            inner_unary = handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                timer = _Timer(method, request_id)
                token = bind_call(timer.record)
                structlog.contextvars.clear_contextvars()
                structlog.contextvars.bind_contextvars(request_id=request_id)
                error: BaseException | None = None
                try:
                    await context.send_initial_metadata(((REQUEST_ID_KEY, request_id),))
                    return await inner_unary(request, context)
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    timer.finish(context, error)
                    unbind_call(token)
                    structlog.contextvars.clear_contextvars()

            return grpc.unary_unary_rpc_method_handler(
                unary,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )

        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                timer = _Timer(method, request_id)
                token = bind_call(timer.record)
                structlog.contextvars.clear_contextvars()
                structlog.contextvars.bind_contextvars(request_id=request_id)
                error: BaseException | None = None
                try:
                    await context.send_initial_metadata(((REQUEST_ID_KEY, request_id),))
                    async for item in inner_stream(request, context):
                        yield item
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    timer.finish(context, error)
                    unbind_call(token)
                    structlog.contextvars.clear_contextvars()

            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler
