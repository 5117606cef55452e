"""SweepPlans requests: base paths are prefixed, values that break the scenario are refused, the
point cap is the server's."""

from __future__ import annotations

import pytest
from convert_support import chat

from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert import sweep
from service.request_limits import RequestLimits
from solver import planner
from solver.errors import InvalidRequest


def test_sweep_paths_are_prefixed_with_base(book: Pricebook) -> None:
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat(daily_tokens=-1)]),
        dimension=api.SWEEP_DIMENSION_CAPEX_BUDGET,
        values=[1e8, -2.0],
    )
    with pytest.raises(InvalidRequest) as info:
        sweep.sweep_request_from_proto(request, book)
    assert {v.field for v in info.value.violations} == {
        "base.workloads[0].inference.daily_tokens",
        "values[1]",
    }


def test_sweep_values_that_break_the_scenario_are_refused(book: Pricebook) -> None:
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat()]),
        dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER,
        values=[2.0, 1e300],
    )
    with pytest.raises(InvalidRequest) as info:
        sweep.sweep_request_from_proto(request, book)
    assert [v.field for v in info.value.violations] == ["values[1]"]
    assert "daily_tokens" in info.value.violations[0].reason


def test_a_range_expands_to_evenly_spaced_values(book: Pricebook) -> None:
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat()]),
        dimension=api.SWEEP_DIMENSION_TPOT_P95_MS,
        range=api.SweepRange(start=10, stop=40, points=4),
    )
    query = sweep.sweep_request_from_proto(request, book)
    assert (query.axis, query.values, query.workload) == (
        planner.SweepAxis.TPOT_P95_MS,
        (10, 20, 30, 40),
        None,
    )


def test_the_point_cap_is_the_request_limits_one(book: Pricebook) -> None:
    cap = RequestLimits().max_sweep_points
    assert cap == sweep.MAX_SWEEP_POINTS
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat()]),
        dimension=api.SWEEP_DIMENSION_CAPEX_BUDGET,
        range=api.SweepRange(start=1e8, stop=2e8, points=cap + 1),
    )
    with pytest.raises(InvalidRequest) as info:
        sweep.sweep_request_from_proto(request, book)
    assert [v.field for v in info.value.violations] == ["values"]


def test_every_sweep_dimension_has_an_axis() -> None:
    named = {v.number for v in api.SweepDimension.DESCRIPTOR.values} - {api.SWEEP_DIMENSION_UNSPECIFIED}
    assert set(sweep.SWEEP_AXIS_FROM_PROTO) == named
    assert set(sweep.SWEEP_AXIS_FROM_PROTO.values()) == set(planner.SweepAxis)
