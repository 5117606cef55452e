"""One helper for interceptors that check a call before its handler runs (auth, request limits)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc

Check = Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]
"""Inspects the request; aborts the call (``context.abort*``) to refuse it."""


def guarded_handler(
    handler: grpc.RpcMethodHandler,
    check: Check,
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> grpc.RpcMethodHandler:
    """``handler`` (unary or server-streaming) with ``check`` run first; same shape and serializers."""
    deserializer = request_deserializer or handler.request_deserializer
    if handler.unary_stream is not None:
        inner_stream = handler.unary_stream

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(request, context)
            async for item in inner_stream(request, context):
                yield item

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=deserializer, response_serializer=handler.response_serializer
        )
    if handler.unary_unary is not None:
        inner_unary = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(request, context)
            return await inner_unary(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=deserializer, response_serializer=handler.response_serializer
        )
    return handler
