"""The own-site model and the residual-credit switch (issue 30 item 7), derived by hand from the
formulas of docs/economics.md with the sourced site figures written out below (not read from the
code): one HGX H200 8-GPU server, 60 % busy, 36 months, USD."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.errors import InvalidRequest
from pricebook.loader import load_default
from pricebook.overrides import PricebookOverrides, apply_overrides
from pricebook.schema import Money, Pricebook, SiteModel
from solver.analysis.breakeven import owning_cost
from solver.analysis.tco import (
    NO_RESIDUAL_CREDIT,
    OWN_SITE_POWER,
    OWN_SITE_SPACE,
    CostComponentName,
    FleetLine,
    SiteTerms,
    cost_components,
    fleet_tco,
)
from solver.domain import AcquisitionMode, Constraints
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption

MONTHS = 36
HOURS = 730
HGX_H200_SERVER = 312_667  # street, archive.ph (2025-01-31)
HGX_HOST = 70_000
HGX_HOST_W = 4_600
HGX_RACK_UNITS = 8
H200_TDP_W = 700
TARIFF_USD = 0.0826  # EIA US industrial 2025, per kWh
PUE = 1.54
IDLE, AVERAGE = 0.15, 0.75
SUPPORT_PER_MONTH = 0.05 / 12
MARKET_VALUE_36 = 0.30
SPACE_PER_U = 100  # the test's own space price, USD per rack unit-month
BUSY = 0.6
H200_OPTION = "h200-sxm/buy/hgx-h200-8gpu"


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def option(book: Pricebook, **settings: object) -> AcquisitionOption:
    constraints = Constraints(currency="USD", horizon_months=MONTHS, allowed_gpus=("h200-sxm",), **settings)
    return next(o for o in acquisition_options(book, constraints) if o.id == H200_OPTION)


def server_line(opt: AcquisitionOption) -> FleetLine:
    return FleetLine(opt, gpus=8, servers=1, busy_gpu_hours_per_month=8 * HOURS * BUSY)


def usd(amount: float) -> Money:
    return Money(amount=Decimal(str(round(amount, 2))).quantize(Decimal("0.01")), currency="USD")


def with_space(book: Pricebook) -> Pricebook:
    overrides = PricebookOverrides(site={"own_site_space_price_month": f"{SPACE_PER_U} USD"})
    return apply_overrides(book, overrides)[0]


def test_own_site_lines_by_hand(book: Pricebook) -> None:
    opt = option(with_space(book), site_model=SiteModel.OWN_SITE)
    tco = fleet_tco([server_line(opt)], MONTHS, "USD").total
    wall = PUE / 1000 * TARIFF_USD  # per W of IT load and hour
    gpu_power = 8 * H200_TDP_W * wall * (IDLE * HOURS + (AVERAGE - IDLE) * HOURS * BUSY)
    host_power = HGX_HOST_W * wall * HOURS
    assert tco.power_monthly == usd(gpu_power + host_power)
    # No colocation fee: the only rack cost is the site's space price per U.
    assert tco.colocation_monthly == usd(SPACE_PER_U * HGX_RACK_UNITS)
    assert tco.support_monthly == usd(HGX_H200_SERVER * SUPPORT_PER_MONTH)
    assert tco.residual_value == usd(MARKET_VALUE_36 * HGX_H200_SERVER)
    opex = sum(
        round(x, 2) for x in (gpu_power + host_power, SPACE_PER_U * 8, HGX_H200_SERVER * SUPPORT_PER_MONTH)
    )
    total = HGX_H200_SERVER - round(MARKET_VALUE_36 * HGX_H200_SERVER, 2) + opex * MONTHS
    assert float(tco.horizon_total.amount) == pytest.approx(total, abs=0.01)


def test_own_site_without_a_space_price_pays_power_only(book: Pricebook) -> None:
    opt = option(book, site_model=SiteModel.OWN_SITE)
    assert opt.colocation_monthly_per_gpu == 0 and opt.colocation_monthly_per_server == 0
    assert opt.host_power_monthly_per_server == pytest.approx(HGX_HOST_W * PUE / 1000 * TARIFF_USD * HOURS)


def test_colocation_stays_the_default(book: Pricebook) -> None:
    # $200 per kW including power: no power line, and the book's answer is unchanged.
    assert option(book) == option(book, site_model=SiteModel.COLOCATION, residual_value_credit=True)
    assert option(book).host_power_monthly_per_server == 0


def test_no_residual_credit_by_hand(book: Pricebook) -> None:
    opt = option(book, residual_value_credit=False)
    tco = fleet_tco([server_line(opt)], MONTHS, "USD").total
    assert tco.residual_value == usd(0)
    assert tco.depreciation == usd(HGX_H200_SERVER)
    credited = fleet_tco([server_line(option(book))], MONTHS, "USD").total
    assert (
        tco.horizon_total.amount - credited.horizon_total.amount
        == usd(MARKET_VALUE_36 * HGX_H200_SERVER).amount
    )


def test_the_book_can_switch_the_credit_off(book: Pricebook) -> None:
    changed = apply_overrides(book, PricebookOverrides(site={"residual_value_credit": False}))[0]
    assert option(changed).residual_fraction == 0
    assert changed.content_hash != book.content_hash
    # The request's choice wins over the book's.
    assert option(changed, residual_value_credit=True).residual_fraction == pytest.approx(MARKET_VALUE_36)


def test_explanations_follow_the_settings(book: Pricebook) -> None:
    opt = option(with_space(book), site_model=SiteModel.OWN_SITE, residual_value_credit=False)
    tco = fleet_tco([server_line(opt)], MONTHS, "USD").total
    parts = {
        c.name: c for c in cost_components(tco, SiteTerms(SiteModel.OWN_SITE, residual_value_credit=False))
    }
    assert parts[CostComponentName.POWER].explanation == OWN_SITE_POWER
    assert parts[CostComponentName.COLOCATION].explanation == OWN_SITE_SPACE
    assert parts[CostComponentName.RESIDUAL_VALUE].explanation == NO_RESIDUAL_CREDIT
    assert parts[CostComponentName.RESIDUAL_VALUE].horizon_amount.amount == 0
    assert sum(c.horizon_amount.amount for c in parts.values()) == tco.horizon_total.amount


@pytest.mark.parametrize(
    ("site", "field"),
    [
        ({"own_site_space_price_month": "-5 USD"}, "overrides.site.own_site_space_price_month"),
        ({"site_model": "basement"}, "overrides.site.site_model"),
        ({"own_site_space_basis": "per_floor"}, "overrides.site.own_site_space_basis"),
        (
            {"own_site_space_price_month": 30000},
            "overrides.site.own_site_space_price_month: give the currency",
        ),
    ],
)
def test_bad_site_settings_name_the_field(book: Pricebook, site: dict[str, str | float], field: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        apply_overrides(book, PricebookOverrides(site=site))
    assert field in str(err.value)


@settings(max_examples=40, deadline=None)
@given(
    gpus=st.integers(1, 64),
    busy=st.floats(0.0, 1.0),
    months=st.integers(1, 120),
    own_site=st.booleans(),
    gpu=st.sampled_from(["h200-sxm", "l40s", "rtx-pro-6000-ws", "h100-sxm"]),
)
def test_turning_the_credit_off_never_makes_a_plan_cheaper(
    gpus: int, busy: float, months: int, own_site: bool, gpu: str
) -> None:
    book = load_default()
    model = SiteModel.OWN_SITE if own_site else SiteModel.COLOCATION

    def total(credit: bool) -> Decimal:
        constraints = Constraints(
            currency="KRW",
            horizon_months=months,
            allowed_gpus=(gpu,),
            site_model=model,
            residual_value_credit=credit,
        )
        lines = []
        for opt in acquisition_options(book, constraints):
            if opt.mode is AcquisitionMode.BUY:
                servers = -(-gpus // opt.gpus_per_server)
                count = servers * opt.gpus_per_server if opt.server_must_be_full else gpus
                lines.append(FleetLine(opt, count, servers, count * HOURS * busy))
        return fleet_tco(lines, months, "KRW").total.horizon_total.amount

    assert total(credit=False) >= total(credit=True)


def test_break_even_follows_the_settings_by_hand(book: Pricebook) -> None:
    # F = (P × (1 − v) + I) / H + R per GPU of a full server; without the credit v = 0, and on the
    # own site R holds the power instead of the colocation (docs/economics.md, "One break-even").
    per_gpu_purchase = HGX_H200_SERVER / 8
    support = per_gpu_purchase * SUPPORT_PER_MONTH
    wall = PUE / 1000 * TARIFF_USD * HOURS
    own_site_running = support + H200_TDP_W * IDLE * wall + HGX_HOST_W / 8 * wall
    owning = owning_cost(option(book, site_model=SiteModel.OWN_SITE, residual_value_credit=False), MONTHS)
    assert owning.fixed_monthly == pytest.approx(per_gpu_purchase / MONTHS + own_site_running)
    assert owning.busy_hourly == pytest.approx(H200_TDP_W * (AVERAGE - IDLE) * PUE / 1000 * TARIFF_USD)
    credited = owning_cost(option(book, site_model=SiteModel.OWN_SITE), MONTHS)
    assert owning.fixed_monthly - credited.fixed_monthly == pytest.approx(
        per_gpu_purchase * MARKET_VALUE_36 / MONTHS
    )
