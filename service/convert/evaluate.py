"""EvaluateFleet: a fleet and a scenario in, the fleet's fit, cost and plan out."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from pricebook.schema import Pricebook
from service.convert.money import set_money
from service.convert.plan import finite, plan_to_proto
from service.convert.scenario import fleet_from_proto, scenario_request
from service.convert.violations import raise_if
from solver import domain, planner
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import ResolvedRequest


def evaluate_request_from_proto(
    message: api.EvaluateFleetRequest, book: Pricebook
) -> tuple[domain.Fleet, ResolvedRequest]:
    violations: list[FieldViolation] = []
    fleet: domain.Fleet | None = None
    request: ResolvedRequest | None = None
    if not message.HasField("fleet") or not message.fleet.items:
        violations.append(FieldViolation("fleet.items", "a fleet needs at least one item"))
    else:
        try:
            fleet = fleet_from_proto(message.fleet, book)
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    try:
        request = scenario_request(message, book)
    except InvalidRequest as exc:
        violations.extend(exc.violations)
    raise_if(violations)
    assert fleet is not None and request is not None
    return fleet, request


def evaluation_to_proto(
    result: planner.EvaluationResult, book: Pricebook | None = None
) -> api.EvaluateFleetResponse:
    response = api.EvaluateFleetResponse(
        feasible=result.feasible,
        plan=plan_to_proto(result.plan, book),
        fits=[
            plan_pb2.WorkloadFit(
                workload_name=f.workload,
                served_fraction=finite(f.served_fraction),
                headroom_fraction=finite(f.headroom_fraction),
                message=f.message,
            )
            for f in result.fits
        ],
        messages=list(result.messages),
    )
    set_money(response, "fleet_horizon_tco", result.fleet_horizon_tco)
    set_money(response, "optimal_horizon_tco", result.optimal_horizon_tco)
    set_money(response, "saving_of_optimal", result.saving_of_optimal)
    return response
