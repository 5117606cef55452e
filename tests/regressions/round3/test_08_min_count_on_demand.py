"""Reproduction 08: with on-demand rental only, any ``count_bounds`` min_count made PlanFleet
INFEASIBLE ("no cap can be blamed"), even a minimum the unconstrained optimum already meets: a
minimum counted held GPUs only. It counts GPUs of every allowed mode at the plan's busiest hour.
Side note of the reproduction: EvaluateFleet of h100-sxm ×4 on demand printed the fleet as ×3
without a word; the answer now says that 3 of the 4 given are rented at the busiest hour."""

from __future__ import annotations

from decimal import Decimal

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from clients import FleetPlannerClient
from tests.regressions.round3.robust_support import scenario

pytestmark = pytest.mark.slow

HAS_PLAN = (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)


def _gpus(plan: plan_pb2.Plan, gpu_id: str) -> int:
    return sum(line.gpu_count for line in plan.fleet if line.gpu_id == gpu_id)


def test_a_minimum_the_optimum_meets_changes_nothing(client: FleetPlannerClient) -> None:
    bounded = scenario("08-min-count-on-demand-infeasible-minimal")
    free = scenario("08-min-count-on-demand-infeasible-minimal")
    del free.constraints.count_bounds[:]
    reference = client.plan_fleet(free).plan
    assert reference.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert _gpus(reference, "l40s") >= bounded.constraints.count_bounds[0].min_count
    answer = client.plan_fleet(bounded).plan
    assert answer.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert Decimal(answer.cost.horizon_tco.amount) == Decimal(reference.cost.horizon_tco.amount)


def test_minimums_on_rented_gpus_are_met_and_the_fleet_serves(client: FleetPlannerClient) -> None:
    request = scenario("08-min-count-on-demand-infeasible")
    request.solver_options.time_limit_s = 20
    plan = client.plan_fleet(request).plan
    assert plan.status in HAS_PLAN
    for bound in request.constraints.count_bounds:
        assert _gpus(plan, bound.gpu_id) >= bound.min_count
    fleet = api.EvaluateFleetRequest(
        workloads=request.workloads, constraints=request.constraints, compare_with_optimal=False
    )
    for line in plan.fleet:
        fleet.fleet.items.add(gpu_id=line.gpu_id, mode=line.mode, count=line.gpu_count)
    evaluation = client.evaluate_fleet(fleet)
    assert evaluation.feasible


def test_evaluate_says_when_fewer_on_demand_gpus_are_rented_than_given(client: FleetPlannerClient) -> None:
    request = scenario("08-min-count-on-demand-infeasible")
    fleet = api.EvaluateFleetRequest(
        workloads=request.workloads, constraints=request.constraints, compare_with_optimal=False
    )
    for gpu, count in (("h100-sxm", 4), ("l4", 1), ("l40s", 11)):
        fleet.fleet.items.add(gpu_id=gpu, mode=request.constraints.allowed_modes[0], count=count)
    evaluation = client.evaluate_fleet(fleet)
    assert evaluation.feasible
    shown = _gpus(evaluation.plan, "h100-sxm")
    if shown < 4:
        assert any(m.startswith(f"h100-sxm on_demand: 4 given, {shown} rented") for m in evaluation.messages)
