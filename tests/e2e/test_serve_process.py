"""``fleetplan serve`` as a real process: refuses a broken pricebook, drains and exits 0 on SIGTERM."""

from __future__ import annotations

import json
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
from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlanError, FleetPlannerClient
from clients.scenario import load_scenario

SERVE = [sys.executable, "-m", "clients.cli", "serve"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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


def rpc_lines(log: str) -> list[dict[str, object]]:
    lines = []
    for text in log.splitlines():
        if text.startswith("{"):
            record = json.loads(text)
            if record.get("event") == "rpc":
                lines.append(record)
    return lines


@pytest.mark.slow
def test_one_json_log_line_per_rpc_then_sigterm_drains_and_exits_zero() -> None:
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
            with FleetPlannerClient(address, timeout_s=60) as client:
                client.list_catalog([catalog_pb2.CATALOG_KIND_SITE], request_id="catalog-1")
                plan = load_scenario(EXAMPLES / "60m_krw_single_gpu.yaml", api.PlanFleetRequest)
                client.plan_fleet(plan, request_id="plan-1")
                with pytest.raises(FleetPlanError):
                    client.plan_fleet(api.PlanFleetRequest(), request_id="bad-1")
            process.send_signal(signal.SIGTERM)
            started = time.monotonic()
            code = process.wait(timeout=30)
        assert code == 0
        assert time.monotonic() - started < 10
        assert process.stderr is not None
        log = process.stderr.read()
        assert "server.stopping" in log and "server.stopped" in log
        by_id = {str(line["request_id"]): line for line in rpc_lines(log)}
        for request_id, method, status in (
            ("catalog-1", "/fleetplan.v1.FleetPlanner/ListCatalog", "OK"),
            ("plan-1", "/fleetplan.v1.FleetPlanner/PlanFleet", "OK"),
            ("bad-1", "/fleetplan.v1.FleetPlanner/PlanFleet", "INVALID_ARGUMENT"),
        ):
            assert [line["request_id"] for line in rpc_lines(log)].count(request_id) == 1
            line = by_id[request_id]
            assert (line["method"], line["status"]) == (method, status)
            assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
        solver = by_id["plan-1"]["solver"]
        assert isinstance(solver, dict) and solver["status"] in ("optimal", "feasible") and solver["backend"]
        assert "solver" not in by_id["catalog-1"]
    finally:
        if process.poll() is None:
            process.kill()
