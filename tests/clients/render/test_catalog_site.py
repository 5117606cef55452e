"""The catalogue shows a book's own-site model and a residual credit turned off (issue 30 item 7);
a book at colocation with the credit reads as before."""

from __future__ import annotations

from api.fleetplan.v1 import catalog_pb2, common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.catalog import render_catalog


def _text(entry: catalog_pb2.SiteEntry) -> str:
    return render_catalog(api.ListCatalogResponse(site=entry))


def test_own_site_without_credit_is_shown() -> None:
    entry = catalog_pb2.SiteEntry(
        site_model="own_site",
        own_site_space_price_month=common_pb2.Money(amount="30000", currency_code="KRW"),
        own_site_space_basis="per_rack_unit",
        residual_value_credit=False,
    )
    text = _text(entry)
    assert "own site: power at the tariff × PUE, no colocation fee; 30,000 KRW per rack unit-month" in text
    assert "residual value credit" in text


def test_colocation_with_credit_adds_nothing() -> None:
    default = catalog_pb2.SiteEntry(site_model="colocation", residual_value_credit=True)
    assert _text(default) == _text(catalog_pb2.SiteEntry())


def test_rental_only_gpus_are_named_under_the_gpu_table() -> None:
    gpus = [catalog_pb2.GpuEntry(id="gb200", rental_only=True), catalog_pb2.GpuEntry(id="h100-sxm")]
    text = render_catalog(api.ListCatalogResponse(gpus=gpus))
    assert "rental only (no server model or purchase offer): gb200\n" in text
    assert "rental only" not in render_catalog(api.ListCatalogResponse(gpus=gpus[1:]))
