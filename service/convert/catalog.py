"""ListCatalog: the requested kinds in, every pricebook entry of those kinds out, each with its
source and date."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import catalog as pb_catalog
from pricebook.schema import (
    ApiPrice,
    GpuClass,
    GpuSpec,
    ModelArch,
    Offer,
    Pricebook,
    ServerSpec,
    SiteAssumptions,
    Sourced,
)
from service.convert.enums import CATALOG_KIND_FROM_PROTO
from service.convert.money import money_to_proto, set_money
from service.convert.paths import join_path
from service.convert.violations import Collector, raise_if


def catalog_kinds_from_proto(message: api.ListCatalogRequest) -> tuple[str, ...]:
    col = Collector()
    kinds = [
        col.enum(CATALOG_KIND_FROM_PROTO, k, join_path("kinds", i), required=True)
        for i, k in enumerate(message.kinds)
    ]
    raise_if(col.violations)
    return tuple(k for k in kinds if k is not None)


def _source(entry: Sourced) -> catalog_pb2.Source:
    return catalog_pb2.Source(
        source=entry.source,
        as_of_date=entry.as_of.isoformat(),
        estimated_fields=list(entry.estimated_fields),
        field_sources={k: f"{v.source} ({v.as_of.isoformat()})" for k, v in entry.field_sources.items()},
        notes=entry.notes,
    )


def _gpu(g: GpuSpec) -> catalog_pb2.GpuEntry:
    return catalog_pb2.GpuEntry(
        id=g.id,
        name=g.name,
        aliases=list(g.aliases),
        vendor=g.vendor.value,
        architecture=g.architecture.value,
        form_factor=g.form_factor,
        memory_gb=g.memory_gb,
        memory_type=g.memory_type,
        memory_bandwidth_gbs=g.memory_bandwidth_gbs,
        bf16_tflops=g.bf16_tflops,
        fp8_tflops=g.fp8_tflops,
        fp4_tflops=g.fp4_tflops,
        int8_tops=g.int8_tops,
        l2_mb=g.l2_mb,
        tdp_w=g.tdp_w,
        scale_up_link=g.scale_up_link.value,
        scale_up_bandwidth_gbs=g.scale_up_bandwidth_gbs,
        scale_up_domain_size=g.scale_up_domain_size,
        pcie_gen=g.pcie_gen,
        pcie_bandwidth_gbs=g.pcie_bandwidth_gbs,
        p2p_over_pcie=g.p2p_over_pcie,
        mig_max_instances=g.mig_max_instances,
        ecc=g.ecc,
        segment=g.segment.value,
        server_ids=list(g.servers),
        source=_source(g),
        rental_only=g.rental_only,
    )


def _server(s: ServerSpec) -> catalog_pb2.ServerEntry:
    return catalog_pb2.ServerEntry(
        id=s.id,
        name=s.name,
        gpu_id=s.gpu,
        gpus_per_server=s.gpus_per_server,
        scale_up_domain_size=s.scale_up_domain_size,
        host_cost=money_to_proto(s.host_cost),
        host_power_w=s.host_power_w,
        rack_units=s.rack_units,
        nics=[catalog_pb2.NicEntry(kind=n.kind, gbps=n.gbps, per_gpu=n.per_gpu) for n in s.nics],
        p2p_groups=";".join(",".join(str(i) for i in group) for group in s.p2p_groups),
        source=_source(s),
    )


def _offer(o: Offer) -> catalog_pb2.OfferEntry:
    out = catalog_pb2.OfferEntry(
        id=o.id,
        kind=o.kind.value,
        gpu_id=o.gpu,
        server_id=o.server or "",
        provider=o.provider,
        region=o.region,
        price=money_to_proto(o.price),
        term_months=o.term_months,
        label=o.label.value,
        includes_vat=o.includes_vat,
        source=_source(o),
        gpus_per_instance=o.gpus_per_instance,
    )
    set_money(out, "buyout_price", o.buyout_price)
    set_money(out, "financed_price", o.financed_price)
    return out


def _api_price(p: ApiPrice) -> catalog_pb2.ApiPriceEntry:
    return catalog_pb2.ApiPriceEntry(
        id=p.id,
        provider=p.provider,
        model_id=p.model,
        input_per_million_tokens=money_to_proto(p.input_per_mtok),
        output_per_million_tokens=money_to_proto(p.output_per_mtok),
        source=_source(p),
    )


def _model(m: ModelArch) -> catalog_pb2.ModelEntry:
    return catalog_pb2.ModelEntry(
        id=m.id,
        aliases=list(m.aliases),
        family=m.family,
        kind=m.kind,
        params_b=m.params_b,
        active_params_b=m.active_params_b,
        layers=m.layers,
        hidden=m.hidden,
        intermediate=m.intermediate,
        heads=m.heads,
        kv_heads=m.kv_heads,
        head_dim=m.head_dim,
        vocab=m.vocab,
        max_context=m.max_context,
        experts=m.experts,
        experts_per_token=m.experts_per_token,
        attention=m.attention.value,
        kv_lora_rank=m.kv_lora_rank,
        sliding_window=m.sliding_window,
        source=_source(m),
    )


def _site(site: SiteAssumptions) -> catalog_pb2.SiteEntry:
    datacenter = next(c for c in site.residual_curves if c.gpu_class is GpuClass.DATACENTER)
    return catalog_pb2.SiteEntry(
        electricity_krw_per_kwh=site.electricity_krw_per_kwh,
        electricity_usd_per_kwh=site.electricity_usd_per_kwh,
        pue=site.pue,
        depreciation_months=site.depreciation_months,
        residual_value_fraction=datacenter.points[0].fraction,
        residual_value_age_months=datacenter.points[0].age_months,
        residual_points=[
            catalog_pb2.ResidualPointEntry(
                gpu_class=curve.gpu_class.value,
                age_months=p.age_months,
                fraction=p.fraction,
                low=p.low,
                high=p.high,
                source=_source(curve),
            )
            for curve in site.residual_curves
            for p in curve.points
        ],
        colocation_basis=site.colocation_basis.value,
        colocation_includes_power=site.colocation_includes_power,
        idle_gpu_power_fraction=site.idle_gpu_power_fraction,
        site_model=site.site_model.value,
        own_site_space_price_month=money_to_proto(site.own_site_space_price_month),
        own_site_space_basis=site.own_site_space_basis.value,
        residual_value_credit=site.residual_value_credit,
        support_fraction_per_year=site.support_fraction_per_year,
        colocation_price_month=money_to_proto(site.colocation_price_month),
        average_gpu_power_fraction=site.average_gpu_power_fraction,
        vat_rate=site.vat_rate,
        prices_include_vat=site.prices_include_vat,
        fx_rates=[
            catalog_pb2.FxRateEntry(
                base_currency_code=f.base, quote_currency_code=f.quote, rate=f.rate, source=_source(f)
            )
            for f in site.fx_rates
        ],
        source=_source(site),
    )


_ADD_KIND: dict[str, Callable[[Pricebook, api.ListCatalogResponse], None]] = {
    "gpu": lambda book, out: out.gpus.extend(_gpu(g) for g in book.gpus),
    "server": lambda book, out: out.servers.extend(_server(s) for s in book.servers),
    "offer": lambda book, out: out.offers.extend(_offer(o) for o in book.offers),
    "api_price": lambda book, out: out.api_prices.extend(_api_price(p) for p in book.api_prices),
    "model": lambda book, out: out.models.extend(_model(m) for m in book.models),
    "site": lambda book, out: out.site.CopyFrom(_site(book.site)),
}
"""Catalogue kind → adds that kind's entries to the response (one per ``pb_catalog.CATALOG_KINDS``)."""


def catalog_to_proto(book: Pricebook, kinds: Sequence[str]) -> api.ListCatalogResponse:
    """Every entry of the requested kinds (all when empty), each with its source and date."""
    wanted = set(kinds) or set(pb_catalog.CATALOG_KINDS)
    out = api.ListCatalogResponse()
    for kind in pb_catalog.CATALOG_KINDS:
        if kind in wanted:
            _ADD_KIND[kind](book, out)
    return out
