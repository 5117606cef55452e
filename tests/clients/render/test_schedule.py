"""The CLI's acquisition schedule (issue 32): one row per year with what is bought, its capex, the
monthly opex and the fleet in service; a tranche table; nothing for a plan of one period."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.plan import plan_tables, render_plan


def _krw(amount: int) -> common_pb2.Money:
    return common_pb2.Money(amount=str(amount), currency_code="KRW")


def _staged() -> plan_pb2.Plan:
    schedule = plan_pb2.StagedSchedule(
        horizon_tco=_krw(900), nominal_tco=_krw(1000), discount_rate_annual=0.1
    )
    first = schedule.years.add(year=1, months=12, capex=_krw(0), opex_monthly=_krw(10))
    first.fleet.add(gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_ON_DEMAND, gpus=4)
    second = schedule.years.add(year=2, months=12, capex=_krw(700), opex_monthly=_krw(5))
    second.added.add(
        gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, gpus=8, servers=1, capex=_krw(700)
    )
    second.fleet.add(gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, gpus=8, servers=1)
    schedule.tranches.add(
        year=2,
        gpu_id="h200-sxm",
        gpus=8,
        servers=1,
        hardware=_krw(700),
        residual_value=_krw(0),
        depreciation=_krw(700),
    )
    return plan_pb2.Plan(schedule=schedule)


def test_one_row_a_year_and_the_tranches() -> None:
    text = render_plan(_staged(), common_pb2.Provenance())
    assert "Acquisition schedule (horizon NPV at 10.00% a year 900 KRW; nominal 1,000 KRW)" in text
    rows = [line for line in text.splitlines() if line.startswith(("1 ", "2 "))]
    assert "h200-sxm ×4 on_demand" in rows[0] and "0 KRW" in rows[0]
    assert "h200-sxm ×8" in rows[1] and "700 KRW" in rows[1]
    assert "Tranches bought" in text
    names = [t.name for t in plan_tables(_staged())]
    assert names[:2] == ["schedule", "tranches"]


def test_a_plan_of_one_period_has_no_schedule() -> None:
    text = render_plan(plan_pb2.Plan(), common_pb2.Provenance())
    assert "Acquisition schedule" not in text


def test_a_staged_plans_cost_lines_say_they_are_the_final_year() -> None:
    plan = _staged()
    plan.cost.CopyFrom(plan_pb2.CostBreakdown(currency_code="KRW", horizon_months=12, horizon_tco=_krw(300)))
    plan.cost.discount_rate_annual = 0.1
    plan.cost.objective = "npv"
    plan.cost.npv.CopyFrom(_krw(900))
    plan.cost.cash_flows_by_year.add(year=0, months=0, nominal=_krw(0), discounted=_krw(0))
    text = render_plan(plan, common_pb2.Provenance())
    assert "Final year's fleet alone (KRW, 12 months" in text
    assert "TCO of these 12 months" in text
    assert "(nominal TCO 1,000 KRW;" in text  # the schedule's, not the final year's 300
