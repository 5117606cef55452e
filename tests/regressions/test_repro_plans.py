"""Wrong answers found by independent checks (``tests/regressions/repro/``, copied from the shared
reproductions), each replayed through the real gRPC server and client and checked for what is
right — never for the exact numbers that came back.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2, scenario_pb2
from clients import FleetPlanError, FleetPlannerClient
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

REPRO = Path(__file__).parent / "repro"
pytestmark = pytest.mark.slow


def repro(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REPRO / name).read_text(encoding="utf-8"))
    return data


def plan_request(data: dict[str, Any]) -> api.PlanFleetRequest:
    return json_format.ParseDict(data, api.PlanFleetRequest())


@pytest.fixture(scope="module")
def client() -> Iterator[FleetPlannerClient]:
    server: ThreadedServer = start_in_thread(
        ServerSettings(address="127.0.0.1:0", grace_period_s=1.0, plan_cache_entries=0)
    )
    with FleetPlannerClient(server.address, timeout_s=120) as c:
        yield c
    server.stop(grace_s=0.5)


def tco(plan: plan_pb2.Plan) -> Decimal:
    return Decimal(plan.cost.horizon_tco.amount)


def fleet_of(plan: plan_pb2.Plan) -> scenario_pb2.Fleet:
    """The plan's fleet as EvaluateFleet input (server models included where the plan names them)."""
    fleet = scenario_pb2.Fleet()
    for line in plan.fleet:
        item = fleet.items.add(gpu_id=line.gpu_id, mode=line.mode, count=line.gpu_count, owned=line.owned)
        if line.server_id and "server_id" in scenario_pb2.FleetItem.DESCRIPTOR.fields_by_name:
            item.server_id = line.server_id
    return fleet


def evaluate_plan(client: FleetPlannerClient, request: api.PlanFleetRequest, plan: plan_pb2.Plan) -> Any:
    return client.evaluate_fleet(
        api.EvaluateFleetRequest(
            fleet=fleet_of(plan),
            workloads=request.workloads,
            constraints=request.constraints,
            solver_options=request.solver_options,
        )
    )


def held_gpus(plan: plan_pb2.Plan, gpu_id: str) -> int:
    """GPUs of one type the plan holds at its busiest hour (owned, bought, reserved, rented)."""
    return sum(line.gpu_count for line in plan.fleet if line.gpu_id == gpu_id)


# 01 -----------------------------------------------------------------------------------------


def test_training_runs_fit_the_gpus_the_plan_holds(client: FleetPlannerClient) -> None:
    request = plan_request(repro("01-training-deadline-few-gpus.json")["request"])
    plan = client.plan_fleet(request).plan
    assert plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
    for run in plan.training:
        rented_for_the_run = run.on_demand_gpu_hours_per_month >= run.gpu_hours_per_month * (1 - 1e-9)
        if not rented_for_the_run:  # runs on held GPUs need all of a run's GPUs at once
            assert run.gpus <= held_gpus(plan, run.gpu_id), (run.gpus, [str(line) for line in plan.fleet])
    evaluation = evaluate_plan(client, request, plan)
    assert evaluation.feasible, list(evaluation.messages)


# 02 -----------------------------------------------------------------------------------------


def test_evaluating_the_planned_fleet_gives_the_plan_tco(client: FleetPlannerClient) -> None:
    request = plan_request(repro("02-evaluate-misprices-planned-fleet.json")["request"])
    plan = client.plan_fleet(request).plan
    evaluation = evaluate_plan(client, request, plan)
    assert evaluation.feasible
    assert Decimal(evaluation.fleet_horizon_tco.amount) == tco(plan)


# 03 -----------------------------------------------------------------------------------------


