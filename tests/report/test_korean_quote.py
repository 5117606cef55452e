"""The Korean customer quote of a public-sector bid (issue 30): the shape Korean bids use, and
Korean words — outside the annexes (부록) and product and model names at least 95 % of the words
are Hangul or numbers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hangul import count_words, visible_words
from quote_files import html_fields, html_tables, without_word_spans
from report_support import amount, bid_example, example

from pricebook import load_default
from report import Language
from report.data import QuoteData
from report.html import render_html
from report.presentation import Audience, QuoteHeader

HEADER = QuoteHeader(
    customer="경기도 정보화정책관",
    quote_number="제2026-1206호",
    validity="견적일로부터 30일",
    delivery="발주 후 8주",
    payment_terms="검수 완료 후 30일 이내 현금 지급",
    supplier_name="주식회사 한빛인프라",
    supplier_registration_number="123-45-67890",
    supplier_representative="김한빛",
    supplier_contact="영업팀 박영업 02-555-0100",
)


def _quote(audience: Audience) -> QuoteData:
    quote = bid_example("kr_public_rag_bid").quote
    return quote.model_copy(
        update={"audience": audience, "header": HEADER, "title": "민원 답변 검색 서비스 구축"}
    )


DESIGNATIONS = ("IDC", "MIG", "fp4", "fp8", "bf16", "fp16", "int4", "int8", *(f"TP{t}" for t in (1, 2, 4, 8)))
"""Technical designations a Korean bid writes as they are: how a deployment runs (tensor
parallelism, MIG slice, precision) and IDC (the issue's own term, IDC 상면)."""


def _names() -> list[str]:
    book = load_default()
    return [
        *(g.id for g in book.gpus),
        *(g.name for g in book.gpus),
        *(s.id for s in book.servers),
        *(s.name for s in book.servers),
        *(m.id for m in book.models),
        *(w.name for w in _quote(Audience.CUSTOMER).workloads),  # the customer's own names
        *DESIGNATIONS,
    ]


def test_at_least_95_percent_of_the_customer_quotes_words_are_hangul_or_numbers() -> None:
    page = render_html(_quote(Audience.CUSTOMER), Language.KO)
    count = count_words(visible_words(page), _names())
    assert count.hangul_or_number > 300  # the count reads the page, not an empty string
    assert count.share >= 0.95, (round(count.share, 4), count.other)


def test_the_count_fails_an_english_page() -> None:
    page = render_html(_quote(Audience.CUSTOMER), Language.EN)
    assert count_words(visible_words(page), _names()).share < 0.5


def test_the_korean_quote_has_the_shape_of_a_korean_bid() -> None:
    planned = bid_example("kr_public_rag_bid")
    page = render_html(_quote(Audience.CUSTOMER), Language.KO)
    for term in (
        "수신",
        "견적번호",
        "견적일",
        "유효기간",
        "납기",
        "결제조건",
        "상호",
        "사업자등록번호",
        "담당자",
    ):
        assert f"<dt>{term}</dt>" in page, term
    assert (
        "<th>품명</th><th>규격</th><th>단위</th><th>수량</th><th>단가</th><th>금액</th><th>비고</th>"
        in without_word_spans(page)
    )
    fields = html_fields(page)
    cost = planned.plan_json["cost"]
    capex = amount(cost["capex"])
    vat = amount(cost["vat"]["capex_vat"])
    assert fields["proposed-amount"][0].endswith(f"({capex + vat:,}원)")
    budget = Decimal(300_000_000)
    assert fields["budget"][0].endswith(f"({budget:,}원)")
    assert fields["spend"][0].endswith(f"({capex:,}원)")
    assert fields["remaining"][0].endswith(f"({budget - capex:,}원)")
    bought = [line for line in planned.plan_json["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"]
    assert float(fields["power-kw"][0]) == pytest.approx(sum(line["power_kw"] for line in bought), abs=0.05)
    assert float(fields["rack-units"][0]) == pytest.approx(
        sum(line["rack_units"] for line in bought), abs=0.5
    )
    for money in fields["bom-amount"] + fields["bom-unit"]:
        assert "." not in money  # whole won


def test_the_customer_sees_no_internal_sourcing_and_the_team_does() -> None:
    planned = bid_example("kr_public_rag_bid")
    offers = [line["offer_id"] for line in planned.plan_json["fleet"]]
    customer = render_html(_quote(Audience.CUSTOMER), Language.KO)
    internal = render_html(_quote(Audience.INTERNAL), Language.KO)
    assert offers and not any(offer in customer.split('id="assumptions"')[0] for offer in offers)
    sourcing = html_tables(internal)["sourcing-table"]
    assert set(offers) <= {row[2] for row in sourcing}
    assert (
        "부록 3. 견적 내역의 내부 조달 정보" in internal and "부록 4. 계획 엔진 원문 메모 (영문)" in internal
    )
    assert "sourcing-table" not in customer and "planner-notes" not in customer


def test_the_budget_gauge_is_drawn() -> None:
    page = render_html(_quote(Audience.CUSTOMER), Language.KO)
    start = page.index('id="chart-budget"')
    assert page[start : page.index("</figure>", start)].count("<path") > 10


def test_the_sensitivity_rows_parameters_read_in_korean() -> None:
    quote = _quote(Audience.CUSTOMER)
    assert any(": where the optimal mix changes" in s.parameter for s in quote.sensitivity)
    rows = html_tables(render_html(quote, Language.KO))["sensitivity-table"]
    assert rows and all("최적 구성이 바뀌는 지점" in row[1] and "where" not in row[1] for row in rows)


def test_korean_terms_and_whole_won_lines_that_add_up_to_the_capex() -> None:
    """1차년도 …, 견적 내역, 가능/불가; every BOM amount in whole won, with a 단수 조정 line where the
    rounded unit prices leave a difference, and the lines adding up to the plan's capex."""
    page = render_html(_quote(Audience.INTERNAL), Language.KO)
    assert "<th>1차년도 (12 개월)</th>" in without_word_spans(page) and "<h2>2. 견적 내역</h2>" in page
    assert {row[1] for row in html_tables(page)["alternatives-table"]} <= {
        "가능",
        "불가",
        "실현 가능 (시간 제한)",
    }
    planned = example("500m_krw_portfolio")  # its unit prices round to a 1원 difference
    rows = html_tables(render_html(planned.quote, Language.KO))["bom-table"]
    lines = [row for row in rows if row[0]]
    rounding = [row for row in lines if row[0] == "단수 조정"]
    assert len(rounding) == 1 and rounding[0][6] == "합계를 초기 투자비와 일치"
    amounts = [Decimal(row[5].removesuffix("원").replace(",", "")) for row in lines]
    assert all(a == a.to_integral_value() for a in amounts) and all(row[5].endswith("원") for row in lines)
    assert sum(amounts) == amount(planned.plan_json["cost"]["capex"]) and amounts[-1] != 0
