"""acquisition_options: each cost field derived by hand from the test book (conftest.py)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from decimal import Decimal

import pytest
from econ_factories import offer, site

from pricebook.schema import Money, Pricebook
from solver.domain import AcquisitionMode, Constraints, OwnedGpus
from solver.pricing.costs import acquisition_options, capex_budget_ex_vat
from solver.pricing.options import AcquisitionOption

BookFactory = Callable[..., Pricebook]


def by_id(options: list[AcquisitionOption]) -> dict[str, AcquisitionOption]:
    return {o.id: o for o in options}


def test_buy_option_for_hgx_h200_in_usd(make_book: BookFactory) -> None:
    options = by_id(acquisition_options(make_book(), Constraints(currency="USD", horizon_months=36)))
    opt = options["h200-sxm/buy/hgx-h200-8gpu"]
    # The street price ($35,000) wins over the cheaper estimate: most reliable label first.
    assert opt.offer_id == "h200-buy"
    assert opt.price_label == "street"
    assert opt.capex_per_gpu == pytest.approx(35_000)
    assert opt.capex_per_server == pytest.approx(40_000)
    # Market value after 36 months: the test book's curve point, 30 %.
    assert opt.residual_fraction == pytest.approx(0.30)
    # Support 12 %/yr = 1 %/month of the GPU price.
    assert opt.fixed_monthly_per_gpu == pytest.approx(350.0)
    # Colocation 8 RU × $100 = 800; host power 2 kW × PUE 1.5 = 3 kW × $0.08 × 730 h = 175.2;
    # host support 1 % × 40,000 = 400.
    assert opt.fixed_monthly_per_server == pytest.approx(800 + 175.2 + 400)
    assert opt.colocation_monthly_per_server == pytest.approx(800)
    assert opt.host_power_monthly_per_server == pytest.approx(175.2)
    # Busy GPU: 700 W × 0.75 average draw × PUE 1.5 = 0.7875 kW × $0.08.
    assert opt.busy_hourly_per_gpu == pytest.approx(0.063)
    assert opt.power_kw_per_gpu == pytest.approx(1.05)
    assert opt.power_kw_per_server == pytest.approx(3.0)
    assert opt.rack_units_per_server == 8
    assert opt.gpus_per_server == 8
    assert opt.server_must_be_full  # an SXM board comes fully populated
    assert opt.scale_up_domain_size == 8
    assert not opt.owned


def test_vat_inclusive_krw_offer_stripped_for_a_usd_ex_vat_request(make_book: BookFactory) -> None:
    opt = by_id(acquisition_options(make_book(), Constraints(currency="USD")))["rtx-pro-6000/buy/pcie-4gpu"]
    # 11,000,000 KRW includes 10 % VAT → 10,000,000 KRW net → ÷ 1,400 KRW/USD.
    assert opt.capex_per_gpu == pytest.approx(10_000_000 / 1400)
    assert not opt.server_must_be_full  # PCIe slots may stay empty
    assert opt.scale_up_domain_size == 1


def test_krw_request_with_vat_prices_ex_vat(make_book: BookFactory) -> None:
    # include_vat adds a VAT line to the answer (solver.analysis.tco.vat_lines); the options the
    # optimizer compares stay ex-VAT.
    constraints = Constraints(currency="KRW", include_vat=True, horizon_months=60)
    options = by_id(acquisition_options(make_book(), constraints))
    h200 = options["h200-sxm/buy/hgx-h200-8gpu"]
    assert h200.capex_per_gpu == pytest.approx(35_000 * 1400)
    # 60 months on the curve 0.3^(m / 36): exp(ln 0.3 × 60 / 36).
    assert h200.residual_fraction == pytest.approx(math.exp(math.log(0.3) * 60 / 36))
    # The KRW tariff, 180 won/kWh × 0.7875 kW.
    assert h200.busy_hourly_per_gpu == pytest.approx(0.7875 * 180)
    rtx = options["rtx-pro-6000/buy/pcie-4gpu"]
    assert rtx.capex_per_gpu == pytest.approx(11_000_000 / 1.1)  # its VAT removed


def test_market_value_keeps_falling_after_the_last_sourced_point(make_book: BookFactory) -> None:
    opt = by_id(acquisition_options(make_book(), Constraints(horizon_months=96)))[
        "h200-sxm/buy/hgx-h200-8gpu"
    ]
    # Beyond 36 months at the same monthly rate: 0.3 × 0.3^(60 / 36).
    assert opt.residual_fraction == pytest.approx(0.3 * 0.3 ** (60 / 36))


def test_gpus_only_pricing_drops_host_costs(make_book: BookFactory) -> None:
    constraints = Constraints(include_host_costs=False)
    opt = by_id(acquisition_options(make_book(), constraints))["h200-sxm/buy/hgx-h200-8gpu"]
    assert opt.capex_per_server == 0
    assert opt.fixed_monthly_per_server == 0
    assert opt.power_kw_per_server == 0
    assert opt.fixed_monthly_per_gpu == pytest.approx(350.0)  # GPU support is still paid


def test_rentals_take_the_cheapest_offer(make_book: BookFactory) -> None:
    modes = (AcquisitionMode.ON_DEMAND, AcquisitionMode.RESERVED)
    options = by_id(acquisition_options(make_book(), Constraints(allowed_modes=modes, horizon_months=36)))
    on_demand = options["h200-sxm/on_demand/h200-od-cheap"]
    assert on_demand.busy_hourly_per_gpu == pytest.approx(3.5)
    assert on_demand.fixed_monthly_per_gpu == 0
    assert on_demand.capex_per_gpu == 0
    assert on_demand.power_kw_per_gpu == 0  # off-site: no site power or racks
    reserved = options["h200-sxm/reserved/h200-res-12"]
    assert reserved.fixed_monthly_per_gpu == pytest.approx(2.5 * 730)
    assert reserved.busy_hourly_per_gpu == 0
    assert "rtx-pro-6000/on_demand/rtx-od" in options
    assert not any(o.mode is AcquisitionMode.BUY for o in options.values())


def test_reserved_pays_whole_terms(make_book: BookFactory) -> None:
    constraints = Constraints(allowed_modes=(AcquisitionMode.RESERVED,), horizon_months=30)
    reserved = by_id(acquisition_options(make_book(), constraints))["h200-sxm/reserved/h200-res-12"]
    # 30 months need three 12-month terms: 36 months paid, spread over the 30-month horizon.
    assert reserved.fixed_monthly_per_gpu == pytest.approx(2.5 * 730 * 36 / 30)


def test_allowed_gpus_filter(make_book: BookFactory) -> None:
    options = acquisition_options(make_book(), Constraints(allowed_gpus=("rtx-pro-6000",)))
    assert {o.gpu for o in options} == {"rtx-pro-6000"}


def test_owned_gpus_are_sunk_but_still_run(make_book: BookFactory) -> None:
    constraints = Constraints(owned=(OwnedGpus(gpu="h200-sxm", count=4),), allowed_gpus=("rtx-pro-6000",))
    options = by_id(acquisition_options(make_book(), constraints))
    owned = options["h200-sxm/owned/hgx-h200-8gpu"]
    assert owned.owned
    assert owned.capex_per_gpu == 0 and owned.capex_per_server == 0
    assert owned.residual_fraction == 0
    assert owned.fixed_monthly_per_gpu == pytest.approx(350.0)
    assert owned.busy_hourly_per_gpu == pytest.approx(0.063)


def test_whole_server_offer_is_split_into_host_and_gpus(make_book: BookFactory) -> None:
    server_offer = offer("hgx-quote", "purchase_server", "h200-sxm", "328000 USD", server="hgx-h200-8gpu")
    book = make_book(offers=(server_offer,))
    opt = by_id(acquisition_options(book, Constraints()))["h200-sxm/buy/hgx-h200-8gpu"]
    assert opt.offer_id == "hgx-quote"
    assert opt.capex_per_gpu == pytest.approx((328_000 - 40_000) / 8)
    assert opt.capex_per_server == pytest.approx(40_000)


def test_card_without_a_server_model(make_book: BookFactory) -> None:
    book = make_book(servers=())
    opt = by_id(acquisition_options(book, Constraints()))["rtx-pro-6000/buy/rtx-buy"]
    assert opt.server_id is None
    assert opt.capex_per_server == 0 and opt.rack_units_per_server == 0


def test_cheapest_within_the_label_whatever_its_currency(make_book: BookFactory) -> None:
    base = make_book()
    krw = offer("h200-krw", "purchase_gpu", "h200-sxm", "48000000 KRW", as_of=dt.date(2025, 6, 1))
    book = make_book(offers=(*base.offers, krw))
    # 48,000,000 KRW = $34,285.71 at 1,400: cheaper than the $35,000 street price, in either currency.
    krw_plan = by_id(acquisition_options(book, Constraints(currency="KRW")))
    assert krw_plan["h200-sxm/buy/hgx-h200-8gpu"].capex_per_gpu == pytest.approx(48_000_000)
    usd = by_id(acquisition_options(book, Constraints(currency="USD")))
    assert usd["h200-sxm/buy/hgx-h200-8gpu"].capex_per_gpu == pytest.approx(48_000_000 / 1400)


def test_ids_are_sorted_and_unique(make_book: BookFactory) -> None:
    modes = tuple(AcquisitionMode)
    ids = [o.id for o in acquisition_options(make_book(), Constraints(allowed_modes=modes))]
    assert ids == sorted(set(ids))


def test_gpus_must_be_catalogue_ids(make_book: BookFactory) -> None:
    # Aliases are resolved once, by solver.resolve (tests/solver/test_resolve.py); one reaching the
    # pricing is a bug, refused rather than priced as nothing.
    with pytest.raises(ValueError, match="H200-SXM"):
        acquisition_options(make_book(), Constraints(allowed_gpus=("H200-SXM",)))


def test_whole_server_quote_vs_card_price_compared_with_the_host(make_book: BookFactory) -> None:
    # Card: $35,000 + $40,000 / 8 host share = $40,000 per GPU all-in. A server quote at
    # $312,000 = $39,000 per GPU all-in is cheaper; its GPU part is (312,000 − 40,000) / 8.
    base = make_book()
    quote = offer("hgx-quote", "purchase_server", "h200-sxm", "312000 USD", server="hgx-h200-8gpu")
    book = make_book(offers=(*base.offers, quote))
    opt = by_id(acquisition_options(book, Constraints()))["h200-sxm/buy/hgx-h200-8gpu"]
    assert opt.offer_id == "hgx-quote"
    assert opt.capex_per_gpu == pytest.approx(34_000)
    # A dearer quote ($328,000 = $41,000 all-in) loses to the card.
    dear = offer("hgx-quote", "purchase_server", "h200-sxm", "328000 USD", server="hgx-h200-8gpu")
    book = make_book(offers=(*base.offers, dear))
    assert (
        by_id(acquisition_options(book, Constraints()))["h200-sxm/buy/hgx-h200-8gpu"].offer_id == "h200-buy"
    )


def test_idle_gpu_power_is_a_fixed_monthly_cost(make_book: BookFactory) -> None:
    book = make_book(site=site(idle_gpu_power_fraction=0.1))
    opt = by_id(acquisition_options(book, Constraints()))["h200-sxm/buy/hgx-h200-8gpu"]
    # Idle: 700 W × 0.1 × PUE 1.5 = 0.105 kW × $0.08 × 730 h = $6.132 a month, on top of support.
    assert opt.idle_power_monthly_per_gpu == pytest.approx(6.132)
    assert opt.fixed_monthly_per_gpu == pytest.approx(350 + 6.132)
    # Busy: the rest of the 75 % average draw, 700 W × 0.65 × 1.5 = 0.6825 kW × $0.08.
    assert opt.busy_hourly_per_gpu == pytest.approx(0.0546)
    # At 100 % busy the GPU's power costs the same as without an idle split: 0.063 × 730.
    assert opt.idle_power_monthly_per_gpu + opt.busy_hourly_per_gpu * 730 == pytest.approx(0.063 * 730)


def test_seed_001_two_h200_draw_1_4_kw_at_full_tdp(make_book: BookFactory) -> None:
    # Seed 001: "GPU 자체의 최대 TDP 합계는 두 장 기준 1.4kW" (700 W each). Our power cap figure is
    # TDP × PUE, so at PUE 1.0 two GPUs come to exactly that.
    book = make_book(site=site(pue=1.0))
    opt = by_id(acquisition_options(book, Constraints()))["h200-sxm/buy/hgx-h200-8gpu"]
    assert 2 * opt.power_kw_per_gpu == pytest.approx(1.4)


def test_providers_regions_and_pins_narrow_the_offers(make_book: BookFactory) -> None:
    base = make_book()
    seoul = offer("h200-od-seoul", "on_demand", "h200-sxm", "9 USD", provider="AWS", region="ap-northeast-2")
    book = make_book(offers=(*base.offers, seoul))
    modes = (AcquisitionMode.ON_DEMAND,)

    def on_demand(**narrowed: object) -> str:
        constraints = Constraints(allowed_gpus=("h200-sxm",), allowed_modes=modes).model_copy(update=narrowed)
        (option,) = acquisition_options(book, constraints)
        return option.offer_id

    assert on_demand() == "h200-od-cheap"  # $3.50, provider "p"
    assert on_demand(include_providers=("aws",)) == "h200-od-seoul"  # case-insensitive
    assert on_demand(include_regions=("AP-NORTHEAST-2",)) == "h200-od-seoul"
    assert on_demand(exclude_regions=("ap-northeast-2",)) == "h200-od-cheap"
    assert on_demand(exclude_providers=("P",)) == "h200-od-seoul"
    # A pin wins over the cheaper offers, and over the provider lists.
    assert on_demand(pinned_offers=("h200-od-dear",), include_providers=("aws",)) == "h200-od-dear"
    # Nothing left: no option at all for that GPU and mode.
    constraints = Constraints(allowed_gpus=("h200-sxm",), allowed_modes=modes, include_providers=("nobody",))
    assert acquisition_options(book, constraints) == []


def test_a_vat_inclusive_budget_buys_its_amount_before_vat(make_book: BookFactory) -> None:
    book = make_book()
    budget = Money(amount=Decimal("1100000"), currency="USD")
    ex_vat = Constraints(capex_budget=budget)
    incl_vat = Constraints(capex_budget=budget, capex_budget_includes_vat=True)
    assert capex_budget_ex_vat(ex_vat, book) == pytest.approx(1_100_000)
    # VAT 10 %: 1,100,000 with VAT is 1,000,000 of purchases.
    assert capex_budget_ex_vat(incl_vat, book) == pytest.approx(1_000_000)
    assert capex_budget_ex_vat(Constraints(), book) is None
    # In won the conversion comes first: 1,540,000,000 KRW ÷ 1,400 = $1.1M, then ÷ 1.1.
    krw = Constraints(
        currency="USD",
        capex_budget=Money(amount=Decimal("1540000000"), currency="KRW"),
        capex_budget_includes_vat=True,
    )
    assert capex_budget_ex_vat(krw, book) == pytest.approx(1_000_000)


def test_at_the_same_rate_the_smaller_rental_instance_wins(make_book: BookFactory) -> None:
    # Two list prices of $3.50 an hour, one rented as whole 8-GPU instances: the 1-GPU offer serves
    # any count at least as cheaply.
    base = make_book()
    eight = offer(
        "h200-od-8x", "on_demand", "h200-sxm", "3.5 USD", gpus_per_instance=8, as_of=dt.date(2026, 8, 1)
    )
    book = make_book(offers=(*base.offers, eight))
    constraints = Constraints(allowed_gpus=("h200-sxm",), allowed_modes=(AcquisitionMode.ON_DEMAND,))
    (option,) = acquisition_options(book, constraints)
    assert option.offer_id == "h200-od-cheap"  # older, but rented one GPU at a time
    assert option.rental_instance_gpus == 1