def test_every_offered_backend_agrees_with_scip(client: FleetPlannerClient) -> None:
    data = repro("03-cp-sat-optimal-is-dearer.json")["request"]
    by_backend = {}
    for backend in ("SOLVER_BACKEND_SCIP", "SOLVER_BACKEND_HIGHS", "SOLVER_BACKEND_CP_SAT"):
        request = plan_request({**data, "solver_options": {**data["solver_options"], "backend": backend}})
        try:
            by_backend[backend] = client.plan_fleet(request).plan
        except FleetPlanError as error:  # a backend that is not offered is refused, naming the field
            assert error.code is grpc.StatusCode.INVALID_ARGUMENT
            assert any(v.field == "solver_options.backend" for v in error.violations)
    scip = by_backend.pop("SOLVER_BACKEND_SCIP")
    assert scip.status == plan_pb2.PLAN_STATUS_OPTIMAL
    for backend, plan in by_backend.items():
        assert plan.status == plan_pb2.PLAN_STATUS_OPTIMAL, backend
        assert abs(tco(plan) - tco(scip)) <= Decimal("0.01") * 2, (backend, tco(plan), tco(scip))


# 04 -----------------------------------------------------------------------------------------


def test_owning_some_of_the_gpus_never_makes_the_plan_dearer(client: FleetPlannerClient) -> None:
    base = repro("04-owned-gpus-make-plan-dearer.json")["base_request"]
    costs = []
    for owned in range(5):
        data = json.loads(json.dumps(base))
        if owned:
            data["constraints"]["owned_gpus"] = [{"gpu_id": "rtx-5090", "count": owned}]
        plan = client.plan_fleet(plan_request(data)).plan
        assert plan.status == plan_pb2.PLAN_STATUS_OPTIMAL, owned
        costs.append(tco(plan))
    for fewer, more in itertools.pairwise(costs):
        assert more <= fewer, costs


# 05 -----------------------------------------------------------------------------------------


def test_owned_gpus_that_do_not_fill_a_board_are_used_or_refused_by_name(client: FleetPlannerClient) -> None:
    data = repro("05-owned-partial-board-infeasible.json")["request"]
    owned = [{"gpu_id": "h200-sxm", "count": 2}]
    data = {**data, "constraints": {**data["constraints"], "owned_gpus": owned}}
    try:
        plan = client.plan_fleet(plan_request(data)).plan
    except FleetPlanError as error:
        assert error.code is grpc.StatusCode.INVALID_ARGUMENT
        assert any(v.field.startswith("constraints.owned_gpus[0]") for v in error.violations)
        return
    assert plan.status == plan_pb2.PLAN_STATUS_OPTIMAL


# 06 -----------------------------------------------------------------------------------------


def test_evaluating_a_fleet_too_small_for_redundancy_is_an_answer(client: FleetPlannerClient) -> None:
    data = repro("06-evaluate-internal-error.json")["request"]
    evaluation = client.evaluate_fleet(json_format.ParseDict(data, api.EvaluateFleetRequest()))
    assert not evaluation.feasible
    (fit,) = evaluation.fits
    assert fit.workload_name == "wl-0"
    assert 0 <= fit.served_fraction < 1
    assert fit.message


# 07 -----------------------------------------------------------------------------------------


def test_sweep_demand_multiplier_scales_inference_only(client: FleetPlannerClient) -> None:
    data = repro("07-sweep-demand-multiplier-scales-training.json")
    base = plan_request(data["base_request"])
    multiplier = data["multiplier"]
    sweep = api.SweepPlansRequest(
        base=base, dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER, values=[multiplier]
    )
    (point,) = [r.point for r in client.sweep_plans(sweep) if r.HasField("point")]
    scaled = json.loads(json.dumps(data["base_request"]))
    for workload in scaled["workloads"]:
        inference = workload.get("inference")
        if inference and "peak_request_rate_per_s" in inference:
            inference["peak_request_rate_per_s"] *= multiplier
    expected = client.plan_fleet(plan_request(scaled)).plan
    assert tco(point.plan) == tco(expected)


# 08 -----------------------------------------------------------------------------------------


