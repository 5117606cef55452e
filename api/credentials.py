"""Credentials both sides read from files: PEM files for TLS and bearer-token files (one token per
line, optionally after its name: ``NAME TOKEN``). The client side is here in full
(``channel_credentials``, ``read_token``); the server side (``service.security``) builds on the
same file reading and token-line rules."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import grpc

from api.contract import TOKEN_ENV


class SecurityConfigError(ValueError):
    """TLS or token settings that cannot be used as given (named in the message)."""


def read_file(path: Path, what: str) -> bytes:
    """The bytes of a credentials file; a missing, unreadable or empty file is refused, naming it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{what} {path}: {exc.strerror or exc}"
        raise SecurityConfigError(msg) from exc
    if not data.strip():
        msg = f"{what} {path} is empty"
        raise SecurityConfigError(msg)
    return data


def token_lines(text: str) -> list[str]:
    """Lines of a token file: one token per line, optionally after its name (``NAME TOKEN``);
    blank lines and ``#`` comments ignored."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _token_of(line: str) -> str:
    """The token of a token-file line (its last word)."""
    return line.rsplit(maxsplit=1)[-1]


def channel_credentials(
    ca_file: Path | None = None, cert_file: Path | None = None, key_file: Path | None = None
) -> grpc.ChannelCredentials:
    """Client TLS credentials: trust ``ca_file`` (None = system roots); ``cert_file`` + ``key_file``
    present a client certificate (mutual TLS)."""
    if (cert_file is None) != (key_file is None):
        msg = "a client certificate needs both --tls-cert and --tls-key"
        raise SecurityConfigError(msg)
    roots = read_file(ca_file, "CA certificate") if ca_file is not None else None
    chain = read_file(cert_file, "client certificate") if cert_file is not None else None
    private_key = read_file(key_file, "client key") if key_file is not None else None
    return grpc.ssl_channel_credentials(
        root_certificates=roots, private_key=private_key, certificate_chain=chain
    )


def read_token(token_file: Path | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The client's bearer token: the first token in ``token_file``, else ``$FLEETPLAN_TOKEN``."""
    if token_file is not None:
        tokens = token_lines(read_file(token_file, "token file").decode("utf-8"))
        if not tokens:
            msg = f"token file {token_file} has no tokens"
            raise SecurityConfigError(msg)
        return _token_of(tokens[0])
    value = (os.environ if env is None else env).get(TOKEN_ENV, "").strip()
    return value or None
