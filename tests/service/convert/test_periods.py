"""Multi-year request fields (issue 32): reach the domain, and wrong per-period lists are refused
on their proto paths."""

from __future__ import annotations

import pytest
from convert_support import chat, violations

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.encode import plan_request_to_proto
from service.convert.scenario import fleet_from_proto, plan_request_from_proto
from solver.errors import InvalidRequest
from solver.periods import is_staged, period_months


def _request(demand: list[float], **constraints: object) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(
        workloads=[chat("a", demand_by_year=demand)],
        constraints=scenario_pb2.Constraints(**{"horizon_months": 36, **constraints}),  # type: ignore[arg-type]
    )


def test_years_reach_the_domain(book: Pricebook) -> None:
    request = plan_request_from_proto(
        _request(
            [1.0, 1.8, 2.5],
            price_by_year=[scenario_pb2.PricePath(gpu_id="H200 SXM", multipliers=[1.0, 0.9, 0.8])],
            available_from_year=[scenario_pb2.GpuAvailability(gpu_id="b200", from_year=2)],
        ),
        book,
    )
    assert request.inference[0].demand_by_year == (1.0, 1.8, 2.5)
    assert request.constraints.price_by_year[0].gpu == "h200-sxm"  # alias resolved
    assert request.constraints.available_from_year[0].from_year == 2
    assert is_staged(request) and period_months(request) == (12, 12, 12)


def test_a_plan_without_years_is_one_period(book: Pricebook) -> None:
    request = plan_request_from_proto(api.PlanFleetRequest(workloads=[chat("a")]), book)
    assert not is_staged(request) and period_months(request) == (36,)


def test_a_short_last_period(book: Pricebook) -> None:
    request = plan_request_from_proto(_request([], horizon_months=30, period_months=12), book)
    assert period_months(request) == (12, 12, 6)


@pytest.mark.parametrize(
    ("demand", "constraints", "field"),
    [
        ([1.0, 2.0], {}, "workloads[0].inference.demand_by_year"),
        ([1.0, 2.0, 1e-9], {}, "workloads[0].inference.demand_by_year"),
        ([1.0, -2.0, 3.0], {}, "workloads[0].inference.demand_by_year[1]"),
        (
            [],
            {"price_by_year": [scenario_pb2.PricePath(gpu_id="h200-sxm", multipliers=[1.0])]},
            "constraints.price_by_year[0].multipliers",
        ),
        (
            [],
            {"price_by_year": [scenario_pb2.PricePath(offer_id="no-such-offer", multipliers=[1.0] * 3)]},
            "constraints.price_by_year[0].offer_id",
        ),
        (
            [],
            {"price_by_year": [scenario_pb2.PricePath(multipliers=[1.0] * 3)]},
            "constraints.price_by_year[0]",
        ),
        (
            [],
            {"available_from_year": [scenario_pb2.GpuAvailability(gpu_id="b200", from_year=4)]},
            "constraints.available_from_year[0].from_year",
        ),
    ],
)
def test_wrong_per_period_figures_name_the_field(
    book: Pricebook, demand: list[float], constraints: dict[str, object], field: str
) -> None:
    found = violations(_request(demand, **constraints), book)
    assert field in found, found


def test_fleet_years_reach_the_domain_and_are_checked(book: Pricebook) -> None:
    fleet = fleet_from_proto(
        scenario_pb2.Fleet(
            items=[
                scenario_pb2.FleetItem(
                    gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, count=8, from_year=2
                ),
                scenario_pb2.FleetItem(
                    gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_ON_DEMAND, count=2, until_year=1
                ),
            ]
        ),
        book,
    )
    assert [(i.from_year, i.until_year) for i in fleet.items] == [(2, None), (1, 1)]
    bought_until = scenario_pb2.Fleet(
        items=[
            scenario_pb2.FleetItem(
                gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, count=8, until_year=2
            )
        ]
    )
    with pytest.raises(InvalidRequest) as caught:
        fleet_from_proto(bought_until, book)
    assert [v.field for v in caught.value.violations] == ["fleet.items[0]"]


def _absolute(**by_year: object) -> api.PlanFleetRequest:
    """A 3-year request for ``chat`` (50 M tokens a day of 1 200-token requests, peak = average)
    with its demand per year as absolute figures."""
    return api.PlanFleetRequest(
        workloads=[chat("a", **by_year)], constraints=scenario_pb2.Constraints(horizon_months=36)
    )


def test_daily_tokens_by_year_are_the_stated_demand_scaled(book: Pricebook) -> None:
    request = plan_request_from_proto(_absolute(daily_tokens_by_year=[50_000_000, 90_000_000, 0]), book)
    w = request.inference[0]
    assert w.daily_tokens_by_year == (50_000_000, 90_000_000, 0)
    assert w.demand_factors() == pytest.approx((1.0, 1.8, 0.0))
    assert is_staged(request) and period_months(request) == (12, 12, 12)


def test_peak_rates_by_year_scale_a_demand_stated_in_tokens(book: Pricebook) -> None:
    # 50 M tokens a day / 1 200 tokens a request / 86 400 s, flat day: the stated peak rate
    stated_peak = 50_000_000 / 1_200 / 86_400
    request = plan_request_from_proto(
        _absolute(peak_request_rate_by_year=[stated_peak, 2 * stated_peak, 3.5 * stated_peak]), book
    )
    assert request.inference[0].demand_factors() == pytest.approx((1.0, 2.0, 3.5))


def test_absolute_demand_reaches_the_proto_again(book: Pricebook) -> None:
    sent = _absolute(daily_tokens_by_year=[50_000_000, 60_000_000, 70_000_000])
    back = plan_request_to_proto(plan_request_from_proto(sent, book))
    assert list(back.workloads[0].inference.daily_tokens_by_year) == [50_000_000, 60_000_000, 70_000_000]


@pytest.mark.parametrize(
    ("by_year", "field"),
    [
        (
            {"demand_by_year": [1.0, 2.0, 3.0], "daily_tokens_by_year": [1, 2, 3]},
            "workloads[0].inference.daily_tokens_by_year",
        ),
        ({"daily_tokens_by_year": [50_000_000, 60_000_000]}, "workloads[0].inference.daily_tokens_by_year"),
        ({"daily_tokens_by_year": [50_000_000, -1, 0]}, "workloads[0].inference.daily_tokens_by_year[1]"),
        ({"daily_tokens_by_year": [50_000_000, 1, 0]}, "workloads[0].inference.daily_tokens_by_year[1]"),
        (
            {"peak_request_rate_by_year": [0.5, float("nan"), 1.0]},
            "workloads[0].inference.peak_request_rate_by_year[1]",
        ),
        (
            {"peak_request_rate_by_year": [0.5, 1.0, 1e-9]},
            "workloads[0].inference.peak_request_rate_by_year[2]",
        ),
    ],
)
def test_wrong_absolute_demand_names_the_field(
    book: Pricebook, by_year: dict[str, object], field: str
) -> None:
    found = violations(_absolute(**by_year), book)
    assert field in found, found
