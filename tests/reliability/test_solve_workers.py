"""Solves in worker processes (``service.worker_pool``) on a real server: while both workers are
busy with big solves, cheap calls (catalogue, health, one estimate) are answered — the solves are
still running when the answers come (ordering, not timing) — and cancelling the calls stops the
solves in the workers and frees their slots."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from bench.load import ESTIMATE_CASES, PORTFOLIO
from bench.solver_scaling import portfolio
from clients.scenario import load_scenario
from service.convert.encode import plan_request_to_proto
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

WAIT_S = 120.0


def _cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of a process (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    settings = ServerSettings(
        address="127.0.0.1:0", solve_slots=2, solve_processes=2, plan_cache_entries=0, estimate_processes=0
    )
    threaded = start_in_thread(settings)
    _until(lambda: threaded.built.servicer._solves.ready() is not None, "the solve workers did not start")
    yield threaded
    threaded.stop(grace_s=0.5)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_cheap_calls_are_answered_while_every_worker_solves_and_a_cancel_stops_them(
    server: ThreadedServer,
) -> None:
    gate = server.built.servicer.gate
    workers = server.built.servicer._solves.ready()
    assert workers is not None
    pids = list(workers._processes)
    base = portfolio(100)
    request = plan_request_to_proto(
        base.model_copy(update={"options": base.options.model_copy(update={"time_limit_s": 90})})
    )
    estimate = json_format.ParseDict({"cases": ESTIMATE_CASES[:1]}, api.EstimatePerformanceRequest())
    with grpc.insecure_channel(server.address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        before = {pid: _cpu_ticks(pid) for pid in pids}
        solves = [stub.PlanFleet.future(request, timeout=WAIT_S + 60) for _ in range(2)]
        _until(lambda: gate.running == 2, "the two solves did not start")
        _until(lambda: all(_cpu_ticks(pid) > before[pid] + 20 for pid in pids), "the workers are not solving")
        catalog = stub.ListCatalog(api.ListCatalogRequest(), timeout=WAIT_S)
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=WAIT_S)
        rows = stub.EstimatePerformance(estimate, timeout=WAIT_S)
        # Answered while both solves still hold their slots.
        assert gate.running == 2 and not any(s.done() for s in solves)
        assert catalog.gpus and health.status == health_pb2.HealthCheckResponse.SERVING and rows.results
        for solve in solves:
            solve.cancel()
        _until(lambda: gate.running == 0, "the cancelled solves kept their slots")
        for solve in solves:
            with pytest.raises(grpc.FutureCancelledError):
                solve.result()


@pytest.mark.slow
def test_a_sweep_streams_from_a_worker_the_plans_a_plan_call_gets(server: ThreadedServer) -> None:
    """Each point of a sweep solved in a worker is the plan PlanFleet gives for the same demand."""
    base = load_scenario(PORTFOLIO, api.PlanFleetRequest)
    base.solver_options.compute_sensitivity = False
    sweep = api.SweepPlansRequest(
        base=base, dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER, values=[1.0, 2.0]
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        answers = list(stub.SweepPlans(sweep, timeout=WAIT_S))
        points = [a.point for a in answers if a.HasField("point")]
        assert [p.value for p in points] == [1.0, 2.0]
        assert sum(a.HasField("frontier") for a in answers) == 1
        plain = stub.PlanFleet(base, timeout=WAIT_S).plan
    assert points[0].plan.cost.horizon_tco.amount == plain.cost.horizon_tco.amount
    assert points[0].plan.status == plain.status


@pytest.mark.slow
def test_break_even_and_a_quote_are_answered_from_a_worker(server: ThreadedServer) -> None:
    """AnalyzeBreakEven and ExportPlan of a scenario run in the workers too (their plan, and the
    quote's rendering)."""
    base = load_scenario(PORTFOLIO, api.PlanFleetRequest)
    with grpc.insecure_channel(server.address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        plain = stub.PlanFleet(base, timeout=WAIT_S).plan
        gpu = plain.fleet[0].gpu_id
        break_even = stub.AnalyzeBreakEven(
            api.AnalyzeBreakEvenRequest(
                workloads=base.workloads,
                gpu_id=gpu,
                constraints=base.constraints,
                pricebook_overrides=base.pricebook_overrides,
            ),
            timeout=WAIT_S,
        )
        quote = stub.ExportPlan(
            api.ExportPlanRequest(request=base, format=api.REPORT_FORMAT_HTML), timeout=WAIT_S
        )
    assert break_even.HasField("break_even") and break_even.plan.fleet
    assert quote.media_type.startswith("text/html") and quote.content
    assert quote.provenance.pricebook_version
