"""Request limits that must agree with the domain (the other caps are tested in
tests/reliability/test_limits.py)."""

from __future__ import annotations

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from service.limits import require_plan_within_deadline
from service.request_limits import RequestLimits, check_request
from solver import domain
from solver.errors import DeadlineExceeded
from solver.optimizer.results import FleetSolution
from tests.solver.optimizer.opt_factories import no_plan


def _named(name: str) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(
        workloads=[
            scenario_pb2.Workload(name=name, inference=scenario_pb2.InferenceWorkload(input_tokens=10))
        ]
    )


def test_the_name_cap_is_the_domains() -> None:
    assert RequestLimits().max_name_chars == domain.MAX_NAME_CHARS
    assert check_request(_named("n" * domain.MAX_NAME_CHARS)) == []


def test_a_200_character_name_is_refused_naming_the_field_and_the_limit() -> None:
    [violation] = check_request(_named("n" * 200))
    assert violation.field == "workloads[0].name"
    assert "max_name_chars" in violation.reason and str(domain.MAX_NAME_CHARS) in violation.reason


def _no_plan() -> FleetSolution:
    return no_plan(0.7)


def test_no_plan_under_the_requests_own_time_limit_is_not_the_callers_deadline() -> None:
    # time_limit_s 1 with a 60 s deadline: the request's own limit ended the solve.
    require_plan_within_deadline(_no_plan(), 1.0, has_deadline=True, deadline_limited=False)


def test_no_plan_when_the_callers_deadline_cut_the_solve_is_deadline_exceeded() -> None:
    with pytest.raises(DeadlineExceeded, match="caller's deadline"):
        require_plan_within_deadline(_no_plan(), 10.0, has_deadline=True, deadline_limited=True)
    require_plan_within_deadline(_no_plan(), 10.0, has_deadline=False, deadline_limited=True)
