"""The Korean quote of the five-year public rollout (issue 32, ``examples/korean_public_rollout_5yr``):
its 연차별 도입 계획 shows, in the HTML, the PDF and the workbook alike, each year's purchases,
capex, monthly opex, fleet in service and deployments, each tranche's depreciation, and the cash
by plan year with its present value and the NPV. The expected figures are the plan's own JSON
(``plan_to_proto``: ``plan.schedule``, ``cost.cash_flows_by_year``) and the NPV formula redone
here from the scenario's rate — never the renderer's code. A plan of one period has no such
section or sheet."""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

import openpyxl
import pytest
import yaml
from google.protobuf import json_format
from quote_files import html_fields, html_tables, pdf_text, section_text
from report_support import EXAMPLES, amount, exact_amount, example, plan_and_quote, resolved_of
from xlsx_eval import Evaluator

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.plan import render_plan
from clients.scenario import load_scenario
from report import Language, ReportFormat, render
from report.data import QuoteData
from service.convert.plan import plan_to_proto

EXAMPLE = "korean_public_rollout_5yr"
SHEET = "연차별 도입 계획"
MODE_WORDS = {
    "ACQUISITION_MODE_BUY": "구매",
    "ACQUISITION_MODE_ON_DEMAND": "온디맨드 임차",
    "ACQUISITION_MODE_RESERVED": "예약 임차",
}
"""How the Korean quote names the acquisition modes (the page's own words, written here)."""


@dataclass(frozen=True)
class Files:
    html: str
    pdf: str
    """The PDF's text (pdftotext -layout)."""
    xlsx: bytes
    plan: dict[str, Any]


@functools.cache
def _files() -> Files:
    planned = example(EXAMPLE)
    quote = planned.quote

    def content(fmt: ReportFormat) -> bytes:
        return render(quote, fmt, Language.KO).content

    html = content(ReportFormat.HTML).decode("utf-8")
    return Files(html, pdf_text(content(ReportFormat.PDF)), content(ReportFormat.XLSX), planned.plan_json)


@pytest.fixture(scope="module")
def files() -> Files:
    return _files()


def _scenario() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{EXAMPLE}.yaml").read_text(encoding="utf-8"))
    return loaded


def _rate() -> Decimal:
    return Decimal(str(_scenario()["constraints"]["discount_rate_annual"]))


def _years(plan: dict[str, Any]) -> list[dict[str, Any]]:
    years: list[dict[str, Any]] = plan["schedule"]["years"]
    return years


def _flows(plan: dict[str, Any]) -> list[tuple[int, int, Decimal, Decimal]]:
    """(year, months, nominal, discounted) per plan year of the plan JSON (proto3 leaves 0 out)."""
    return [
        (int(y.get("year", 0)), int(y.get("months", 0)), amount(y["nominal"]), amount(y["discounted"]))
        for y in plan["cost"]["cash_flows_by_year"]
    ]


def _discounted(nominal: Decimal, year: int, rate: Decimal, rounding: str = ROUND_HALF_EVEN) -> Decimal:
    """nominal × (1 + rate)^−year to the won."""
    return (nominal / (1 + rate) ** year).quantize(Decimal(1), rounding=rounding)


def _hand_npv(plan: dict[str, Any], rate: Decimal) -> tuple[list[Decimal], Decimal]:
    discounted = [_discounted(nominal, year, rate) for year, _, nominal, _ in _flows(plan)]
    return discounted, sum(discounted, Decimal(0))


def _item(item: dict[str, Any], *, with_mode: bool) -> str:
    text = f"{item['gpu_id']} ×{item['gpus']}"
    return f"{text} {MODE_WORDS[item['mode']]}" if with_mode else text


