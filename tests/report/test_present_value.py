"""A quote of a plan with a discount rate (issue 32): the Korean HTML shows the NPV and a present-
value table whose rows are the plan's yearly cash flows; the workbook computes each year's cash and
its present value as formulas of the cash-flow sheet and a rate cell, so editing the rate moves the
NPV as Σ nominal ÷ (1 + rate)^year (recomputed here)."""

from __future__ import annotations

import functools
import io
from decimal import Decimal
from typing import Any

import openpyxl
import pytest
from report_support import EXAMPLES, Planned, amount, plan_and_quote, resolved_of
from xlsx_eval import Evaluator

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from report import Language
from report.cashflow import cash_flow
from report.html import render_html
from report.xlsx import render_xlsx, sheet_names

RATE = 0.1


@functools.cache
def _planned() -> Planned:
    request = load_scenario(EXAMPLES / "500m_krw_portfolio.yaml", api.PlanFleetRequest)
    request.constraints.discount_rate_annual = RATE
    return plan_and_quote(resolved_of(request), "discounted")


def test_the_korean_html_shows_the_npv_and_the_yearly_present_values() -> None:
    planned = _planned()
    cost = planned.plan_json["plan"]["cost"] if "plan" in planned.plan_json else planned.plan_json["cost"]
    html = render_html(planned.quote, Language.KO)
    assert "순현재가치 (NPV)" in html and "현재가치 (연 할인율 10.00%)" in html
    npv = amount(cost["npv"])
    assert f"{npv:,.0f}원" in html
    for year in cost["cash_flows_by_year"]:
        assert f"{amount(year['discounted']):,.0f}원" in html
    assert 'id="present-value-table"' in html and "present-value" in html


def _find(sheet: Any, text: str) -> int:
    for row in sheet.iter_rows():
        if row[0].value == text:
            return int(row[0].row)
    raise AssertionError(f"{text!r} not in {sheet.title}")


def test_the_workbook_discounts_the_cash_flow_sheet_by_formula() -> None:
    planned = _planned()
    content = render_xlsx(planned.quote, Language.KO)
    formulas = openpyxl.load_workbook(io.BytesIO(content), data_only=False)
    name = sheet_names(Language.KO)["CashFlow"]
    sheet = formulas[name]
    ev = Evaluator(formulas)
    rate_row = _find(sheet, "할인율 (연)")
    npv_row = _find(sheet, "순현재가치 (NPV)")
    years = [int(sheet[f"A{r}"].value) for r in range(rate_row + 2, npv_row)]
    assert years == list(range(len(years)))
    nominal = [ev.value(name, f"B{r}") for r in range(rate_row + 2, npv_row)]
    # The years' nominal cash adds up to the horizon TCO; the NPV cell is the plan's NPV.
    cost = planned.plan_json["plan"]["cost"] if "plan" in planned.plan_json else planned.plan_json["cost"]
    assert sum(nominal) == pytest.approx(float(amount(cost["horizon_tco"])), abs=0.5)
    assert ev.value(name, f"D{npv_row}") == pytest.approx(float(amount(cost["npv"])), abs=len(years))
    # A dearer rate: the NPV follows Σ nominal ÷ 1.2^year, each year rounded to the won.
    ev.set(name, f"B{rate_row}", 0.2)
    expected = sum(round(Decimal(repr(n)) / Decimal("1.2") ** y) for y, n in enumerate(nominal))
    assert ev.value(name, f"D{npv_row}") == pytest.approx(float(expected), abs=len(years))


@functools.cache
def _leased() -> Planned:
    request = load_scenario(EXAMPLES / "500m_krw_portfolio.yaml", api.PlanFleetRequest)
    request.constraints.discount_rate_annual = RATE
    request.constraints.include_leases = True
    request.constraints.ClearField("capex_budget")
    return plan_and_quote(resolved_of(request), "leased")


def test_a_leased_plan_quotes_its_lease_as_monthly_cash() -> None:
    planned = _leased()
    quote = planned.quote
    assert quote.economics is not None and quote.bom is not None
    leases = [r for r in quote.bom.rentals if r.mode == "lease"]
    assert leases, "expected the plan to lease at 10 % without a budget"
    assert all(b.amount.amount >= 0 for b in quote.bom.lines)
    # The cash-flow table still adds up to the TCO, leases included, in every format.
    flow = cash_flow(quote.economics, quote.horizon_months)
    assert flow.total.amount == quote.economics.horizon_tco.amount
    html = render_html(quote, Language.KO)
    assert "리스·할부 상환액" in html and "리스 (인수 대금 포함 월평균)" in html
    content = render_xlsx(quote, Language.KO)
    formulas = openpyxl.load_workbook(io.BytesIO(content), data_only=False)
    values = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    ev = Evaluator(formulas)
    for sheet in formulas.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    cached = values[sheet.title][cell.coordinate].value
                    assert ev.value(sheet.title, cell.coordinate) == pytest.approx(cached, abs=1), cell.value
