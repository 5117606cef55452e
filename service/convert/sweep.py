"""SweepPlans: a base scenario, an axis and its values in; one plan per point, then the frontier, out."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import ValidationError

from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.enums import by_name
from service.convert.money import set_money
from service.convert.paths import join_path
from service.convert.plan import plan_to_proto, status_to_proto
from service.convert.scenario import plan_request_from_proto
from service.convert.violations import raise_if, reason
from service.limits import RequestLimits
from solver import domain, planner
from solver.errors import FieldViolation, InvalidRequest

MAX_SWEEP_POINTS = RequestLimits().max_sweep_points
"""The sweep-point cap of ``RequestLimits``, checked here too so the converter refuses an oversized
sweep even where no limits interceptor runs (tests, embedding)."""

SWEEP_AXIS_FROM_PROTO: dict[api.SweepDimension.ValueType, planner.SweepAxis] = by_name(
    api.SweepDimension, "SWEEP_DIMENSION", planner.SweepAxis
)


@dataclass(frozen=True, slots=True)
class SweepQuery:
    """A validated SweepPlans request."""

    request: domain.PlanRequest
    axis: planner.SweepAxis
    values: tuple[float, ...]
    workload: str | None


def _listed_values(message: api.SweepPlansRequest, violations: list[FieldViolation]) -> list[float]:
    values = list(message.values)
    for i, v in enumerate(values):
        if not math.isfinite(v) or v <= 0:
            violations.append(FieldViolation(join_path("values", i), f"must be a positive number (got {v})"))
    return values


def _range_values(r: api.SweepRange, violations: list[FieldViolation]) -> list[float]:
    if r.points < 2:
        violations.append(FieldViolation("range.points", f"must be at least 2 (got {r.points})"))
        return []
    if not (math.isfinite(r.start) and math.isfinite(r.stop)) or r.start <= 0 or r.stop <= 0:
        violations.append(FieldViolation("range", "start and stop must be positive numbers"))
        return []
    step = (r.stop - r.start) / (r.points - 1)
    return [r.start + step * i for i in range(r.points)]


def _sweep_values(message: api.SweepPlansRequest, violations: list[FieldViolation]) -> list[float]:
    if message.values:
        values = _listed_values(message, violations)
    elif message.HasField("range"):
        values = _range_values(message.range, violations)
        if not values:
            return []
    else:
        violations.append(FieldViolation("values", "give the values to sweep, or a range"))
        return []
    if len(values) > MAX_SWEEP_POINTS:
        violations.append(
            FieldViolation("values", f"at most {MAX_SWEEP_POINTS} sweep points (got {len(values)})")
        )
    return values


def _base(
    message: api.SweepPlansRequest, book: Pricebook, violations: list[FieldViolation]
) -> domain.PlanRequest | None:
    if not message.HasField("base"):
        violations.append(FieldViolation("base", "is required (the scenario to sweep)"))
        return None
    try:
        return plan_request_from_proto(message.base, book, prefix="base")
    except InvalidRequest as exc:
        violations.extend(exc.violations)
        return None


def sweep_request_from_proto(message: api.SweepPlansRequest, book: Pricebook) -> SweepQuery:
    violations: list[FieldViolation] = []
    base = _base(message, book, violations)
    axis = SWEEP_AXIS_FROM_PROTO.get(message.dimension)
    if axis is None:
        violations.append(
            FieldViolation(
                "dimension",
                "choose what to sweep: capex budget, demand multiplier, TPOT, TTFT or per-user tok/s",
            )
        )
    values = _sweep_values(message, violations)
    if (
        base is not None
        and message.workload_name
        and message.workload_name not in {w.name for w in base.inference}
    ):
        violations.append(
            FieldViolation("workload_name", f"no inference workload named {message.workload_name!r}")
        )
    raise_if(violations)
    assert base is not None and axis is not None
    workload = message.workload_name or None
    raise_if(
        [v for i, value in enumerate(values) if (v := _sweep_point_violation(base, axis, value, workload, i))]
    )
    return SweepQuery(base, axis, tuple(values), workload)


def _sweep_point_violation(
    base: domain.PlanRequest, axis: planner.SweepAxis, value: float, workload: str | None, index: int
) -> FieldViolation | None:
    """Whether the scenario stays valid at this sweep value (e.g. demand × 1e300 exceeds the daily-token
    cap): the point's request is built as the planner builds it, then validated like any request."""
    try:
        point = planner.sweep_request(base, axis, value, workload)
        domain.PlanRequest.model_validate(point.model_dump())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return FieldViolation(join_path("values", index), f"{value:g} makes {where} invalid: {reason(first)}")
    except (OverflowError, ValueError) as exc:
        return FieldViolation(join_path("values", index), f"{value:g} is out of range: {exc}")
    return None


def sweep_point_to_proto(point: planner.SweepPoint) -> api.SweepPlansResponse:
    return api.SweepPlansResponse(
        point=api.SweepPoint(index=point.index, value=point.value, plan=plan_to_proto(point.plan))
    )


def frontier_to_proto(frontier: planner.SweepFrontier) -> api.SweepFrontier:
    out = api.SweepFrontier()
    for p in frontier.points:
        point = api.FrontierPoint(
            value=p.value,
            status=status_to_proto(p.status),
            fleet_summary=p.fleet_summary,
            pareto_optimal=p.pareto_optimal,
        )
        set_money(point, "horizon_tco", p.horizon_tco)
        out.points.append(point)
    return out
