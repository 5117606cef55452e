"""The request's discount rate and objective (issue 32) reach the domain and survive a round trip;
a rate outside [0, 1) or NaN, an unknown objective and npv without a rate are refused naming the
field."""

from __future__ import annotations

import math
from typing import Any

import pytest
from convert_support import chat, violations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from pricebook.schema import Pricebook
from service.convert.encode import plan_request_to_proto
from service.convert.scenario import plan_request_from_proto
from solver.domain import CostObjective


def _request(**constraints: Any) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(workloads=[chat()], constraints=scenario_pb2.Constraints(**constraints))


def test_rate_and_objective_reach_the_domain(book: Pricebook) -> None:
    c = plan_request_from_proto(_request(discount_rate_annual=0.1), book).constraints
    assert (c.discount_rate_annual, c.objective, c.cost_objective) == (0.1, None, CostObjective.NPV)
    assert c.objective_discount_rate == 0.1
    nominal = _request(discount_rate_annual=0.1, objective=scenario_pb2.COST_OBJECTIVE_NOMINAL)
    c = plan_request_from_proto(nominal, book).constraints
    assert (c.cost_objective, c.objective_discount_rate) == (CostObjective.NOMINAL, 0.0)


def test_without_a_rate_the_objective_is_nominal(book: Pricebook) -> None:
    c = plan_request_from_proto(_request(), book).constraints
    assert (c.discount_rate_annual, c.cost_objective, c.objective_discount_rate) == (
        None,
        CostObjective.NOMINAL,
        0.0,
    )


@pytest.mark.parametrize("rate", [-0.05, 1.0, 3.0, math.inf, math.nan])
def test_a_bad_rate_names_the_field(book: Pricebook, rate: float) -> None:
    found = violations(_request(discount_rate_annual=rate), book)
    assert list(found) == ["constraints.discount_rate_annual"]
    assert "0 <= rate < 1" in found["constraints.discount_rate_annual"]


def test_npv_without_a_rate_is_refused(book: Pricebook) -> None:
    found = violations(_request(objective=scenario_pb2.COST_OBJECTIVE_NPV), book)
    assert any("discount_rate_annual" in reason for reason in found.values())
    assert all(path.startswith("constraints") for path in found)


def test_an_unknown_objective_names_the_field(book: Pricebook) -> None:
    assert violations(_request(objective=9), book) == {"constraints.objective": "unknown value 9"}


def test_the_settings_survive_a_round_trip(book: Pricebook) -> None:
    request = _request(discount_rate_annual=0.045, objective=scenario_pb2.COST_OBJECTIVE_NOMINAL)
    again = plan_request_from_proto(plan_request_to_proto(plan_request_from_proto(request, book)), book)
    assert (again.constraints.discount_rate_annual, again.constraints.objective) == (
        0.045,
        CostObjective.NOMINAL,
    )
