"""Every pricebook number a plan used, with its source, date and label: the offers and servers of
the plan, its alternatives and rent-only fleet, the API prices of the break-even section, the site
assumptions (tariff, PUE, depreciation, residual, support, colocation, VAT; the site model, the
own-site space price and the residual credit), FX rates, the models,
and the performance model's calibration and uncertainty band."""

from __future__ import annotations

from collections.abc import Iterable

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import Money, Sourced
from report.data import Assumption, AssumptionKind
from solver.perf.calibration import load_calibration
from solver.planner.results import PlanFleetLine, PlanResult
from solver.pricing import costs
from solver.resolve import ResolvedRequest

SITE_FIELDS = (
    "electricity_krw_per_kwh",
    "electricity_usd_per_kwh",
    "pue",
    "depreciation_months",
    "support_fraction_per_year",
    "colocation_price_month",
    "colocation_basis",
    "colocation_includes_power",
    "average_gpu_power_fraction",
    "idle_gpu_power_fraction",
    "vat_rate",
    "prices_include_vat",
)
"""The site assumptions a plan's economics read (``solver.pricing.costs``)."""


def _money(value: Money) -> str:
    return f"{value.amount} {value.currency}"


def _row(
    kind: AssumptionKind, key: str, value: str, entry: Sourced, *, label: str = "", field: str = ""
) -> Assumption:
    source = entry.field_sources.get(field) if field else None
    return Assumption(
        kind=kind,
        key=key,
        value=value,
        source=source.source if source is not None else entry.source,
        as_of=source.as_of if source is not None else entry.as_of,
        label=label or ("estimate" if field and field in entry.estimated_fields else ""),
    )


def _hardware(resolved: ResolvedRequest, lines: Iterable[PlanFleetLine]) -> list[Assumption]:
    book = resolved.book
    offers: dict[str, Assumption] = {}
    servers: dict[str, Assumption] = {}
    for line in lines:
        if line.offer_id and line.offer_id not in offers:
            try:
                offer = catalog.offer(book, line.offer_id)
            except UnknownEntryError:
                continue  # owned GPUs: no offer
            unit = (
                "per GPU-hour" if offer.kind.value in ("reserved", "on_demand") else f"({offer.kind.value})"
            )
            offers[offer.id] = _row(
                AssumptionKind.OFFER,
                offer.id,
                f"{_money(offer.price)} {unit}" + (" incl. VAT" if offer.includes_vat else ""),
                offer,
                label=offer.label.value,
            )
        if (
            resolved.request.constraints.include_host_costs
            and line.server_id
            and line.server_id not in servers
        ):
            try:
                server = catalog.server(book, line.server_id)
            except UnknownEntryError:
                continue
            servers[server.id] = _row(
                AssumptionKind.SERVER,
                server.id,
                f"host {_money(server.host_cost)}, {server.host_power_w:g} W, {server.rack_units} RU",
                server,
                field="host_cost",
            )
    return [*offers.values(), *servers.values()]


def _api_prices(result: PlanResult, resolved: ResolvedRequest) -> list[Assumption]:
    ids = dict.fromkeys(a.api_price_id for a in result.break_even.api if a.api_price_id)
    by_id = {p.id: p for p in resolved.book.api_prices}
    return [
        _row(
            AssumptionKind.API_PRICE,
            price.id,
            f"in {_money(price.input_per_mtok)} / out {_money(price.output_per_mtok)} per 1M tokens",
            price,
        )
        for price in (by_id[i] for i in ids if i in by_id)
    ]


def _site(resolved: ResolvedRequest) -> list[Assumption]:
    site = resolved.book.site
    rows = []
    for name in SITE_FIELDS:
        value = getattr(site, name)
        text = (
            _money(value)
            if isinstance(value, Money)
            else f"{value:g}"
            if isinstance(value, float)
            else str(value)
        )
        rows.append(_row(AssumptionKind.SITE, name, text, site, field=name))
    rows += [
        _row(
            AssumptionKind.SITE,
            f"residual_curve.{curve.gpu_class.value}",
            ", ".join(
                f"{p.fraction:g} at {p.age_months} months ({p.low:g}–{p.high:g})" for p in curve.points
            ),
            curve,
        )
        for curve in site.residual_curves
    ]
    rows += _site_model(resolved)
    rows += [
        _row(AssumptionKind.FX, f"{fx.base}/{fx.quote}", f"1 {fx.base} = {fx.rate:g} {fx.quote}", fx)
        for fx in site.fx_rates
    ]
    return rows


def _site_model(resolved: ResolvedRequest) -> list[Assumption]:
    """Where bought servers run, what the buyer's own space costs and whether the residual value
    is credited: the request's choice where it makes one (its source says so), else the book's."""
    constraints, site = resolved.request.constraints, resolved.book.site
    space = site.own_site_space_price_month
    settings = (
        ("site_model", costs.site_model(constraints, resolved.book).value, constraints.site_model),
        ("own_site_space_price_month", _money(space) if space is not None else "0 (none given)", None),
        ("own_site_space_basis", site.own_site_space_basis.value, None),
        (
            "residual_value_credit",
            str(costs.residual_value_credit(constraints, resolved.book)),
            constraints.residual_value_credit,
        ),
    )
    rows = []
    for name, value, requested in settings:
        row = _row(AssumptionKind.SITE, name, value, site, field=name)
        if requested is not None:
            row = row.model_copy(update={"source": f"the request (constraints.{name})", "as_of": None})
        rows.append(row)
    return rows


def _models(resolved: ResolvedRequest) -> list[Assumption]:
    request = resolved.request
    refs = [w.model for w in request.inference] + [t.model for t in request.training]
    ids = dict.fromkeys(ref.model_id for ref in refs if ref.model_id is not None)
    rows = []
    for model_id in ids:
        try:
            arch = catalog.model(resolved.book, model_id)
        except UnknownEntryError:
            continue
        rows.append(
            _row(
                AssumptionKind.MODEL,
                arch.id,
                f"{arch.params_b:g}B params ({arch.active_params_b:g}B active)",
                arch,
            )
        )
    return rows


def _performance(result: PlanResult) -> Assumption:
    calibration = load_calibration()
    band = result.uncertainty
    return Assumption(
        kind=AssumptionKind.PERFORMANCE,
        key="throughput band",
        value=f"×{band.low_factor:.2f} – ×{band.high_factor:.2f}",
        source=f"solver/perf/calibration.json (fitted {calibration.fit_date}); {band.note}",
        as_of=None,
        label="",
    )


def assumptions(
    result: PlanResult, resolved: ResolvedRequest, fleet_lines: Iterable[PlanFleetLine]
) -> tuple[Assumption, ...]:
    return (
        *_hardware(resolved, fleet_lines),
        *_api_prices(result, resolved),
        *_site(resolved),
        *_models(resolved),
        _performance(result),
    )