def test_the_plans_yearly_flows_are_its_schedule_discounted_by_hand(files: Files) -> None:
    """The inputs themselves: the plan's NPV is Σ nominal ÷ 1.1^year (each rounded once), and its
    yearly cash is the schedule's — year 0 the first purchases, year y its opex × months and the
    next year's purchases (no resale credit here: 불용 처리) — to the won per month rounded."""
    plan = files.plan
    assert _scenario()["constraints"]["residual_value_credit"] is False
    flows = _flows(plan)
    discounted, npv = _hand_npv(plan, _rate())
    assert [d for *_, d in flows] == discounted
    assert amount(plan["cost"]["npv"]) == npv
    years = _years(plan)
    assert [y for y, *_ in flows] == list(range(len(years) + 1))
    assert flows[0][2] == amount(years[0]["capex"])
    for (year, months, nominal, _), sched in zip(flows[1:], years, strict=True):
        following = amount(years[year]["capex"]) if year < len(years) else Decimal(0)
        paid = amount(sched["opex_monthly"]) * int(sched["months"]) + following
        assert abs(nominal - paid) <= months, (year, nominal, paid)
    assert any(y.get("added") for y in years[1:]), "the example should buy in a later year"


def test_the_page_shows_the_schedule_tranches_and_present_value(files: Files) -> None:
    plan, tables = files.plan, html_tables(files.html)
    assert "<h2>3. 연차별 도입 계획</h2>" in files.html
    rows = tables["schedule-table"]
    years = _years(plan)
    assert len(rows) == len(years) + 1  # the years, then the total
    for row, y in zip(rows, years, strict=False):
        assert row[0] == f"{y['year']}차년도" and row[1] == str(y["months"])
        assert exact_amount(row[3]) == amount(y["capex"])
        assert exact_amount(row[4]) == amount(y["opex_monthly"])
        added = [_item(i, with_mode=True) for i in y.get("added", [])]
        assert row[2] == (", ".join(added) or "없음")
        assert row[5] == ", ".join(_item(i, with_mode=True) for i in y["fleet"])
        for d in y["deployments"]:
            assert f"{d['workload_name']}: {d['peak_replicas']} × " in row[6]
    assert exact_amount(rows[-1][3]) == sum((amount(y["capex"]) for y in years), Decimal(0))
    tranches = plan["schedule"]["tranches"]
    shown = tables["tranche-table"]
    assert len(shown) == len(tranches)
    for row, t in zip(shown, tranches, strict=True):
        assert row[0] == f"{t['year']}차년도" and row[1] == t["gpu_id"] and row[2] == str(t["gpus"])
        hardware, residual = amount(t["hardware"]), amount(t.get("residual_value"))
        assert [exact_amount(c) for c in row[4:7]] == [hardware, residual, amount(t["depreciation"])]
        assert exact_amount(row[6]) == hardware - residual
    _, npv = _hand_npv(plan, _rate())
    assert [exact_amount(v) for v in html_fields(files.html)["schedule-npv"]] == [npv]


def test_the_page_discounts_each_year_as_the_formula_does(files: Files) -> None:
    plan = files.plan
    discounted, npv = _hand_npv(plan, _rate())
    tables = html_tables(files.html)
    assert len([t for t in tables if t.startswith("present-value-table")]) == 1
    rows = tables["present-value-table"]
    flows = _flows(plan)
    running = Decimal(0)
    for row, (year, months, nominal, _), hand in zip(rows, flows, discounted, strict=False):
        running += hand
        assert row[0] == f"{year}차년도" and row[1] == str(months)
        assert [exact_amount(row[2]), exact_amount(row[4]), exact_amount(row[5])] == [nominal, hand, running]
        assert Decimal(row[3]) == (1 / (1 + _rate()) ** year).quantize(Decimal("0.000001"))
    foot = rows[-1]
    assert foot[0] == "순현재가치 (NPV)"
    assert exact_amount(foot[2]) == sum((n for *_, n, _ in flows), Decimal(0))
    assert exact_amount(foot[4]) == npv
    caption = f"연차별 현금 흐름 (명목·현재가치): 순현재가치 {npv:,}원"
    assert '<figure class="chart" id="chart-present-value">' in files.html and caption in files.html


def _sheet_rows(content: bytes) -> list[list[Any]]:
    values = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    return [list(r) for r in values[SHEET].iter_rows(values_only=True)]


