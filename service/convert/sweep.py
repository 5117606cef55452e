"""SweepPlans: a base scenario, an axis and its values in; one plan per point, then the frontier, out.

Only the proto is read here (base, dimension, listed values or a range, the point cap); the sweep
itself (values, each point's request, workload name, dimension) is checked once, by
``solver.planner.prepare_sweep``.
"""

from __future__ import annotations

import math

from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.enums import by_name
from service.convert.money import set_money
from service.convert.plan import plan_to_proto, status_to_proto
from service.convert.scenario import scenario_request
from service.convert.violations import raise_if
from service.request_limits import RequestLimits
from solver import planner
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import ResolvedRequest

MAX_SWEEP_POINTS = RequestLimits().max_sweep_points
"""The sweep-point cap of ``RequestLimits``, checked here too so the converter refuses an oversized
sweep even where no limits interceptor runs (tests, embedding)."""

SWEEP_AXIS_FROM_PROTO: dict[api.SweepDimension.ValueType, planner.SweepAxis] = by_name(
    api.SweepDimension, "SWEEP_DIMENSION", planner.SweepAxis
)


def _range_values(r: api.SweepRange, violations: list[FieldViolation]) -> list[float]:
    if r.points < 2:
        violations.append(FieldViolation("range.points", f"must be at least 2 (got {r.points})"))
        return []
    if not (math.isfinite(r.start) and math.isfinite(r.stop)) or r.start < 0 or r.stop < 0:
        # 0 is left to the axis (a discount rate may be 0; a budget may not: values[i]).
        violations.append(FieldViolation("range", "start and stop must be non-negative numbers"))
        return []
    step = (r.stop - r.start) / (r.points - 1)
    return [r.start + step * i for i in range(r.points)]


def _sweep_values(message: api.SweepPlansRequest, violations: list[FieldViolation]) -> list[float]:
    if message.values:
        values = list(message.values)
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
) -> ResolvedRequest | None:
    if not message.HasField("base"):
        violations.append(FieldViolation("base", "is required (the scenario to sweep)"))
        return None
    try:
        return scenario_request(message.base, book, prefix="base")
    except InvalidRequest as exc:
        violations.extend(exc.violations)
        return None


def sweep_request_from_proto(message: api.SweepPlansRequest, book: Pricebook) -> planner.PreparedSweep:
    """The sweep, checked and its points built by ``planner.prepare_sweep`` (whose paths, such as
    ``values[1]`` or ``workload_name``, are already proto paths)."""
    violations: list[FieldViolation] = []
    base = _base(message, book, violations)
    axis = SWEEP_AXIS_FROM_PROTO.get(message.dimension)
    if axis is None:
        violations.append(
            FieldViolation(
                "dimension",
                "choose what to sweep: capex budget, demand multiplier, TPOT, TTFT, per-user tok/s or "
                "discount rate",
            )
        )
    values = _sweep_values(message, violations)
    if base is None or axis is None or violations:
        # Bad values are still reported with the other problems, though the sweep is not prepared.
        zero_allowed = axis is planner.SweepAxis.DISCOUNT_RATE_ANNUAL
        raise_if([*violations, *planner.value_violations(values, zero_allowed=zero_allowed)])
    assert base is not None and axis is not None
    return planner.prepare_sweep(base, axis, values, message.workload_name or None)


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
        set_money(point, "npv", p.npv)
        out.points.append(point)
    return out
