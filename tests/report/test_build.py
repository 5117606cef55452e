"""build_quote: every figure of the quote is the plan's (checked against the plan's own JSON and
the pricebook), and the few derived ones (VAT, cash flow by year, the API alternative) follow
their definitions."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from report_support import amount, example, expected_bom_lines

from pricebook.schema import Money
from report.cashflow import cash_flow
from report.data import AlternativeKind, BomKind
from report.formatting import korean_units, money_summary
from report.labels import Language

DAYS_PER_MONTH = Decimal(365) / Decimal(12)


@pytest.mark.parametrize("name", ["500m_krw_portfolio", "rtx5090_cluster"])
def test_totals_and_bom_lines_are_the_plans(name: str) -> None:
    planned = example(name)
    quote, cost = planned.quote, planned.plan_json["cost"]
    assert quote.economics is not None and quote.bom is not None
    assert quote.economics.horizon_tco.amount == amount(cost["horizon_tco"])
    assert quote.economics.capex.amount == amount(cost["capex"])
    assert quote.economics.opex.total.amount == amount(cost["opex_monthly"])
    assert [b.amount.amount for b in quote.bom.lines] == expected_bom_lines(planned)
    assert quote.bom.supply_amount.amount == amount(cost["capex"])
    for line in quote.bom.lines:
        assert line.unit_price.amount * line.quantity == line.amount.amount


def test_vat_is_the_sites_rate_on_the_supply_amount() -> None:
    planned = example("500m_krw_portfolio")  # the request includes VAT: the plan has a VAT line
    bom = planned.quote.bom
    assert bom is not None
    rate = Decimal(str(planned.resolved.book.site.vat_rate))
    expected_vat = (bom.supply_amount.amount * rate).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    assert bom.vat.amount == expected_vat == amount(planned.plan_json["cost"]["vat"]["capex_vat"])
    assert bom.total.amount == bom.supply_amount.amount + expected_vat
    economics = planned.quote.economics
    assert economics is not None and economics.vat is not None
    assert economics.vat.horizon_tco_with_vat.amount == amount(
        planned.plan_json["cost"]["vat"]["horizon_tco_with_vat"]
    )


def test_cash_flow_years_add_up_to_the_horizon_tco() -> None:
    quote = example("500m_krw_portfolio").quote
    assert quote.economics is not None
    flow = cash_flow(quote.economics, quote.horizon_months)
    assert flow.months == (12, 12, 12)
    assert flow.total == quote.economics.horizon_tco
    rows = dict(flow.rows)
    assert rows["capex"][0] == quote.economics.capex and all(a.amount == 0 for a in rows["capex"][1:])
    assert rows["residual"][-1].amount == -quote.economics.residual_value.amount
    assert rows["power"][1].amount == quote.economics.opex.power.amount * 12


def test_a_partial_last_year_counts_its_months_only() -> None:
    quote = example("500m_krw_portfolio").quote
    assert quote.economics is not None
    flow = cash_flow(quote.economics, 30)
    assert flow.months == (12, 12, 6)
    opex_30 = quote.economics.opex.total.amount * 30
    assert flow.total.amount == quote.economics.capex.amount - quote.economics.residual_value.amount + opex_30


def test_alternatives_are_the_plans_baselines_rent_only_and_api() -> None:
    planned = example("500m_krw_portfolio")
    alternatives = planned.quote.alternatives
    kinds = [a.kind for a in alternatives]
    assert kinds[0] is AlternativeKind.RECOMMENDED
    baselines = [a for a in alternatives if a.kind is AlternativeKind.SINGLE_GPU]
    assert [(a.name, a.feasible) for a in baselines] == [
        (b["gpu_id"], b.get("feasible", False)) for b in planned.plan_json["baselines"]
    ]
    rent = next(a for a in alternatives if a.kind is AlternativeKind.RENT_ONLY)
    assert rent.feasible == planned.rentals.solution.has_plan
    if rent.feasible:
        assert rent.capex is not None and rent.capex.amount == 0
        assert rent.horizon_tco == planned.rentals.horizon_tco
    api = next(a for a in alternatives if a.kind is AlternativeKind.API)
    # embeddings have no API price and the portfolio trains: not comparable, and it says why
    assert not api.feasible and "embeddings" in api.reason and api.extra_cost is None
    rows = planned.plan_json["break_even"]["api"]
    months = Decimal(planned.quote.horizon_months)
    expected = (
        sum(
            amount(r.get("api_per_million_tokens")) * Decimal(str(r["workload_daily_tokens"])) / 10**6
            for r in rows
            if "api_per_million_tokens" in r
        )
        * DAYS_PER_MONTH
        * months
    )
    assert api.horizon_tco is not None and abs(api.horizon_tco.amount - expected) <= 1


def test_a_comparable_api_alternative_says_how_much_more_it_costs() -> None:
    planned = example("rtx5090_cluster")
    api = next(a for a in planned.quote.alternatives if a.kind is AlternativeKind.API)
    assert api.feasible and api.reason == ""
    assert api.horizon_tco is not None and api.extra_cost is not None
    plan_tco = amount(planned.plan_json["cost"]["horizon_tco"])
    assert api.extra_cost.amount == api.horizon_tco.amount - plan_tco


def test_bom_lists_hosts_when_the_request_counts_them() -> None:
    quote = example("rtx5090_cluster").quote
    assert quote.bom is not None
    assert [b.kind for b in quote.bom.lines] == [BomKind.GPU, BomKind.HOST]


def test_assumptions_name_every_offer_used_with_source_and_date() -> None:
    planned = example("500m_krw_portfolio")
    offers = {a.key: a for a in planned.quote.assumptions if a.kind.value == "offer"}
    used = {line["offer_id"] for line in planned.plan_json["fleet"]}
    assert used <= set(offers)
    for offer_id in used:
        entry = next(o for o in planned.resolved.book.offers if o.id == offer_id)
        assert offers[offer_id].source == entry.source and offers[offer_id].as_of == entry.as_of
        assert offers[offer_id].label == entry.label.value
    site = {a.key for a in planned.quote.assumptions if a.kind.value == "site"}
    assert {"pue", "vat_rate", "colocation_price_month", "electricity_krw_per_kwh"} <= site
    assert {f"residual_curve.{c.gpu_class.value}" for c in planned.resolved.book.site.residual_curves} <= site
    assert any(a.kind.value == "fx" for a in planned.quote.assumptions)


@pytest.mark.parametrize(
    ("won", "text"),
    [
        (247_591_848, "2억 4,759만 원"),  # 2·10^8 + 4,759·10^4 + 1,848
        (350_000_000, "3억 5,000만 원"),
        (2_794_218, "279만 원"),  # 279·10^4 + 4,218 (rounds down)
        (100_005_000, "1억 1만 원"),  # 5,000 won rounds half up to the next 만
        (9_999, "9,999원"),
        (1_200_000_000_000, "12,000억 원"),
    ],
)
def test_korean_summary_amounts_in_eok_and_man(won: int, text: str) -> None:
    assert korean_units(Decimal(won)) == text
    assert money_summary(Money(amount=Decimal(won), currency="KRW"), Language.KO).startswith(text)


def test_a_summary_amount_under_one_man_is_written_once() -> None:
    assert money_summary(Money(amount=Decimal(0), currency="KRW"), Language.KO) == "0원"