def test_a_portfolio_is_never_dearer_than_its_halves_planned_apart(client: FleetPlannerClient) -> None:
    data = repro("08-portfolio-dearer-than-its-halves-hour-buckets.json")
    whole = client.plan_fleet(plan_request(data["request"])).plan
    parts = [client.plan_fleet(plan_request(data[key])).plan for key in ("part1", "part2")]
    assert whole.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert tco(whole) <= sum(tco(p) for p in parts) + Decimal(str(data["tolerance"]))


def test_hour_buckets_are_exact_for_two_interactive_profiles(client: FleetPlannerClient) -> None:
    """The reproduction's second workload as interactive work: both workloads keep their own hourly
    shapes (a batch workload is now sized at its daily average), which is what grouping hours into
    buckets must get right."""
    data = json.loads(json.dumps(repro("08-portfolio-dearer-than-its-halves-hour-buckets.json")))
    for key in ("request", "part2"):
        for workload in data[key]["workloads"]:
            workload["inference"]["serving_kind"] = "SERVING_KIND_INTERACTIVE"
    whole = client.plan_fleet(plan_request(data["request"])).plan
    parts = [client.plan_fleet(plan_request(data[key])).plan for key in ("part1", "part2")]
    assert whole.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert tco(whole) <= sum(tco(p) for p in parts) + Decimal(str(data["tolerance"]))


def _evaluate_with_fleet(client: FleetPlannerClient, items: list[dict[str, Any]]) -> Any:
    data = repro("06-evaluate-internal-error.json")["request"]
    data = {**data, "fleet": {"items": items}}
    return client.evaluate_fleet(json_format.ParseDict(data, api.EvaluateFleetRequest()))


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"gpu_id": "rtx-5090", "mode": "ACQUISITION_MODE_RESERVED", "count": 4}, "fleet.items[0]"),
        (
            {"gpu_id": "rtx-5090", "mode": "ACQUISITION_MODE_BUY", "count": 4, "server_id": "hgx-h200-8gpu"},
            "fleet.items[0].server_id",
        ),
    ],
)
def test_an_impossible_fleet_line_is_refused_naming_it(
    client: FleetPlannerClient, item: dict[str, Any], field: str
) -> None:
    with pytest.raises(FleetPlanError) as excinfo:
        _evaluate_with_fleet(client, [item])
    assert excinfo.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in excinfo.value.violations] == [field]


def test_a_fleet_line_may_name_its_server_model(client: FleetPlannerClient) -> None:
    request = plan_request(repro("02-evaluate-misprices-planned-fleet.json")["request"])
    for w in request.workloads:  # recorded when replicas were sized flat out: one fleet line
        if w.HasField("inference"):
            w.inference.target_utilization = 1.0
    plan = client.plan_fleet(request).plan
    # A line in another server model than the 4-GPU rig gets the rig instead (two 4-GPU rigs cost
    # more than the planned one); any other line of the plan stays as planned.
    line = next(f for f in plan.fleet if f.gpu_id == "rtx-4090" and f.server_id != "rig-rtx-4090-4gpu")
    others = [
        scenario_pb2.FleetItem(gpu_id=f.gpu_id, mode=f.mode, count=f.gpu_count, server_id=f.server_id)
        for f in plan.fleet
        if f is not line
    ]
    for server, cheapest in ((line.server_id, True), ("rig-rtx-4090-4gpu", False)):
        item = scenario_pb2.FleetItem(gpu_id=line.gpu_id, mode=line.mode, count=line.gpu_count)
        item.server_id = server
        evaluation = client.evaluate_fleet(
            api.EvaluateFleetRequest(
                fleet=scenario_pb2.Fleet(items=[item, *others]),
                workloads=request.workloads,
                constraints=request.constraints,
            )
        )
        assert evaluation.feasible
        same = Decimal(evaluation.fleet_horizon_tco.amount) == tco(plan)
        assert same is cheapest