def _row_after(rows: list[list[Any]], first: str) -> int:
    return next(i for i, r in enumerate(rows) if r[0] == first) + 1


def test_the_workbook_sheet_holds_the_schedule_and_the_present_value_as_formulas(files: Files) -> None:
    plan = files.plan
    names = openpyxl.load_workbook(io.BytesIO(files.xlsx)).sheetnames
    assert names.index(SHEET) == names.index("현금 흐름") + 1
    rows = _sheet_rows(files.xlsx)
    start = _row_after(rows, "연도")
    years = _years(plan)
    for row, y in zip(rows[start : start + len(years)], years, strict=True):
        assert row[:2] == [y["year"], y["months"]]
        assert [Decimal(row[3]), Decimal(row[4])] == [amount(y["capex"]), amount(y["opex_monthly"])]
    rate_at = _row_after(rows, "할인율 (연)") - 1
    assert rows[rate_at][1] == pytest.approx(float(_rate()))
    discounted, npv = _hand_npv(plan, _rate())
    flows = _flows(plan)
    first = rate_at + 2
    for row, (year, months, nominal, _), hand in zip(rows[first:], flows, discounted, strict=False):
        assert row[:3] == [year, months, nominal]
        assert Decimal(row[4]) == hand
    npv_row = rows[first + len(flows)]
    assert npv_row[0] == "순현재가치 (NPV)" and Decimal(npv_row[4]) == npv
    # Formulas of the rate cell: a dearer rate moves the NPV as the formula says.
    formulas = openpyxl.load_workbook(io.BytesIO(files.xlsx))
    sheet = formulas[SHEET]
    assert str(sheet.cell(first + 1, 5).value).startswith("=ROUND(")
    assert str(sheet.cell(first + len(flows) + 1, 5).value).startswith("=SUM(")
    ev = Evaluator(formulas)
    ev.set(SHEET, f"B{rate_at + 1}", 0.2)
    dearer = sum((_discounted(n, y, Decimal("0.2"), ROUND_HALF_UP) for y, _, n, _ in flows), Decimal(0))
    assert ev.value(SHEET, f"E{first + len(flows) + 1}") == pytest.approx(float(dearer), abs=0.5)
    # The native chart draws the nominal and discounted columns of those rows.
    charts = sheet._charts  # openpyxl keeps the charts it read there only
    assert len(charts) == 1
    refs = [s.val.numRef.f for s in charts[0].series]
    span = f"${first + 1}:$"
    assert len(refs) == 2 and all(span in r for r in refs)
    assert "$C$" in refs[0] and "$E$" in refs[1]
    # The cash-flow sheet keeps no present-value block of its one-year table.
    cash = [r[0] for r in formulas["현금 흐름"].iter_rows(values_only=True)]
    assert "할인율 (연)" not in cash


def test_the_pdf_shows_the_same_schedule_and_flows(files: Files) -> None:
    text = section_text(files.pdf, "연차별 도입 계획", "대안 비교")
    flat = " ".join(text.split())
    for y in _years(files.plan):
        assert f"{amount(y['opex_monthly']):,}원" in flat
        assert f"{amount(y['capex']):,}원" in flat
    discounted, npv = _hand_npv(files.plan, _rate())
    for d in discounted:
        assert f"{d:,}원" in flat
    assert f"{npv:,}원" in flat and "순현재가치" in flat


def test_the_three_formats_agree_on_every_schedule_and_cash_figure(files: Files) -> None:
    tables = html_tables(files.html)
    page = [[exact_amount(r[3]), exact_amount(r[4])] for r in tables["schedule-table"][:-1]]
    page_flows = [[exact_amount(r[2]), exact_amount(r[4])] for r in tables["present-value-table"][:-1]]
    rows = _sheet_rows(files.xlsx)
    start = _row_after(rows, "연도")
    sheet = [[Decimal(r[3]), Decimal(r[4])] for r in rows[start : start + len(page)]]
    first = _row_after(rows, "할인율 (연)") + 1
    sheet_flows = [[Decimal(r[2]), Decimal(r[4])] for r in rows[first : first + len(page_flows)]]
    assert page == sheet and page_flows == sheet_flows
    flat = " ".join(section_text(files.pdf, "연차별 도입 계획", "대안 비교").split())
    assert all(f"{v:,}원" in flat for pair in page + page_flows for v in pair)


