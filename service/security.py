"""Transport security and authentication: TLS / mutual TLS credentials and bearer tokens.

Server side:
- ``server_credentials(settings)``: TLS when ``tls_cert_file`` and ``tls_key_file`` are set, mutual
  TLS (client certificates required and checked against ``tls_client_ca_file``) when the client CA
  is set too. Half a configuration (a certificate without its key, a client CA without a server
  certificate) is refused: a server must never fall back to plaintext by accident.
- ``TokenAuthInterceptor``: when tokens are configured (``token_file``, one per line, and/or
  ``FLEETPLAN_TOKEN``; a line ``NAME TOKEN`` names its token: the requester of saved plans), every
  call except health checking must carry ``authorization: Bearer <t>``;
  missing or wrong → UNAUTHENTICATED with an ``ErrorInfo`` (reason ``MISSING_TOKEN`` or
  ``INVALID_TOKEN``). Tokens are compared with ``hmac.compare_digest`` against every accepted token
  (no early exit), and never logged.
- ``redact_sensitive``: a structlog processor that drops token-like keys always and prices
  (objective, bound, costs) from every line above debug level.

Client side (``api.credentials``, re-exported here): ``channel_credentials(...)`` and
``read_token(...)`` build what ``FleetPlannerClient`` and the CLI pass on (``credentials=``,
``bearer_token=``); they live below the service so that the CLI talking to a remote server never
imports it.
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from api.contract import ERROR_DOMAIN, TOKEN_ENV
from api.credentials import (
    SecurityConfigError,
    channel_credentials,
    read_file,
    read_token,
    token_lines,
)
from service.guards import guarded_handler
from service.settings import ServerSettings

AUTHORIZATION_KEY = "authorization"
BEARER_PREFIX = "bearer "
HEALTH_SERVICE_PREFIX = "/grpc.health.v1.Health/"
"""Health checking stays reachable without a token (load balancers and orchestrators probe it)."""
MAX_TOKEN_BYTES = 4096


# -- TLS ---------------------------------------------------------------------------------------


def _check_key_matches(cert: Path, key: Path) -> None:
    """Refuses a certificate and key that do not belong together, saying so (gRPC itself only
    reports "Failed to bind to address" later)."""
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile=cert, keyfile=key)
    except ssl.SSLError as exc:
        reason = "the key does not match the certificate" if "mismatch" in str(exc).lower() else str(exc)
        msg = f"TLS certificate {cert} and key {key}: {reason}"
        raise SecurityConfigError(msg) from exc


def server_credentials(settings: ServerSettings) -> grpc.ServerCredentials | None:
    """TLS (or mutual TLS with ``tls_client_ca_file``) server credentials; None = plaintext."""
    cert, key, client_ca = settings.tls_cert_file, settings.tls_key_file, settings.tls_client_ca_file
    if cert is None and key is None:
        if client_ca is not None:
            msg = (
                "tls_client_ca_file needs tls_cert_file and tls_key_file "
                "(mutual TLS is TLS plus client certificates)"
            )
            raise SecurityConfigError(msg)
        return None
    if cert is None or key is None:
        missing = "tls_key_file" if key is None else "tls_cert_file"
        msg = f"TLS needs both tls_cert_file and tls_key_file; {missing} is not set"
        raise SecurityConfigError(msg)
    chain = read_file(cert, "TLS certificate")
    private_key = read_file(key, "TLS key")
    _check_key_matches(cert, key)
    roots = read_file(client_ca, "client CA") if client_ca is not None else None
    return grpc.ssl_server_credentials(
        [(private_key, chain)], root_certificates=roots, require_client_auth=roots is not None
    )


# -- tokens ------------------------------------------------------------------------------------


def token_fingerprint(token: bytes) -> str:
    """A non-secret name for an unnamed token: ``token-`` and 8 hex digits of its sha256."""
    return f"token-{hashlib.sha256(token).hexdigest()[:8]}"


def _named_line(line: str) -> tuple[str, str]:
    words = line.split()
    if len(words) > 2:
        msg = "a token-file line is TOKEN or NAME TOKEN (tokens are single words)"
        raise SecurityConfigError(msg)
    token = words[-1]
    return token, words[0] if len(words) == 2 else token_fingerprint(token.encode())


def named_tokens(settings: ServerSettings) -> dict[bytes, str]:
    """Every token the server accepts → its name (the requester a saved plan records); empty =
    authentication off. A token-file line ``alice s3cret`` names its token ``alice``; an unnamed
    token (and ``FLEETPLAN_TOKEN``) is named by its fingerprint."""
    pairs: list[tuple[str, str]] = []
    if settings.token_file is not None:
        try:
            text = settings.token_file.read_text(encoding="utf-8")
        except OSError as exc:
            msg = f"token file {settings.token_file}: {exc.strerror or exc}"
            raise SecurityConfigError(msg) from exc
        lines = token_lines(text)
        if not lines:
            msg = f"token file {settings.token_file} has no tokens"
            raise SecurityConfigError(msg)
        pairs += [_named_line(line) for line in lines]
    if settings.token is not None:
        value = settings.token.get_secret_value().strip()
        if not value:
            msg = "the configured token is empty"
            raise SecurityConfigError(msg)
        pairs.append((value, token_fingerprint(value.encode())))
    for token, _name in pairs:
        if any(c.isspace() for c in token) or len(token.encode()) > MAX_TOKEN_BYTES:
            msg = f"tokens must be single words of at most {MAX_TOKEN_BYTES} bytes (one token per line)"
            raise SecurityConfigError(msg)
    named: dict[bytes, str] = {}
    for token, name in pairs:
        named.setdefault(token.encode(), name)
    return named


def accepted_tokens(settings: ServerSettings) -> tuple[bytes, ...]:
    """Every token the server accepts (empty = authentication off)."""
    return tuple(named_tokens(settings))


def requester_name(metadata: Any, named: Mapping[bytes, str]) -> str:
    """The name of the accepted token ``metadata`` carries ("" when tokens are off or none
    matches; the token interceptor has refused such calls already). Constant time per token."""
    presented = _bearer(metadata)
    name = ""
    if presented is None:
        return name
    for token, token_name in named.items():
        if hmac.compare_digest(presented, token):
            name = token_name
    return name


def token_matches(presented: bytes, accepted: tuple[bytes, ...]) -> bool:
    """Constant-time comparison against every accepted token (no early exit on a match)."""
    matched = False
    for token in accepted:
        matched |= hmac.compare_digest(presented, token)
    return matched


def _bearer(metadata: Any) -> bytes | None:
    for key, value in metadata or ():
        if key == AUTHORIZATION_KEY:
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            if text[: len(BEARER_PREFIX)].lower() == BEARER_PREFIX:
                return text[len(BEARER_PREFIX) :].strip().encode()
            return b""
    return None


def _unauthenticated_status(reason: str, message: str) -> grpc.Status:
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN))
    return rpc_status.to_status(
        status_pb2.Status(code=code_pb2.UNAUTHENTICATED, message=message, details=[info])
    )


def _reject_handler(handler: grpc.RpcMethodHandler, status: grpc.Status) -> grpc.RpcMethodHandler:
    """A handler of the same shape as ``handler`` that only aborts with ``status``: every shape,
    so that streaming-request services (server reflection, a bidi stream) are guarded too."""

    async def refuse(request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort_with_status(status)

    if handler.stream_stream is not None:

        async def refuse_stream(requests: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await context.abort_with_status(status)
            yield  # pragma: no cover - abort raises; the yield makes this a stream handler

        return grpc.stream_stream_rpc_method_handler(
            refuse_stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            refuse,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return guarded_handler(handler, refuse)


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Bearer-token check on every call except health checking (server reflection included: it
    would show the whole schema to anyone)."""

    def __init__(self, tokens: tuple[bytes, ...]) -> None:
        if not tokens:
            msg = "TokenAuthInterceptor needs at least one token"
            raise SecurityConfigError(msg)
        self._tokens = tokens

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method or ""
        if handler is None or method.startswith(HEALTH_SERVICE_PREFIX):
            return handler
        presented = _bearer(handler_call_details.invocation_metadata)
        if presented is None:
            return _reject_handler(
                handler,
                _unauthenticated_status(
                    "MISSING_TOKEN", "this server requires 'authorization: Bearer <token>' metadata"
                ),
            )
        if not token_matches(presented, self._tokens):
            return _reject_handler(
                handler, _unauthenticated_status("INVALID_TOKEN", "the bearer token is not accepted")
            )
        return handler


