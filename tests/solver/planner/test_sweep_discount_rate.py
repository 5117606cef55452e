"""Sweeping the discount rate (issue 32): each point is the plan of the request at that rate solved
on its own; the NPV is shown; no point is ranked against another; rates outside [0, 1) are refused
per point."""

from __future__ import annotations

import pytest
from planner_factories import h200_l40s_request

from pricebook.schema import Pricebook
from solver.domain import PlanRequest
from solver.errors import InvalidRequest
from solver.planner import SweepAxis, SweepFrontier, SweepPoint, plan, prepare_sweep, sweep
from solver.resolve import resolve


def _request(**constraints: object) -> PlanRequest:
    return h200_l40s_request({"horizon_months": 48, **constraints})


def test_each_point_is_the_plan_at_its_rate(book: Pricebook) -> None:
    rates = [0.0, 0.15, 0.5]
    events = list(sweep(prepare_sweep(resolve(_request(), book), SweepAxis.DISCOUNT_RATE_ANNUAL, rates)))
    points = {e.value: e.plan for e in events if isinstance(e, SweepPoint)}
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    for rate in rates:
        alone = plan(resolve(_request(discount_rate_annual=rate), book), time_limit_s=20)
        swept = points[rate]
        assert swept.fleet == alone.fleet
        assert swept.cash_flows is not None and alone.cash_flows is not None
        assert swept.cash_flows.npv == alone.cash_flows.npv
    assert [p.npv for p in frontier.points] == [points[r].cash_flows.npv for r in rates]  # type: ignore[union-attr]
    assert not any(p.pareto_optimal for p in frontier.points)
    # The rate reached the objective: the dearest money buys the least up front.
    capex = [points[r].tco.total.capex.amount for r in rates]  # type: ignore[union-attr]
    assert capex == sorted(capex, reverse=True) and capex[0] > capex[-1]


@pytest.mark.parametrize("rate", [-0.1, 1.0])
def test_a_rate_outside_the_range_names_the_point(book: Pricebook, rate: float) -> None:
    with pytest.raises(InvalidRequest) as bad:
        prepare_sweep(resolve(_request(), book), SweepAxis.DISCOUNT_RATE_ANNUAL, [0.05, rate])
    assert {v.field for v in bad.value.violations} == {"values[1]"}
