"""Request limits that must agree with the domain (the other caps are tested in
tests/reliability/test_limits.py)."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from service.limits import RequestLimits, check_request
from solver import domain


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
