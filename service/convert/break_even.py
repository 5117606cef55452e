"""AnalyzeBreakEven: a scenario with a GPU type or a fleet in, buy-vs-rent and API break-evens out."""

from __future__ import annotations

from dataclasses import dataclass

from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.fields import optional
from service.convert.plan import break_even_to_proto, plan_to_proto, unit_cost_to_proto
from service.convert.scenario import fleet_from_proto, scenario_request
from service.convert.violations import raise_if
from solver import domain, planner
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import References, ResolvedRequest


@dataclass(frozen=True, slots=True)
class BreakEvenQuery:
    """A validated AnalyzeBreakEven request."""

    request: ResolvedRequest
    gpu: str | None
    """A catalogue id."""
    fleet: domain.Fleet | None
    utilization: float | None


def _subject(
    message: api.AnalyzeBreakEvenRequest, book: Pricebook, violations: list[FieldViolation]
) -> tuple[str | None, domain.Fleet | None]:
    """The GPU type or the fleet the break-even is about (at most one of them)."""
    gpu: str | None = None
    fleet: domain.Fleet | None = None
    if message.gpu_id:
        refs = References(book)
        gpu = refs.gpu(message.gpu_id, "gpu_id")
        violations.extend(refs.violations)
    if message.HasField("fleet"):
        if gpu is not None:
            violations.append(FieldViolation("fleet", "give a GPU type or a fleet, not both"))
        try:
            fleet = fleet_from_proto(message.fleet, book)
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    return gpu, fleet


def break_even_request_from_proto(message: api.AnalyzeBreakEvenRequest, book: Pricebook) -> BreakEvenQuery:
    violations: list[FieldViolation] = []
    request: ResolvedRequest | None = None
    try:
        request = scenario_request(message, book)
    except InvalidRequest as exc:
        violations.extend(exc.violations)
    gpu, fleet = _subject(message, book, violations)
    utilization = optional(message, "utilization")
    if utilization is not None and not (0.0 < utilization <= 1.0):
        violations.append(FieldViolation("utilization", f"must be in (0, 1] (got {utilization!r})"))
    raise_if(violations)
    assert request is not None
    return BreakEvenQuery(request, gpu, fleet, utilization)


def break_even_analysis_to_proto(
    result: planner.BreakEvenAnalysis, book: Pricebook | None = None
) -> api.AnalyzeBreakEvenResponse:
    return api.AnalyzeBreakEvenResponse(
        break_even=break_even_to_proto(result.break_even),
        unit_costs=[unit_cost_to_proto(u) for u in result.unit_costs],
        plan=plan_to_proto(result.plan, book),
    )
