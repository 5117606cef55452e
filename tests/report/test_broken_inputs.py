"""A quote still renders, and says so, when the plan has nothing to show in a part: an infeasible
plan (no fleet, no BOM: the diagnosis instead), a workload with no API price, a request without
training, and a sweep's frontier (with its infeasible points)."""

from __future__ import annotations

import io
import subprocess

import openpyxl
from report_support import EXAMPLES, QUOTED_ON, example, plan_and_quote, resolved_of

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook.schema import Money
from report import Language, ReportFormat, build_quote, render
from report.data import AlternativeKind
from report.html import render_html
from report.presentation import Audience
from solver import planner
from solver.domain import AcquisitionMode


def _infeasible() -> api.PlanFleetRequest:
    request = load_scenario(EXAMPLES / "500m_krw_portfolio.yaml", api.PlanFleetRequest)
    request.constraints.capex_budget.amount = "1000000"  # a million won buys no GPU
    del request.constraints.allowed_modes[:]  # and buying is the only way (the default)
    return request


def test_an_infeasible_plan_renders_every_format_and_says_why() -> None:
    planned = plan_and_quote(resolved_of(_infeasible()), "infeasible")
    quote = planned.quote
    assert quote.status == "infeasible" and quote.economics is None and quote.bom is None
    assert quote.diagnosis  # the planner's reasons, carried into the quote
    html = render_html(quote, Language.EN)
    assert "No plan: the request cannot be met as stated." in html
    assert "No bill of materials: there is no plan." in html
    assert quote.diagnosis[0].split(" ")[0] in html
    korean = render_html(quote, Language.KO)
    assert "계획 없음" in korean
    workbook = openpyxl.load_workbook(io.BytesIO(render(quote, ReportFormat.XLSX, Language.EN).content))
    assert workbook["BOM"]["A3"].value == "No bill of materials: there is no plan."
    pdf = render(quote, ReportFormat.PDF, Language.EN).content
    text = subprocess.run(["pdftotext", "-", "-"], input=pdf, capture_output=True, check=True).stdout
    assert "No plan" in text.decode("utf-8")


def test_a_workload_without_an_api_price_and_no_training_are_stated() -> None:
    quote = example("500m_krw_portfolio").quote  # embeddings: no per-token API price
    html = render_html(quote, Language.EN)
    api_alt = next(a for a in quote.alternatives if a.kind is AlternativeKind.API)
    assert "not comparable: no API price for: embeddings" in html
    assert api_alt.horizon_tco is not None
    untrained = example("rtx5090_cluster").quote
    assert untrained.training == ()
    assert "This request has no training runs." in render_html(untrained, Language.EN)
    assert "이 요청에는 학습 작업이 없습니다." in render_html(untrained, Language.KO)


def test_a_request_with_no_api_price_at_all_says_so() -> None:
    quote = example("14b_finetune").quote  # training only: no API comparison
    assert not any(a.kind is AlternativeKind.API for a in quote.alternatives)
    html = render_html(quote.model_copy(update={"audience": Audience.INTERNAL}), Language.EN)
    assert "no per-token API price in the pricebook for these workloads" in html
    assert "No inference workloads to compare with an API." in html


def test_a_sweep_frontier_is_tabled_and_charted() -> None:
    planned = example("500m_krw_portfolio")
    base = planned.resolved
    points = []
    for budget in (1_000_000, 350_000_000, 500_000_000):
        constraints = base.request.constraints.model_copy(
            update={
                "capex_budget": Money(amount=budget, currency="KRW"),
                "allowed_modes": (AcquisitionMode.BUY,),
            }
        )
        variant = base.with_request(base.request.model_copy(update={"constraints": constraints}))
        points.append((float(budget), planner.plan(variant, time_limit_s=20.0)))
    frontier = planner.frontier(planner.SweepAxis.CAPEX_BUDGET, points)
    quote = build_quote(planned.result, base, frontier=frontier, quoted_on=QUOTED_ON, title="sweep")
    assert quote.frontier is not None and len(quote.frontier.points) == 3
    html = render_html(quote, Language.EN)
    assert 'id="chart-frontier"' in html and 'id="frontier-table"' in html
    assert html.count("<tr>", html.index('id="frontier-table"'), html.index('id="chart-frontier"')) == 1 + 3
    assert "infeasible" in html[html.index('id="frontier-table"') :]
