"""TLS, mutual TLS and bearer tokens end to end: raw gRPC channels, the typed client and the CLI
against a server in a subprocess (``fleetplan serve``) whose logs must never contain the token."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from reliability_support import Certs, error_reason, small_plan, spawn_server

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from clients import cli
from clients.client import FleetPlanError, FleetPlannerClient
from service.security import channel_credentials
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

TOKEN = "tok-3f9c2a7be1d54f0a9a1e"
OTHER_TOKEN = "tok-0000000000000000"


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.txt"
    tokens.write_text(f"# accepted\n{OTHER_TOKEN}\n{TOKEN}\n", encoding="utf-8")
    server = start_in_thread(ServerSettings(address="127.0.0.1:0", token_file=tokens))
    yield server
    server.stop(grace_s=0.5)


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ((), "MISSING_TOKEN"),
        ((("authorization", f"Bearer {TOKEN}x"),), "INVALID_TOKEN"),
        ((("authorization", TOKEN),), "INVALID_TOKEN"),
        ((("authorization", "Bearer "),), "INVALID_TOKEN"),
    ],
)
def test_missing_or_wrong_token_is_unauthenticated(
    token_server: ThreadedServer, metadata: tuple[tuple[str, str], ...], reason: str
) -> None:
    with grpc.insecure_channel(token_server.address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        with pytest.raises(grpc.RpcError) as unary:
            stub.ListCatalog(api.ListCatalogRequest(), timeout=10, metadata=metadata)
        with pytest.raises(grpc.RpcError) as stream:
            list(stub.SweepPlans(api.SweepPlansRequest(), timeout=10, metadata=metadata))
    for error in (unary.value, stream.value):
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_reason(error) == reason


def test_right_token_passes_and_health_needs_none(token_server: ThreadedServer) -> None:
    with FleetPlannerClient(token_server.address, bearer_token=TOKEN) as client:
        assert client.list_catalog().gpus
        assert client.plan_fleet(small_plan()).plan.fleet
    with FleetPlannerClient(token_server.address, bearer_token=OTHER_TOKEN) as client:
        assert client.list_catalog().gpus
    with grpc.insecure_channel(token_server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING


def test_tls_server_refuses_plaintext_and_serves_tls(certs: Certs) -> None:
    settings = ServerSettings(
        address="127.0.0.1:0", tls_cert_file=certs.server_cert, tls_key_file=certs.server_key
    )
    with start_in_thread(settings) as server:
        with FleetPlannerClient(
            server.address, credentials=channel_credentials(certs.ca), timeout_s=10
        ) as client:
            assert client.list_catalog().gpus
        with (
            FleetPlannerClient(server.address, timeout_s=3) as plain,
            pytest.raises(FleetPlanError) as refused,
        ):
            plain.list_catalog()
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
        # A client that does not trust the server's CA refuses to talk to it.
        untrusted = channel_credentials(certs.other_ca)
        with (
            FleetPlannerClient(server.address, credentials=untrusted, timeout_s=3) as client,
            pytest.raises(FleetPlanError) as mistrust,
        ):
            client.list_catalog()
        assert mistrust.value.code == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_requires_a_client_certificate_from_the_trusted_ca(certs: Certs) -> None:
    settings = ServerSettings(
        address="127.0.0.1:0",
        tls_cert_file=certs.server_cert,
        tls_key_file=certs.server_key,
        tls_client_ca_file=certs.ca,
    )
    with start_in_thread(settings) as server:
        good = channel_credentials(certs.ca, certs.client_cert, certs.client_key)
        with FleetPlannerClient(server.address, credentials=good, timeout_s=10) as client:
            assert client.list_catalog().gpus
        for credentials in (
            channel_credentials(certs.ca),
            channel_credentials(certs.ca, certs.other_client_cert, certs.other_client_key),
        ):
            with (
                FleetPlannerClient(server.address, credentials=credentials, timeout_s=3) as client,
                pytest.raises(FleetPlanError) as refused,
            ):
                client.list_catalog()
            assert refused.value.code == grpc.StatusCode.UNAVAILABLE


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main(list(argv), out=out), out.getvalue()


def test_cli_with_mtls_and_token_against_a_served_process(
    certs: Certs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKEN + "\n", encoding="utf-8")
    client_token = tmp_path / "client-token.txt"
    client_token.write_text(TOKEN + "\n", encoding="utf-8")
    served = spawn_server(
        "--tls-cert-file",
        str(certs.server_cert),
        "--tls-key-file",
        str(certs.server_key),
        "--tls-client-ca-file",
        str(certs.ca),
        "--token-file",
        str(tokens),
    )
    try:
        tls = [
            "--target",
            f"localhost:{served.port}",
            "--ca-file",
            str(certs.ca),
            "--cert-file",
            str(certs.client_cert),
            "--key-file",
            str(certs.client_key),
            "--timeout-s",
            "20",
        ]
        code, out = _cli("catalog", "--kind", "gpu", *tls, "--token-file", str(client_token))
        assert code == 0 and "h200" in out.lower()
        monkeypatch.setenv("FLEETPLAN_TOKEN", TOKEN)  # the token from the environment works too
        assert _cli("catalog", "--kind", "gpu", *tls)[0] == 0
        monkeypatch.delenv("FLEETPLAN_TOKEN")
        capsys.readouterr()
        code, _ = _cli("catalog", "--kind", "gpu", *tls)
        assert code != 0
        assert "UNAUTHENTICATED" in capsys.readouterr().err
        # Without a client certificate the TLS handshake fails: no answer at all.
        code, _ = _cli(
            "catalog",
            "--kind",
            "gpu",
            "--target",
            f"localhost:{served.port}",
            "--ca-file",
            str(certs.ca),
            "--token-file",
            str(client_token),
            "--timeout-s",
            "3",
        )
        assert code != 0
        assert "UNAVAILABLE" in capsys.readouterr().err
    finally:
        assert served.terminate_and_wait() == 0
    lines = served.read_log()
    rpc_lines = [line for line in lines if line.get("event") == "rpc"]
    assert {line.get("status") for line in rpc_lines} >= {"OK", "UNAUTHENTICATED"}  # calls were logged…
    assert TOKEN not in "\n".join(str(line) for line in lines)  # …without their token


def test_server_reflection_needs_the_token_too(token_server: ThreadedServer) -> None:
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    with grpc.insecure_channel(token_server.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            list(stub.ServerReflectionInfo(iter([request]), timeout=5))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        answers = list(
            stub.ServerReflectionInfo(
                iter([request]), timeout=5, metadata=(("authorization", f"Bearer {TOKEN}"),)
            )
        )
    services = {s.name for s in answers[0].list_services_response.service}
    assert "fleetplan.v1.FleetPlanner" in services