def test_a_plan_of_one_period_has_no_schedule_section_or_sheet() -> None:
    quote = example("60m_krw_single_gpu").quote
    assert quote.schedule is None
    html = render(quote, ReportFormat.HTML, Language.KO).content.decode("utf-8")
    assert 'id="schedule"' not in html and "연차별 도입 계획" not in html
    book = openpyxl.load_workbook(io.BytesIO(render(quote, ReportFormat.XLSX, Language.KO).content))
    assert SHEET not in book.sheetnames


def _rent_only_plan() -> dict[str, Any]:
    rentals = example(EXAMPLE).rentals
    loaded: dict[str, Any] = json.loads(
        json_format.MessageToJson(plan_to_proto(rentals), preserving_proto_field_name=True)
    )
    return loaded


def test_the_alternatives_compare_the_horizons_npv_not_the_final_years_lines(files: Files) -> None:
    """The plan and its rent-only plan, each staged, by the NPV of their cash over the five years
    (what the plan minimised) with the capex of every purchase of the horizon — not the final
    year's fleet alone, which made renting look 276 M KRW cheaper."""
    plan, rent = files.plan, _rent_only_plan()
    assert "schedule" in rent, "the rent-only plan should be staged too"
    plan_npv, rent_npv = amount(plan["cost"]["npv"]), amount(rent["cost"]["npv"])
    capex = sum((amount(y["capex"]) for y in _years(plan)), Decimal(0))
    rows = html_tables(files.html)["alternatives-table"]
    assert [r[0] for r in rows] == ["권장 혼합 구성", "임차 전용"]
    assert [exact_amount(r[2]) for r in rows] == [plan_npv, rent_npv]
    assert [exact_amount(r[3]) for r in rows] == [capex, Decimal(0)]
    extra = rent_npv - plan_npv
    assert extra > 0 and rows[1][6].startswith(f"{extra:,}원 ({extra / plan_npv:.1%}) 더 비쌈")
    assert "순현재가치(연 할인율 10.00%) 기준으로 비교합니다" in files.html
    sheet = _workbook_rows(files.xlsx, "대안 비교")
    assert [[Decimal(r[2]), Decimal(r[3])] for r in sheet[1:3]] == [[plan_npv, capex], [rent_npv, Decimal(0)]]
    flat = " ".join(section_text(files.pdf, "대안 비교", "연도별 현금 흐름").split())
    assert f"{plan_npv:,}원" in flat and f"{rent_npv:,}원" in flat and "더 비쌈" in flat


def _workbook_rows(content: bytes, name: str) -> list[list[Any]]:
    values = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    return [list(r) for r in values[name].iter_rows(values_only=True)]


def test_a_stored_five_year_quote_reads_back_the_same() -> None:
    """A saved plan's quote is its JSON document: the schedule round-trips exactly."""
    quote = example(EXAMPLE).quote
    assert quote.schedule is not None
    assert QuoteData.model_validate_json(quote.model_dump_json()) == quote


def test_without_a_rate_the_schedule_stands_and_the_alternatives_compare_nominal_tcos() -> None:
    """The same rollout with no discount rate: the schedule section and sheet without a present
    value, and the alternatives by their nominal TCO over the five years (the schedule's)."""
    request = load_scenario(EXAMPLES / f"{EXAMPLE}.yaml", api.PlanFleetRequest)
    request.constraints.ClearField("discount_rate_annual")
    planned = plan_and_quote(resolved_of(request), "no-rate")
    plan = planned.plan_json
    assert "npv" not in plan["cost"] and "schedule" in plan
    html = render(planned.quote, ReportFormat.HTML, Language.KO).content.decode("utf-8")
    tables = html_tables(html)
    assert "schedule-table" in tables and "present-value-table" not in tables
    rows = tables["alternatives-table"]
    assert exact_amount(rows[0][2]) == amount(plan["schedule"]["nominal_tco"])
    assert "명목 총소유비용 기준으로 비교합니다" in html
    book = openpyxl.load_workbook(io.BytesIO(render(planned.quote, ReportFormat.XLSX, Language.KO).content))
    assert "할인율 (연)" not in [r[0] for r in book[SHEET].iter_rows(values_only=True)]