def auth_interceptors(settings: ServerSettings) -> list[grpc.aio.ServerInterceptor]:
    """The token interceptor when tokens are configured, else nothing."""
    tokens = accepted_tokens(settings)
    return [TokenAuthInterceptor(tokens)] if tokens else []


# -- logs --------------------------------------------------------------------------------------

SECRET_KEYS = frozenset({"authorization", "token", "tokens", "bearer", "password", "secret", "private_key"})
"""Dropped from every log line at every level."""
PRICE_KEYS = frozenset(
    {
        "objective",
        "bound",
        "best_bound",
        "price",
        "prices",
        "cost",
        "costs",
        "tco",
        "horizon_tco",
        "capex",
        "opex",
        "budget",
        "request",
        "request_body",
        "body",
    }
)
"""Prices and request bodies: logged at debug level only (bids and the price book are confidential)."""


def _scrub(value: Any, drop: frozenset[str]) -> Any:
    if isinstance(value, Mapping):
        return {k: _scrub(v, drop) for k, v in value.items() if str(k).lower() not in drop}
    return value


def redact_sensitive(
    _logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: secrets never, prices and request bodies only at debug level."""
    drop = SECRET_KEYS if method_name == "debug" else SECRET_KEYS | PRICE_KEYS
    for key in [k for k in event_dict if str(k).lower() in drop]:
        del event_dict[key]
    for key, value in list(event_dict.items()):
        if isinstance(value, Mapping):
            event_dict[key] = _scrub(value, drop)
    return event_dict


__all__ = [
    "AUTHORIZATION_KEY",
    "TOKEN_ENV",
    "SecurityConfigError",
    "TokenAuthInterceptor",
    "accepted_tokens",
    "auth_interceptors",
    "channel_credentials",
    "named_tokens",
    "read_token",
    "redact_sensitive",
    "requester_name",
    "server_credentials",
    "token_matches",
]
