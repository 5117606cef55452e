"""A plan the time limit stopped far from its bound is not presented as a plan to buy: its status
is PLAN_STATUS_GAP_TOO_WIDE, the summary starts by saying so and a warning repeats it; the plan
still comes back for inspection. The threshold is the request's ``max_gap`` (default 10 %)."""

from __future__ import annotations

import dataclasses
import time

import grpc
import pytest
from reliability_support import small_plan

from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from api.fleetplan.v1 import plan_pb2
from pricebook import load_default
from service.convert.plan import plan_to_proto
from service.convert.scenario import scenario_request
from service.server import ThreadedServer
from solver.domain import DEFAULT_MAX_GAP
from solver.optimizer.candidates import build_instance
from solver.optimizer.results import LimitFired, SolveStatus
from solver.planner.assemble import Extras, assemble_result
from solver.planner.plan import plan_request
from solver.planner.results import PlanResult


def _as_if_stopped_at(gap: float, *, max_gap: float | None = None) -> tuple[PlanResult, plan_pb2.Plan]:
    """A real small plan, re-assembled as if the time limit had stopped its solve ``gap`` from its
    bound (the bound below the objective by that share)."""
    book = load_default()
    resolved = scenario_request(small_plan() if max_gap is None else small_plan(max_gap=max_gap), book)
    proven = plan_request(resolved, time_limit_s=30, cancel=None, with_extras=False)
    assert proven.status is SolveStatus.OPTIMAL
    stats = proven.solution.stats
    assert stats.objective is not None
    stopped = dataclasses.replace(
        proven.solution,
        status=SolveStatus.FEASIBLE,
        stats=dataclasses.replace(
            stats,
            status=SolveStatus.FEASIBLE,
            gap=gap,
            best_bound=stats.objective * (1 - gap),
            limit_fired=LimitFired.TIME,
        ),
    )
    instance = build_instance(resolved.request, book)
    started = time.monotonic()
    result = assemble_result(
        resolved.request, book, instance, stopped, extras=Extras(), overrides_applied=(), started=started
    )
    return result, plan_to_proto(result, book)


def test_default_threshold_is_ten_percent() -> None:
    assert DEFAULT_MAX_GAP == 0.10


def test_a_plan_far_from_its_bound_is_for_inspection_only() -> None:
    result, plan = _as_if_stopped_at(0.40)
    assert result.gap_too_wide is True
    assert plan.status == plan_pb2.PLAN_STATUS_GAP_TOO_WIDE
    assert plan.summary.startswith("Not a plan to buy")
    assert "40.0%" in plan.summary and "10%" in plan.summary
    assert any(w.startswith("Not a plan to buy") for w in plan.warnings)
    assert plan.fleet, "the plan still comes back"
    # The solver's own statistics still say what it found: a feasible plan, 40 % from its bound.
    assert plan.solver_statistics.status == plan_pb2.PLAN_STATUS_FEASIBLE
    assert plan.solver_statistics.relative_gap == pytest.approx(0.40)


def test_a_plan_within_the_threshold_stays_feasible() -> None:
    _, plan = _as_if_stopped_at(0.05)
    assert plan.status == plan_pb2.PLAN_STATUS_FEASIBLE
    assert not plan.summary.startswith("Not a plan to buy")


def test_the_threshold_is_set_per_request() -> None:
    _, loose = _as_if_stopped_at(0.40, max_gap=0.5)
    assert loose.status == plan_pb2.PLAN_STATUS_FEASIBLE
    _, strict = _as_if_stopped_at(0.05, max_gap=0.01)
    assert strict.status == plan_pb2.PLAN_STATUS_GAP_TOO_WIDE
    assert "1%" in strict.summary


def test_a_proven_plan_is_never_too_wide(server: ThreadedServer) -> None:
    with grpc.insecure_channel(server.address) as channel:
        plan = rpc.FleetPlannerStub(channel).PlanFleet(small_plan(max_gap=0.0), timeout=60).plan
    assert plan.status == plan_pb2.PLAN_STATUS_OPTIMAL


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), float("inf")])
def test_max_gap_out_of_range_is_invalid_argument(server: ThreadedServer, bad: float) -> None:
    request = small_plan()
    request.solver_options.max_gap = bad
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as info:
        rpc.FleetPlannerStub(channel).PlanFleet(request, timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "solver_options.max_gap" in (info.value.details() or "")
