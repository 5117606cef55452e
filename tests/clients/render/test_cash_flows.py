"""The CLI's yearly cash-flow table and NPV line (issue 32): shown only with a discount rate; the
cumulative column is the running sum of the discounted years and ends at the NPV."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.plan import render_plan


def _krw(amount: int) -> common_pb2.Money:
    return common_pb2.Money(amount=str(amount), currency_code="KRW")


def _plan(with_rate: bool) -> plan_pb2.Plan:
    cost = plan_pb2.CostBreakdown(
        currency_code="KRW", horizon_months=24, capex=_krw(1000), horizon_tco=_krw(1400)
    )
    if with_rate:
        cost.discount_rate_annual = 0.1
        cost.objective = "npv"
        cost.npv.CopyFrom(_krw(1000 + 182 + 165))  # nominal 200 a year, 200/1.1 = 182, 200/1.21 = 165
        for year, months, nominal, discounted in ((0, 0, 1000, 1000), (1, 12, 200, 182), (2, 12, 200, 165)):
            cost.cash_flows_by_year.add(
                year=year, months=months, nominal=_krw(nominal), discounted=_krw(discounted)
            )
    return plan_pb2.Plan(cost=cost)


def test_the_table_and_the_npv_line() -> None:
    text = render_plan(_plan(True), common_pb2.Provenance())
    assert "Cash flow by year" in text and "10.00% a year" in text
    rows = [line.split() for line in text.splitlines() if line[:1].isdigit() and "KRW" in line]
    cumulative = [row[-2] for row in rows[-3:]]
    assert cumulative == ["1,000", "1,182", "1,347"]
    assert "NPV at 10.00% a year: 1,347 KRW (nominal TCO 1,400 KRW; the plan minimised the NPV)" in text


def test_no_rate_no_table() -> None:
    text = render_plan(_plan(False), common_pb2.Provenance())
    assert "Cash flow by year" not in text and "NPV" not in text
