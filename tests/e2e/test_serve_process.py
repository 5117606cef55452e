"""``fleetplan serve`` as a real process: refuses a broken pricebook, drains and exits 0 on SIGTERM."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import pricebook

SERVE = [sys.executable, "-m", "clients.cli", "serve"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_broken_pricebook_refuses_to_start_naming_the_file(tmp_path: Path) -> None:
    book = tmp_path / "book"
    shutil.copytree(Path(pricebook.__file__).parent / "data", book)
    (book / "gpus.yaml").write_text("gpus: [\n", encoding="utf-8")
    result = subprocess.run(
        [*SERVE, "--address", f"127.0.0.1:{free_port()}", "--pricebook", str(book)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "cannot start" in result.stderr and "gpus.yaml" in result.stderr


@pytest.mark.slow
def test_sigterm_flips_health_and_exits_zero() -> None:
    address = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [*SERVE, "--address", address, "--grace-period-s", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with grpc.insecure_channel(address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service="fleetplan.v1.FleetPlanner")
            reply = stub.Check(request, timeout=30, wait_for_ready=True)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            process.send_signal(signal.SIGTERM)
            started = time.monotonic()
            code = process.wait(timeout=30)
        assert code == 0
        assert time.monotonic() - started < 10
        assert process.stderr is not None
        log = process.stderr.read()
        assert "server.stopping" in log and "server.stopped" in log
    finally:
        if process.poll() is None:
            process.kill()
