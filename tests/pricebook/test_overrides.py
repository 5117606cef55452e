"""Per-request overrides: new book, new hash, every change described, bad overrides named by path."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pricebook import catalog
from pricebook.loader import content_hash, load_default
from pricebook.money import convert
from pricebook.overrides import OfferOverride, PricebookOverrides, apply_overrides
from pricebook.schema import Money, OfferKind, Pricebook
from solver.errors import InvalidRequest

TODAY = dt.date(2026, 12, 2)


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _money(amount: str, currency: str = "USD") -> Money:
    return Money.model_validate(f"{amount} {currency}")


def _violations(book: Pricebook, overrides: PricebookOverrides) -> dict[str, str]:
    with pytest.raises(InvalidRequest) as caught:
        apply_overrides(book, overrides, today=TODAY)
    return {v.field: v.reason for v in caught.value.violations}


def test_no_overrides_return_the_same_book(book: Pricebook) -> None:
    same, applied = apply_overrides(book, PricebookOverrides())
    assert same is book
    assert applied == ()


def test_replacing_an_offer_price(book: Pricebook) -> None:
    target = catalog.offer(book, "h200-sxm.buy.hf-catalog")
    overrides = PricebookOverrides(offers=(OfferOverride(offer_id=target.id, price=_money("29500")),))
    changed, applied = apply_overrides(book, overrides, today=TODAY)
    replaced = catalog.offer(changed, target.id)
    assert replaced.price == _money("29500")
    assert (replaced.kind, replaced.gpu, replaced.label.value) == (target.kind, target.gpu, "quote")
    assert replaced.as_of == TODAY
    assert changed.content_hash not in ("", book.content_hash)
    assert changed.content_hash == content_hash(changed)
    assert applied == (f"offer {target.id}: price 32000 USD → 29500 USD (quote)",)
    # The original book is untouched (frozen): other requests still see the catalogue price.
    assert catalog.offer(book, target.id).price == _money("32000")


def test_the_same_overrides_give_the_same_hash(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        offers=(
            OfferOverride(offer_id="l4.od.runpod-secure", price=_money("0.40"), as_of=dt.date(2026, 11, 1)),
        ),
        site={"pue": 1.25},
    )
    first, _ = apply_overrides(book, overrides, today=TODAY)
    second, _ = apply_overrides(book, overrides, today=TODAY)
    assert first.content_hash == second.content_hash
    different, _ = apply_overrides(book, overrides.model_copy(update={"site": {"pue": 1.26}}), today=TODAY)
    assert different.content_hash != first.content_hash


def test_adding_a_vendor_quote_by_gpu_alias(book: Pricebook) -> None:
    quote = OfferOverride(
        offer_id="h200-sxm.buy.vendor-a-2026-12",
        kind=OfferKind.PURCHASE_GPU,
        gpu="H200 SXM 141GB",
        provider="Vendor A",
        price=_money("46,000,000", "KRW"),
    )
    changed, applied = apply_overrides(book, PricebookOverrides(offers=(quote,)), today=TODAY)
    added = catalog.offer(changed, quote.offer_id)
    assert (added.gpu, added.provider, added.price.amount, added.price.currency) == (
        "h200-sxm",
        "Vendor A",
        Decimal(46_000_000),
        "KRW",
    )
    assert added in catalog.offers_for(changed, "h200-sxm", OfferKind.PURCHASE_GPU)
    assert len(changed.offers) == len(book.offers) + 1
    assert "Vendor A" in applied[0] and "46000000 KRW" in applied[0]


def test_adding_a_server_quote_and_a_reserved_quote(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        offers=(
            OfferOverride(
                offer_id="hgx-h200-8gpu.buy-server.vendor-b",
                kind=OfferKind.PURCHASE_SERVER,
                gpu="h200-sxm",
                server="hgx-h200-8gpu",
                price=_money("330000"),
            ),
            OfferOverride(
                offer_id="h200-sxm.rsv24.vendor-c",
                kind=OfferKind.RESERVED,
                gpu="h200-sxm",
                price=_money("2.10"),
                term_months=24,
            ),
        )
    )
    changed, applied = apply_overrides(book, overrides, today=TODAY)
    assert catalog.offer(changed, "hgx-h200-8gpu.buy-server.vendor-b").server == "hgx-h200-8gpu"
    assert catalog.offer(changed, "h200-sxm.rsv24.vendor-c").term_months == 24
    assert len(applied) == 2


def test_site_overrides_are_validated_and_sourced(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        site={"pue": 1.3, "colocation_price_month": 300, "prices_include_vat": True}
    )
    changed, applied = apply_overrides(book, overrides, today=TODAY)
    assert changed.site.pue == pytest.approx(1.3)
    # A bare number keeps the field's currency.
    assert changed.site.colocation_price_month == _money("300")
    assert changed.site.prices_include_vat is True
    assert changed.site.field_sources["pue"].source == "request override"
    assert "colocation_price_month" not in changed.site.estimated_fields
    assert "site.pue: 1.54 → 1.3" in applied


def test_fx_override_is_used_by_conversions(book: Pricebook) -> None:
    changed, applied = apply_overrides(book, PricebookOverrides(fx_usd_krw=1350.0), today=TODAY)
    converted = convert(_money("1", "USD"), "KRW", changed)
    assert converted.amount == Decimal(1350)
    assert converted.rate_as_of == TODAY
    assert applied == ("FX USD→KRW: 1444.44 (2025-12-31) → 1350 (request override, 2026-12-02)",)
    assert len([r for r in changed.site.fx_rates if {r.base, r.quote} == {"USD", "KRW"}]) == 1


def test_unknown_offer_id_without_kind_and_gpu(book: Pricebook) -> None:
    bad = PricebookOverrides(offers=(OfferOverride(offer_id="h200-sxm.buy.nope", price=_money("1")),))
    violations = _violations(book, bad)
    assert list(violations) == ["overrides.offers[0].offer_id"]
    assert "unknown offer id" in violations["overrides.offers[0].offer_id"]
    assert "h200-sxm.buy.hf-catalog" in violations["overrides.offers[0].offer_id"]  # nearby ids offered


def test_every_bad_override_is_reported_at_once(book: Pricebook) -> None:
    bad = PricebookOverrides(
        offers=(
            OfferOverride(offer_id="l4.od.runpod-secure", price=_money("0.5")),  # fine
            OfferOverride(offer_id="x.od.new", kind=OfferKind.ON_DEMAND, gpu="H900", price=_money("1")),
            OfferOverride(offer_id="y.od.new", kind=OfferKind.ON_DEMAND, gpu="l4", price=_money("-1")),
            OfferOverride(offer_id="Bad Id!", kind=OfferKind.ON_DEMAND, gpu="l4", price=_money("1")),
            OfferOverride(offer_id="z.rsv.new", kind=OfferKind.RESERVED, gpu="l4", price=_money("1")),
            OfferOverride(offer_id="l4.od.runpod-secure", gpu="h100-sxm", price=_money("1")),
        ),
        site={"pue": 0.5, "warp_factor": 9, "fx_rates": 1},
    )
    violations = _violations(book, bad)
    assert set(violations) == {
        "overrides.offers[1].gpu",
        "overrides.offers[2].price",
        "overrides.offers[3].offer_id",
        "overrides.offers[4].term_months",
        "overrides.offers[5].gpu",
        "overrides.site.pue",
        "overrides.site.warp_factor",
        "overrides.site.fx_rates",
    }
    assert "h200-sxm" in violations["overrides.offers[1].gpu"]  # close-match suggestion for H900
    assert "fx_usd_krw" in violations["overrides.site.fx_rates"]


def test_a_server_quote_must_match_the_servers_gpu(book: Pricebook) -> None:
    bad = PricebookOverrides(
        offers=(
            OfferOverride(
                offer_id="hgx-h100-8gpu.buy-server.wrong",
                kind=OfferKind.PURCHASE_SERVER,
                gpu="h200-sxm",
                server="hgx-h100-8gpu",
                price=_money("300000"),
            ),
        )
    )
    violations = _violations(book, bad)
    assert "holds 'h100-sxm'" in violations["overrides.offers[0].server"]


def test_a_purchase_quote_for_a_rental_only_gpu_is_refused_naming_the_field(book: Pricebook) -> None:
    """GB200 is rented as whole NVL72 racks only (no server model to buy it in): a vendor's purchase
    quote for it is INVALID_ARGUMENT on the offer's kind, a rental quote is taken."""
    purchase = OfferOverride(
        offer_id="gb200.buy.vendor-a",
        kind=OfferKind.PURCHASE_GPU,
        gpu="GB200 NVL72",
        provider="Vendor A",
        price=_money("60000"),
    )
    violations = _violations(book, PricebookOverrides(offers=(purchase,)))
    assert list(violations) == ["overrides.offers[0].kind"]
    assert "rental_only" in violations["overrides.offers[0].kind"]
    rental = purchase.model_copy(update={"offer_id": "gb200.od.vendor-a", "kind": OfferKind.ON_DEMAND})
    changed, _ = apply_overrides(
        book, PricebookOverrides(offers=(rental.model_copy(update={"price": _money("9")}),)), today=TODAY
    )
    assert catalog.offer(changed, "gb200.od.vendor-a").gpu == "gb200"
