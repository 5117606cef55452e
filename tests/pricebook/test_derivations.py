"""Derived numbers in the book agree with the inputs they were derived from (recomputed here).

If someone updates a GPU price, these tests say which derived host costs must follow.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import ColocationBasis, Money, OfferKind, Pricebook

EPOCH_SERVER_OVERHEAD = Decimal(
    "1.64"
)  # epoch-research/training-cost-trends get_server_cost_overhead default
DGX_H100_WATTS = 10_200  # Epoch chip_to_server_power: DGX H100 draws 10.2 kW for 8 x 700 W GPUs
H100_TDP_W = 700
DATACENTER_PCIE = ("a100-pcie-80gb", "h100-pcie", "h100-nvl", "h200-nvl")


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _price(book: Pricebook, offer_id: str) -> Decimal:
    offer = catalog.offer(book, offer_id)
    assert offer.price.currency == "USD"
    return offer.price.amount


@pytest.mark.parametrize(
    ("server_id", "server_offer", "gpu_offer"),
    [
        ("hgx-a100-8gpu", "hgx-a100-8gpu.buy-server.dihuni", "a100-sxm-80gb.buy.hf-catalog"),
        ("hgx-h100-8gpu", "hgx-h100-8gpu.buy-server.freakonomics", "h100-sxm.buy.hf-catalog"),
        ("hgx-b200-8gpu", "hgx-b200-8gpu.buy-server.dgx-deltacomputer", "b200.buy.hf-catalog"),
    ],
)
def test_hgx_host_cost_is_server_price_minus_eight_gpus(
    book: Pricebook, server_id: str, server_offer: str, gpu_offer: str
) -> None:
    host = catalog.server(book, server_id).host_cost
    assert host.currency == "USD"
    assert host.amount == _price(book, server_offer) - 8 * _price(book, gpu_offer)


def test_servers_without_their_own_price_reuse_a_sourced_host(book: Pricebook) -> None:
    h100_host = catalog.server(book, "hgx-h100-8gpu").host_cost
    for server_id in ("hgx-h200-8gpu", "oam-mi300x-8gpu", "oam-mi325x-8gpu", "oam-mi355x-8gpu"):
        assert catalog.server(book, server_id).host_cost == h100_host
    assert catalog.server(book, "hgx-b300-8gpu").host_cost == catalog.server(book, "hgx-b200-8gpu").host_cost


def test_epoch_rule_host_costs_match_the_gpu_price_they_cite(book: Pricebook) -> None:
    checked: set[str] = set()
    for srv in book.servers:
        provenance = srv.field_sources["host_cost"].source
        if not provenance.startswith("DERIVED = (1.64 - 1)"):
            continue
        cited = re.search(r"x \$([\d,]+) GPU price", provenance)
        assert cited is not None, srv.id
        gpu_price = Decimal(cited.group(1).replace(",", ""))
        # The cited price is one of this GPU's purchase offers in the book.
        offered = {o.price.amount for o in catalog.offers_for(book, srv.gpu, OfferKind.PURCHASE_GPU)}
        assert gpu_price in offered, srv.id
        expected = ((EPOCH_SERVER_OVERHEAD - 1) * srv.gpus_per_server * gpu_price).to_integral_value()
        assert srv.host_cost.amount == expected, srv.id
        checked.add(srv.id)
    # Every PCIe box except those for Hopper/Ampere datacenter cards follows this rule.
    pcie_boxes = {
        s.id for s in book.servers if not s.id.startswith(("hgx-", "oam-")) and s.gpu not in DATACENTER_PCIE
    }
    assert checked == pcie_boxes


def test_pcie_boxes_for_datacenter_cards_use_a_share_of_the_hgx_host(book: Pricebook) -> None:
    h100_host = catalog.server(book, "hgx-h100-8gpu").host_cost.amount
    for srv in book.servers:
        if srv.gpu in DATACENTER_PCIE:
            assert srv.host_cost.amount == h100_host * srv.gpus_per_server / 8, srv.id


def test_hgx_host_power_scales_epochs_dgx_h100_split(book: Pricebook) -> None:
    host_share = (DGX_H100_WATTS - 8 * H100_TDP_W) / (8 * H100_TDP_W)
    for srv in book.servers:
        if srv.id.startswith(("hgx-", "oam-")):
            tdp = catalog.gpu(book, srv.gpu).tdp_w
            assert srv.host_power_w == round(host_share * srv.gpus_per_server * tdp), srv.id
    assert catalog.server(book, "hgx-h100-8gpu").host_power_w == DGX_H100_WATTS - 8 * H100_TDP_W


def test_colocation_per_kw_is_the_sourced_midpoint_and_includes_power(book: Pricebook) -> None:
    midpoint_per_kw_month = Decimal(150 + 250) / 2  # $150-250 per kW-month (pricebook_facts B4)
    assert book.site.colocation_price_month == Money(amount=midpoint_per_kw_month, currency="USD")
    assert book.site.colocation_basis is ColocationBasis.PER_KW
    # An all-in per-kW rate: power is not charged again for colocated hardware.
    assert book.site.colocation_includes_power
    assert {"colocation_price_month", "colocation_includes_power"} <= set(book.site.estimated_fields)


def test_residual_points_are_the_sources_range_midpoints(book: Pricebook) -> None:
    for curve in book.site.residual_curves:
        (point,) = curve.points
        # "25-35 % after 36 months" (pricebook_facts B5): the midpoint, with the range kept.
        assert (point.age_months, point.low, point.high) == (36, 0.25, 0.35)
        assert point.fraction == pytest.approx((0.25 + 0.35) / 2)
        assert "points" in curve.estimated_fields  # an unverified secondary source


def test_per_gpu_cloud_prices_are_instance_prices_over_eight(book: Pricebook) -> None:
    instance_per_hour = {
        "h100-sxm.od.aws-p5": Decimal("55.04"),
        "h200-sxm.od.aws-p5en": Decimal("63.296"),
        "b200.od.aws-p6-b200": Decimal("113.9328"),
        "b300.od.aws-p6-b300": Decimal("142.416"),
        "a100-sxm-80gb.od.aws-p4de": Decimal("27.44705"),
        "l40s.od.aws-g6e-48xlarge": Decimal("30.13118"),
        "l4.od.aws-g6-48xlarge": Decimal("13.3504"),
        "rtx-pro-6000-server.od.aws-g7e-48xlarge": Decimal("33.14432"),
        "h100-sxm.od.aws-p5-seoul": Decimal("75.9552"),
        "h200-sxm.od.aws-p5en-seoul": Decimal("87.34848"),
    }
    for offer_id, hourly in instance_per_hour.items():
        assert abs(_price(book, offer_id) - hourly / 8) < Decimal("0.005"), offer_id
