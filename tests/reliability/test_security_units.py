"""Token parsing and comparison, TLS configuration checks and log redaction (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from clients import cli
from service.security import (
    SecurityConfigError,
    accepted_tokens,
    named_tokens,
    read_token,
    redact_sensitive,
    requester_name,
    server_credentials,
    token_fingerprint,
    token_matches,
)
from service.settings import ServerSettings


def test_token_file_lines_comments_and_env_token(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# ops team\nalpha-123\n\n  beta-456  \n", encoding="utf-8")
    settings = ServerSettings(token_file=tokens, token=SecretStr("gamma-789"))
    assert accepted_tokens(settings) == (b"alpha-123", b"beta-456", b"gamma-789")
    assert accepted_tokens(ServerSettings()) == ()


def test_empty_or_unreadable_token_file_refuses_to_start(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(SecurityConfigError, match="no tokens"):
        accepted_tokens(ServerSettings(token_file=empty))
    with pytest.raises(SecurityConfigError, match="missing"):
        accepted_tokens(ServerSettings(token_file=tmp_path / "missing"))


def test_token_matches_needs_an_exact_token() -> None:
    accepted = (b"alpha-123", b"beta-456")
    assert token_matches(b"beta-456", accepted)
    assert not token_matches(b"beta-45", accepted)
    assert not token_matches(b"beta-4567", accepted)
    assert not token_matches(b"", accepted)


def test_client_token_from_file_then_env(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_text("# mine\nsecret-1\nsecret-2\n", encoding="utf-8")
    assert read_token(path, env={}) == "secret-1"
    assert read_token(None, env={"FLEETPLAN_TOKEN": " env-tok "}) == "env-tok"
    assert read_token(None, env={}) is None


def test_half_tls_configuration_is_refused(tmp_path: Path) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("x", encoding="utf-8")
    with pytest.raises(SecurityConfigError, match="tls_key_file"):
        server_credentials(ServerSettings(tls_cert_file=cert))
    with pytest.raises(SecurityConfigError, match="tls_cert_file"):
        server_credentials(ServerSettings(tls_client_ca_file=cert))
    assert server_credentials(ServerSettings()) is None


def test_redaction_drops_secrets_always_and_prices_above_debug() -> None:
    def event() -> dict[str, Any]:
        return {
            "event": "rpc",
            "authorization": "Bearer s3cret",
            "method": "/x",
            "solver": {"status": "optimal", "objective": 123456.0, "bound": 123000.0, "gap": 0.0},
        }

    info = redact_sensitive(None, "info", event())
    assert info == {"event": "rpc", "method": "/x", "solver": {"status": "optimal", "gap": 0.0}}
    debug = redact_sensitive(None, "debug", event())
    assert "authorization" not in debug
    assert debug["solver"]["objective"] == 123456.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-cert-file", "{cert}"], "tls_key_file"),
        (["--tls-client-ca-file", "{cert}"], "tls_cert_file"),
        (["--token-file", "{missing}"], "token file"),
    ],
)
def test_serve_refuses_to_start_half_configured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("not used: the configuration is refused first", encoding="utf-8")
    argv = [
        "serve",
        "--address",
        "127.0.0.1:0",
        *(f.format(cert=cert, missing=tmp_path / "missing") for f in flags),
    ]
    assert cli.main(argv) != 0
    assert message in capsys.readouterr().err


def test_a_key_that_does_not_match_its_certificate_is_named(certs: Any) -> None:
    settings = ServerSettings(tls_cert_file=certs.server_cert, tls_key_file=certs.client_key)
    with pytest.raises(SecurityConfigError, match="the key does not match the certificate"):
        server_credentials(settings)
    assert server_credentials(ServerSettings(tls_cert_file=certs.server_cert, tls_key_file=certs.server_key))


def test_token_lines_may_name_their_token(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice tok-a\ntok-b\n", encoding="utf-8")
    named = named_tokens(ServerSettings(token_file=tokens))
    assert named == {b"tok-a": "alice", b"tok-b": token_fingerprint(b"tok-b")}
    assert accepted_tokens(ServerSettings(token_file=tokens)) == (b"tok-a", b"tok-b")
    assert requester_name((("authorization", "Bearer tok-a"),), named) == "alice"
    assert requester_name((("authorization", "Bearer wrong"),), named) == ""
    assert requester_name((), named) == ""
    tokens.write_text("one two three\n", encoding="utf-8")
    with pytest.raises(SecurityConfigError):
        named_tokens(ServerSettings(token_file=tokens))