def test_one_rounding_rule_the_horizon_totals_are_the_sums_of_the_yearly_rows(files: Files) -> None:
    """Issue 28 item 9 for a staged plan: the nominal TCO, the VAT's supply and the NPV are the
    sums of the rows the answer shows (each year's capex, opex per month × months, the tranches'
    market value; each plan year's discounted cash) — never a figure rounded on its own a few won
    off (before: 753,160,968 / 753,160,969 / 753,160,972 and NPV 594,725,950 / 594,725,951)."""
    plan = files.plan
    years, tranches = _years(plan), plan["schedule"]["tranches"]
    paid = sum((amount(y["capex"]) + amount(y["opex_monthly"]) * int(y["months"]) for y in years), Decimal(0))
    residual = sum((amount(t.get("residual_value")) for t in tranches), Decimal(0))
    flows = _flows(plan)
    nominal = sum((n for *_, n, _ in flows), Decimal(0))
    npv = sum((d for *_, d in flows), Decimal(0))
    assert nominal == paid - residual
    assert amount(plan["schedule"]["nominal_tco"]) == nominal
    assert amount(plan["schedule"]["horizon_tco"]) == npv == amount(plan["cost"]["npv"])
    vat = plan["cost"]["vat"]
    assert amount(vat["supply"]) == paid
    assert amount(vat["total"]) == paid + amount(vat["vat"])
    assert amount(vat["horizon_tco_with_vat"]) == nominal + amount(vat["vat"])
    capex = sum((amount(y["capex"]) for y in years), Decimal(0))
    rate = Decimal(str(vat["vat_rate"]))
    assert amount(vat["capex_vat"]) == (capex * rate).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    assert "Horizon NPV " + f"{npv:,} KRW" in plan["summary"]
    # the CLI's tables: the same totals, never another rounding of them
    text = render_plan(plan_to_proto(example(EXAMPLE).result), common_pb2.Provenance())
    assert f"horizon NPV at 10.00% a year {npv:,} KRW; nominal {nominal:,} KRW" in text
    assert f"NPV at 10.00% a year: {npv:,} KRW (nominal TCO {nominal:,} KRW" in text
    assert f"horizon TCO incl. VAT {amount(vat['horizon_tco_with_vat']):,} KRW" in " ".join(text.split())


