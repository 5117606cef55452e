"""The pricebook as listed by ListCatalog: one table per kind, each entry with its source and date."""

from __future__ import annotations

from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.tables import Cell, section
from clients.render.values import money, render_provenance

SOURCE_SHOWN_CHARS = 40

GPU_HEADERS = [
    "id",
    "name",
    "memory GB",
    "GB/s",
    "BF16 TF",
    "FP8 TF",
    "TDP W",
    "link",
    "P2P",
    "source",
    "as of",
]


def render_catalog(r: api.ListCatalogResponse, *, markdown: bool = False) -> str:
    out = []
    if r.gpus:
        out += section("GPUs", GPU_HEADERS, [_gpu_row(g) for g in r.gpus], markdown=markdown)
        rented = [g.id for g in r.gpus if g.rental_only]
        out += [f"rental only (no server model or purchase offer): {', '.join(rented)}"] if rented else []
    if r.servers:
        out += _servers(r, markdown=markdown)
    if r.offers:
        out += _offers(r, markdown=markdown)
    if r.api_prices:
        out += _api_prices(r, markdown=markdown)
    if r.models:
        out += _models(r, markdown=markdown)
    if r.HasField("site"):
        out += _site(r.site, markdown=markdown)
    out.append(render_provenance(r.provenance))
    return "\n".join(out)


def _source(source: catalog_pb2.Source) -> str:
    return source.source[:SOURCE_SHOWN_CHARS]


def _gpu_row(g: catalog_pb2.GpuEntry) -> list[Cell]:
    return [
        g.id,
        g.name,
        g.memory_gb,
        g.memory_bandwidth_gbs,
        g.bf16_tflops,
        g.fp8_tflops,
        g.tdp_w,
        g.scale_up_link,
        "yes" if g.p2p_over_pcie else "no",
        _source(g.source),
        g.source.as_of_date,
    ]


def _servers(r: api.ListCatalogResponse, *, markdown: bool) -> list[str]:
    return section(
        "Servers",
        ["id", "GPU", "GPUs", "host cost", "host W", "RU", "source", "as of"],
        [
            [
                s.id,
                s.gpu_id,
                s.gpus_per_server,
                money(s.host_cost),
                s.host_power_w,
                s.rack_units,
                _source(s.source),
                s.source.as_of_date,
            ]
            for s in r.servers
        ],
        markdown=markdown,
    )


def _offers(r: api.ListCatalogResponse, *, markdown: bool) -> list[str]:
    return section(
        "Offers",
        ["id", "kind", "GPU", "provider", "price", "term", "label", "source", "as of"],
        [
            [
                o.id,
                o.kind,
                o.gpu_id,
                o.provider,
                money(o.price),
                o.term_months,
                o.label,
                _source(o.source),
                o.source.as_of_date,
            ]
            for o in r.offers
        ],
        markdown=markdown,
    )


def _api_prices(r: api.ListCatalogResponse, *, markdown: bool) -> list[str]:
    return section(
        "API prices (per 1M tokens)",
        ["id", "provider", "model", "input", "output", "as of"],
        [
            [
                p.id,
                p.provider,
                p.model_id,
                money(p.input_per_million_tokens),
                money(p.output_per_million_tokens),
                p.source.as_of_date,
            ]
            for p in r.api_prices
        ],
        markdown=markdown,
    )


def _models(r: api.ListCatalogResponse, *, markdown: bool) -> list[str]:
    return section(
        "Models",
        ["id", "params B", "active B", "layers", "kv heads", "experts", "attention", "as of"],
        [
            [
                m.id,
                m.params_b,
                m.active_params_b,
                m.layers,
                m.kv_heads,
                m.experts,
                m.attention,
                m.source.as_of_date,
            ]
            for m in r.models
        ],
        markdown=markdown,
    )


def _site_model_rows(s: catalog_pb2.SiteEntry) -> list[list[Cell]]:
    """The own-site model and a residual credit turned off, shown when the book sets them (a book
    that leaves them at colocation and the credit reads as before)."""
    rows: list[list[Cell]] = []
    if s.site_model == "own_site":
        space = (
            f"{money(s.own_site_space_price_month)} {s.own_site_space_basis.replace('_', ' ')}-month"
            if s.HasField("own_site_space_price_month")
            else "no space price"
        )
        rows.append(["site model", f"own site: power at the tariff × PUE, no colocation fee; {space}"])
    if s.site_model and not s.residual_value_credit:
        rows.append(["residual value credit", "none (hardware not resold)"])
    return rows


def _site(s: catalog_pb2.SiteEntry, *, markdown: bool) -> list[str]:
    rows: list[list[Cell]] = [
        ["electricity KRW/kWh", s.electricity_krw_per_kwh],
        ["electricity USD/kWh", s.electricity_usd_per_kwh],
        ["PUE", s.pue],
        ["book depreciation months (straight line)", s.depreciation_months],
        ["support per year", f"{s.support_fraction_per_year:.0%}"],
        [
            f"colocation {s.colocation_basis.replace('_', ' ')}-month",
            money(s.colocation_price_month)
            + (" incl. power" if s.colocation_includes_power else " excl. power"),
        ],
        ["idle GPU power (share of TDP)", f"{s.idle_gpu_power_fraction:.0%}"],
        ["VAT", f"{s.vat_rate:.0%}"],
    ]
    rows += _site_model_rows(s)
    rows += [
        [
            f"market value {p.gpu_class} after {p.age_months} months",
            f"{p.fraction:.0%} (source range {p.low:.0%}–{p.high:.0%})",
        ]
        for p in s.residual_points
    ]
    rows += [
        [f"FX {f.base_currency_code}→{f.quote_currency_code}", f"{f.rate:,.2f} ({f.source.as_of_date})"]
        for f in s.fx_rates
    ]
    return [
        *section("Site assumptions", ["assumption", "value"], rows, markdown=markdown),
        f"source: {s.source.source} ({s.source.as_of_date})",
    ]
