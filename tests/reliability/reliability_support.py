"""Shared pieces of the reliability tests: a real server on loopback (in a thread, or in a
subprocess through ``fleetplan serve``), small requests, and trustme certificates."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import trustme
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from service.convert.encode import plan_request_to_proto
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings
from solver.domain import InferenceWorkload, ModelRef, PlanRequest, Sla, SolverOptions

REPO = Path(__file__).resolve().parents[2]


def small_plan(name: str = "chat", daily_tokens: int = 2_000_000_000, **options: Any) -> api.PlanFleetRequest:
    """One 14B chat workload: solves in well under a second."""
    request = PlanRequest(
        inference=(
            InferenceWorkload(
                name=name,
                model=ModelRef(model_id="Qwen/Qwen3-14B"),
                input_tokens=2000,
                output_tokens=500,
                daily_tokens=daily_tokens,
                sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
            ),
        ),
        options=SolverOptions(**options),
    )
    return plan_request_to_proto(request)


def portfolio_plan() -> api.PlanFleetRequest:
    """The 500M KRW example (examples/500m_krw_portfolio.yaml), as the CLI would send it."""
    return load_scenario(REPO / "examples" / "500m_krw_portfolio.yaml", api.PlanFleetRequest)


_D = TypeVar("_D", error_details_pb2.ErrorInfo, error_details_pb2.RetryInfo)


def _detail(error: grpc.RpcError, kind: type[_D]) -> _D | None:
    """The status detail of type ``kind`` of a failed call (fails the test without rich details)."""
    status = rpc_status.from_call(error)
    assert status is not None, f"{error.code()} without rich details: {error.details()}"
    for detail in status.details:
        if detail.Is(kind.DESCRIPTOR):
            found = kind()
            detail.Unpack(found)
            return found
    return None


def error_reason(error: grpc.RpcError) -> str:
    """The ``ErrorInfo`` reason of a failed call ('' without one)."""
    info = _detail(error, error_details_pb2.ErrorInfo)
    return str(info.reason) if info is not None else ""


def retry_delay_s(error: grpc.RpcError) -> float | None:
    """The ``RetryInfo`` delay of a failed call (None without one)."""
    info = _detail(error, error_details_pb2.RetryInfo)
    return None if info is None else float(info.retry_delay.seconds + info.retry_delay.nanos / 1e9)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    # Solve slots and queues are under test: every call is a real solve (no answer reuse).
    settings = ServerSettings(address="127.0.0.1:0", solve_slots=2, max_queued_solves=4, plan_cache_entries=0)
    threaded = start_in_thread(settings)
    yield threaded
    threaded.stop(grace_s=0.5)


@pytest.fixture
def channel(server: ThreadedServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as ch:
        yield ch


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
    port: int
    log_lines: list[dict[str, Any]]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def terminate_and_wait(self, timeout_s: float = 30.0) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout_s)

    def read_log(self) -> list[dict[str, Any]]:
        """Every JSON log line the server wrote (after it exited)."""
        assert self.process.stderr is not None
        for line in self.process.stderr.read().splitlines():
            try:
                self.log_lines.append(json.loads(line))
            except json.JSONDecodeError:
                self.log_lines.append({"event": "<raw>", "text": line})
        return self.log_lines


def spawn_server(
    *args: str, env: dict[str, str] | None = None, address: str = "127.0.0.1:0"
) -> ServerProcess:
    """``fleetplan serve`` in a fresh interpreter; returns once it logged ``server.started``."""
    command = [sys.executable, "-m", "clients.cli", "serve", "--address", address, *args]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        command, cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    assert process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode} before starting: {lines}")
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = {"event": "<raw>", "text": line}
        lines.append(record)
        if record.get("event") == "server.started":
            return ServerProcess(process, int(record["port"]), lines)
    process.kill()
    raise RuntimeError(f"server did not start within 60 s: {lines}")


@dataclass(frozen=True)
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    other_client_cert: Path
    other_client_key: Path


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    root = tmp_path_factory.mktemp("certs")
    ca = trustme.CA()
    other = trustme.CA()  # a CA the server does not trust
    server_cert = ca.issue_cert("localhost", "127.0.0.1")
    client_cert = ca.issue_cert("client@fleetplan.test")
    other_client = other.issue_cert("intruder@fleetplan.test")

    def write(name: str, data: bytes) -> Path:
        path = root / name
        path.write_bytes(data)
        return path

    return Certs(
        ca=write("ca.pem", ca.cert_pem.bytes()),
        server_cert=write("server.pem", b"".join(b.bytes() for b in server_cert.cert_chain_pems)),
        server_key=write("server.key", server_cert.private_key_pem.bytes()),
        client_cert=write("client.pem", b"".join(b.bytes() for b in client_cert.cert_chain_pems)),
        client_key=write("client.key", client_cert.private_key_pem.bytes()),
        other_ca=write("other-ca.pem", other.cert_pem.bytes()),
        other_client_cert=write(
            "other-client.pem", b"".join(b.bytes() for b in other_client.cert_chain_pems)
        ),
        other_client_key=write("other-client.key", other_client.private_key_pem.bytes()),
    )