def test_every_section_describes_the_staged_plan_over_the_horizon(files: Files) -> None:
    """제안 금액 = the NPV (what the plan minimised) with the nominal total and the total with VAT
    beside it; the BOM = each year's purchases (the year in 비고), adding up to every purchase of
    the horizon; section 5's cash = the yearly flows; summary TCO, capex and months of the horizon;
    the workbook's summary the same — all summed here from the plan JSON's rows."""
    plan = files.plan
    years, flows = _years(plan), _flows(plan)
    npv = sum((d for *_, d in flows), Decimal(0))
    nominal = sum((n for *_, n, _ in flows), Decimal(0))
    capex = sum((amount(y["capex"]) for y in years), Decimal(0))
    months = sum(int(y["months"]) for y in years)
    with_vat = nominal + amount(plan["cost"]["vat"]["vat"])
    fields = html_fields(files.html)
    assert [exact_amount(v) for v in fields["proposed-amount"]] == [npv]
    assert "제안 금액 (5개년 순현재가치)" in files.html
    beside = fields["proposed-beside"][0]
    assert f"명목 합계 {nominal:,}원" in beside and f"부가세 포함 {with_vat:,}원" in beside
    assert exact_amount(fields["horizon-tco"][0]) == nominal
    assert f"({capex:,}원)" in fields["capex"][0] and f"{months} 개월" in files.html
    assert "최종 연차의 구성만을" not in files.html
    bom = html_tables(files.html)["bom-table"]
    lines = [r for r in bom if r[6].startswith(tuple(f"{y['year']}차년도 초 구매" for y in years))]
    assert sum((exact_amount(r[5]) for r in lines), Decimal(0)) == capex
    for y in years:
        bought = [exact_amount(r[5]) for r in lines if r[6].startswith(f"{y['year']}차년도")]
        assert sum(bought, Decimal(0)) == amount(y["capex"])
    assert [exact_amount(v) for v in fields["bom-supply"]] == [capex]
    cash = html_tables(files.html)["cashflow-table"]
    assert [exact_amount(c) for c in cash[-1][1:-1]] == [
        amount(y["capex"]) + amount(y["opex_monthly"]) * int(y["months"]) for y in years
    ]
    assert exact_amount(cash[-1][-1]) == nominal
    summary = _workbook_rows(files.xlsx, "요약")
    by_name = {r[0]: r[1] for r in summary if r[0]}
    assert Decimal(by_name["제안 금액 (5개년 순현재가치)"]) == npv
    assert Decimal(by_name["총소유비용(TCO)"]) == nominal
    assert Decimal(by_name["초기 투자비(CAPEX)"]) == capex
    assert by_name["기간"] == months
    flat = " ".join(files.pdf.split())
    assert f"{npv:,}원" in flat and f"명목 합계 {nominal:,}원" in flat


def test_an_edited_unit_price_moves_the_years_capex_the_tco_and_the_npv_headline(files: Files) -> None:
    """Cutting the first GPU line's unit price in the workbook's BOM moves its year's subtotal,
    the supply amount, that year's purchase in the cash flow, the TCO and, through the schedule
    sheet's yearly cash, the NPV 제안 금액 — by the cut, discounted here from the plan year it is
    paid in (a purchase at the start of year y is plan year y − 1's cash)."""
    plan = files.plan
    book = openpyxl.load_workbook(io.BytesIO(files.xlsx))
    bom = book["견적 내역"]
    first = next(
        r for r in range(1, bom.max_row + 1) if str(bom[f"G{r}"].value or "").endswith("차년도 초 구매")
    )
    bought_in = int(str(bom[f"G{first}"].value).split("차년도")[0])
    quantity, price = int(bom[f"D{first}"].value), Decimal(str(bom[f"E{first}"].value))
    cut = Decimal(1_000_000)
    ev = Evaluator(book)
    summary = {str(c.value): c.row for c in book["요약"]["A"] if c.value}
    headline, tco = f"B{summary['제안 금액 (5개년 순현재가치)']}", f"B{summary['총소유비용(TCO)']}"
    before = (ev.value("요약", headline), ev.value("요약", tco))
    ev.set("견적 내역", f"E{first}", float(price - cut))
    less = cut * quantity
    flows = _flows(plan)
    nominal = [n - (less if year == bought_in - 1 else 0) for year, _, n, _ in flows]
    rate = _rate()
    npv = sum((_discounted(n, y, rate, ROUND_HALF_UP) for y, n in enumerate(nominal)), Decimal(0))
    assert ev.value("요약", tco) == pytest.approx(before[1] - float(less))
    assert ev.value("요약", headline) == pytest.approx(float(npv), abs=0.5)
    assert ev.value("요약", headline) < before[0]


