"""What each audience sees, and VAT only when the request asks for it (issue 30, items 5 and 6)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from quote_files import html_fields, html_tables, xlsx_rows, xlsx_values
from report_support import example

from report import Language, ReportFormat, render
from report.data import AlternativeKind, QuoteData
from report.html import render_html
from report.presentation import Audience


def _for(quote: QuoteData, audience: Audience) -> QuoteData:
    return quote.model_copy(update={"audience": audience})


def test_a_buy_only_request_marks_renting_and_the_api_as_outside_it() -> None:
    quote = example("rtx5090_cluster").quote  # allowed_modes: [buy]
    assert quote.allowed_modes == ("buy",)
    outside = [a.kind for a in quote.alternatives if not a.meets_requirement]
    assert AlternativeKind.RENT_ONLY in outside
    assert all(a.meets_requirement for a in quote.alternatives if a.kind is AlternativeKind.SINGLE_GPU)


def test_the_customer_never_sees_an_alternative_the_request_does_not_allow() -> None:
    quote = example("rtx5090_cluster").quote
    page = render_html(_for(quote, Audience.CUSTOMER), Language.EN)
    fields = html_fields(page)
    assert "alt-tco-rent_only" not in fields and "alt-tco-api" not in fields
    assert "alt-tco-recommended" in fields
    assert "buy-vs-rent-table" not in html_tables(page) and "api-table" not in html_tables(page)
    assert "The request allows buying only" in page
    sheet = xlsx_rows(
        render(_for(quote, Audience.CUSTOMER), ReportFormat.XLSX, Language.EN).content, "Alternatives"
    )
    assert not any(str(row[0]).startswith("Rent only") for row in sheet)


def test_the_bidders_team_sees_them_marked() -> None:
    quote = example("rtx5090_cluster").quote
    page = render_html(_for(quote, Audience.INTERNAL), Language.KO)
    rows = html_tables(page)["alternatives-table"]
    rent = next(row for row in rows if row[0].startswith("임차 전용"))
    assert rent[-1].startswith("요구 조건 미충족 (허용 방식: 구매)")
    single = [row for row in rows if row[0].startswith("단일 가속기")]
    assert single and not any("미충족" in row[-1] for row in single)


def test_a_request_allowing_rentals_shows_them_to_the_customer() -> None:
    quote = example("500m_krw_portfolio").quote  # allowed_modes: [buy, on_demand]
    assert all(a.meets_requirement for a in quote.alternatives)
    fields = html_fields(render_html(quote, Language.KO))
    assert "alt-tco-rent_only" in fields


@pytest.mark.parametrize("name", ["rtx5090_cluster", "100b_tp_serving", "60m_krw_single_gpu"])
def test_no_vat_line_when_the_request_does_not_ask_for_it(name: str) -> None:
    quote = example(name).quote
    assert quote.bom is not None and quote.bom.vat is None
    assert quote.bom.total == quote.bom.supply_amount
    page = render_html(quote, Language.KO)
    fields = html_fields(page)
    assert "bom-vat" not in fields and "bom-total" not in fields
    sheet = xlsx_rows(render(quote, ReportFormat.XLSX, Language.KO).content, "견적 내역")
    assert not any(cell in ("부가세", "부가세율", "합계") for row in sheet for cell in row)


def test_the_vat_line_at_the_requests_rate_when_asked() -> None:
    planned = example("500m_krw_portfolio")  # include_vat: true
    quote = planned.quote
    vat = planned.plan_json["cost"]["vat"]
    assert quote.bom is not None and quote.bom.vat is not None
    assert quote.bom.vat_rate == pytest.approx(vat["vat_rate"])
    assert quote.bom.vat.amount == Decimal(vat["capex_vat"]["amount"])
    rate = Decimal(str(vat["vat_rate"]))
    assert abs(quote.bom.vat.amount - quote.bom.supply_amount.amount * rate) <= 1
    assert "bom-vat" in html_fields(render_html(quote, Language.KO))


def test_only_the_internal_workbook_has_the_sourcing_sheet() -> None:
    planned = example("rtx5090_cluster")
    offers = {line["offer_id"] for line in planned.plan_json["fleet"]}
    customer = xlsx_values(
        render(_for(planned.quote, Audience.CUSTOMER), ReportFormat.XLSX, Language.KO).content
    )
    internal = xlsx_values(
        render(_for(planned.quote, Audience.INTERNAL), ReportFormat.XLSX, Language.KO).content
    )
    assert "내부 조달" not in customer.sheetnames and internal.sheetnames[-1] == "내부 조달"
    listed = {row[2] for row in internal["내부 조달"].iter_rows(min_row=2, values_only=True)}
    assert offers <= listed
    for sheet in customer.worksheets:  # no offer id anywhere the customer can see
        if sheet.title != "가정":  # the assumptions annex lists every pricebook entry used
            cells = {str(v) for row in sheet.iter_rows(values_only=True) for v in row if v is not None}
            assert not offers & cells, sheet.title
