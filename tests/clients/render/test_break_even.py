"""clients.render.break_even: buy-vs-rent and API break-even cells, the answer's first line, verdicts."""

from __future__ import annotations

from api.fleetplan.v1 import common_pb2, plan_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.break_even import (
    api_break_even,
    has_on_demand,
    payback,
    render_break_even,
    render_break_even_answer,
)


def test_buy_vs_rent_without_an_on_demand_offer_shows_no_break_even_or_payback() -> None:
    owned_only = plan_pb2.BuyVsRent(gpu_id="rtx-pro-6000-ws")
    assert (has_on_demand(owned_only), payback(owned_only)) == (False, "-")
    offer = common_pb2.Money(amount="3163", currency_code="KRW")
    never = plan_pb2.BuyVsRent(gpu_id="h200-sxm", on_demand_price_per_gpu_hour=offer)
    assert (has_on_demand(never), payback(never)) == (True, "never")
    pays = plan_pb2.BuyVsRent(gpu_id="h200-sxm", on_demand_price_per_gpu_hour=offer, payback_months=25.09)
    assert payback(pays) == "25.1"


def test_api_break_even_says_dash_without_a_price_on_either_side_and_never_when_the_api_always_wins() -> None:
    assert api_break_even(plan_pb2.ApiBreakEven(workload_name="embeddings")) == "-"
    price = common_pb2.Money(amount="168.1", currency_code="KRW")
    own = common_pb2.Money(amount="296", currency_code="KRW")
    no_deployment = plan_pb2.ApiBreakEven(workload_name="rag", api_per_million_tokens=price)
    assert api_break_even(no_deployment) == "-"
    api_always_cheaper = plan_pb2.ApiBreakEven(
        workload_name="rag", api_per_million_tokens=price, self_hosted_per_million_tokens=own
    )
    assert api_break_even(api_always_cheaper) == "never"
    wins_above = plan_pb2.ApiBreakEven(
        workload_name="rag",
        api_per_million_tokens=price,
        self_hosted_per_million_tokens=own,
        break_even_daily_tokens=1_055_656_481.4,
    )
    assert api_break_even(wins_above) == "1,055,656,481"


def test_break_even_answer_first_says_which_plan_it_rests_on() -> None:
    infeasible = "No plan (infeasible). capex budget 60,000,000 KRW is short by 140,000,000 KRW"
    response = api.AnalyzeBreakEvenResponse(plan=plan_pb2.Plan(summary=infeasible))
    assert render_break_even_answer(response).splitlines()[0] == f"based on: {infeasible}"


def test_break_even_verdicts_are_bullets_under_the_tables_not_a_column() -> None:
    offer = common_pb2.Money(amount="3163", currency_code="KRW")
    verdict = "h200-sxm: buying beats on-demand above 36% utilization; " + "x" * 200
    analysis = plan_pb2.BreakEvenAnalysis(
        buy_vs_rent=[
            plan_pb2.BuyVsRent(gpu_id="h200-sxm", on_demand_price_per_gpu_hour=offer, verdict=verdict)
        ],
        api=[plan_pb2.ApiBreakEven(workload_name="embeddings", verdict="embeddings: no API price")],
    )
    text = render_break_even(analysis)
    lines = text.splitlines()
    assert f"- {verdict}" in lines and "- embeddings: no API price" in lines
    assert all(len(line) < 100 for line in lines if not line.startswith("- "))
    markdown = render_break_even(analysis, markdown=True).splitlines()
    first_bullet = markdown.index(f"- {verdict}")
    assert markdown[first_bullet - 1] == ""  # the list does not run into the table