def test_storage_bought_with_the_first_year_is_a_line_of_its_purchases() -> None:
    """The request's storage (a one-off purchase, paid with year 1's capex) is a BOM line of year 1,
    and each year's lines add up to that year's capex in the plan JSON."""
    request = load_scenario(EXAMPLES / f"{EXAMPLE}.yaml", api.PlanFleetRequest)
    request.constraints.storage.capacity_tb = 50
    request.constraints.storage.price_per_tb.amount = "400000"
    request.constraints.storage.price_per_tb.currency_code = "KRW"
    planned = plan_and_quote(resolved_of(request), "storage")
    years = planned.plan_json["schedule"]["years"]
    assert amount(years[0]["capex"]) >= Decimal(50 * 400_000)
    html = render(planned.quote, ReportFormat.HTML, Language.KO).content.decode("utf-8")
    fields = html_fields(html)
    for y in years:
        shown = [exact_amount(v) for v in fields.get(f"bom-year-{y['year']}", [])]
        assert shown == ([amount(y["capex"])] if amount(y["capex"]) else [])
    rows = html_tables(html)["bom-table"]
    storage = [r for r in rows if r[6].startswith("1차년도 초 구매") and "50" in r[1]]
    assert [exact_amount(r[5]) for r in storage] == [Decimal(50 * 400_000)]


def test_with_a_resale_credit_the_totals_are_still_the_rows_and_the_residual_is_a_row() -> None:
    """The rollout with the market value credited: the tranches' rounded values at the horizon
    come off the last year, and the nominal TCO, the yearly cash and the NPV stay the sums of the
    rows; the quote's cash flow credits the same amount in its last year."""
    request = load_scenario(EXAMPLES / f"{EXAMPLE}.yaml", api.PlanFleetRequest)
    request.constraints.residual_value_credit = True
    planned = plan_and_quote(resolved_of(request), "resale")
    plan = planned.plan_json
    years, tranches = _years(plan), plan["schedule"]["tranches"]
    residual = sum((amount(t.get("residual_value")) for t in tranches), Decimal(0))
    assert residual > 0, "the example should buy hardware with a market value at the horizon"
    paid = sum((amount(y["capex"]) + amount(y["opex_monthly"]) * int(y["months"]) for y in years), Decimal(0))
    flows = _flows(plan)
    nominal = sum((n for *_, n, _ in flows), Decimal(0))
    assert nominal == paid - residual == amount(plan["schedule"]["nominal_tco"])
    assert amount(plan["schedule"]["horizon_tco"]) == sum((d for *_, d in flows), Decimal(0))
    assert amount(plan["cost"]["vat"]["supply"]) == paid
    html = render(planned.quote, ReportFormat.HTML, Language.KO).content.decode("utf-8")
    cash = html_tables(html)["cashflow-table"]
    credited = [r for r in cash if r[0].startswith("잔존 가치")]
    assert [exact_amount(c) for c in credited[0][1:-1]] == [Decimal(0)] * (len(years) - 1) + [-residual]
    assert exact_amount(cash[-1][-1]) == nominal


def test_an_edited_opex_per_month_moves_the_cash_flow_the_tco_and_the_npv(files: Files) -> None:
    """A year's opex per month in the schedule sheet is what the cash flow multiplies by the
    year's months: raising year 1's moves the TCO by 12 × the rise and the NPV by its discounted
    year-1 cash (plan year 1's opex is paid at its end), computed here."""
    book = openpyxl.load_workbook(io.BytesIO(files.xlsx))
    ev = Evaluator(book)
    rows = _sheet_rows(files.xlsx)
    year_one = _row_after(rows, "연도") + 1  # the first year's row, 1-based
    summary = {str(c.value): c.row for c in book["요약"]["A"] if c.value}
    headline, tco = f"B{summary['제안 금액 (5개년 순현재가치)']}", f"B{summary['총소유비용(TCO)']}"
    before = ev.value("요약", tco)
    rise = Decimal(1000)
    monthly = Decimal(str(book[SHEET][f"E{year_one}"].value))
    assert monthly == amount(_years(files.plan)[0]["opex_monthly"])
    ev.set(SHEET, f"E{year_one}", float(monthly + rise))
    flows = _flows(files.plan)
    nominal = [n + (rise * months if year == 1 else 0) for year, months, n, _ in flows]
    npv = sum((_discounted(n, y, _rate(), ROUND_HALF_UP) for y, n in enumerate(nominal)), Decimal(0))
    assert ev.value("요약", tco) == pytest.approx(before + float(rise * 12))
    assert ev.value("요약", headline) == pytest.approx(float(npv), abs=0.5)
