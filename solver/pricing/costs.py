"""Price every way to acquire GPU capacity: ``acquisition_options(book, constraints)``.

One :class:`~solver.pricing.options.AcquisitionOption` per (GPU, mode, server or offer), all
money as floats in the request's currency (converted with the book's dated FX rate, VAT added
or removed as the request says). The optimizer builds its objective on these numbers and
``solver.analysis.tco`` breaks a chosen fleet down with the same numbers, so both always agree.

Cost model, per option (``HOURS_PER_MONTH`` = 8,760 / 12 = 730 h):

BUY (one option per server model that holds the GPU)
    capex_per_gpu        purchase offer price per GPU (a whole-server offer: (price − host) / slots)
    capex_per_server     the server's ``host_cost`` (0 when ``include_host_costs`` is False)
    residual_fraction    share of capex still worth something at the end of the horizon: straight-
                         line depreciation from 100 % down to the site's residual value over
                         ``depreciation_months`` (horizon ≥ depreciation months → the residual value)
    fixed_monthly_per_gpu     support: capex_per_gpu × support_fraction_per_year / 12
                              + idle GPU power: TDP × idle_gpu_power_fraction × PUE × tariff × 730 h
    fixed_monthly_per_server  colocation (rack units × price per RU-month)
                              + host power (host_power_w × PUE × tariff × 730 h, always on)
                              + host support (capex_per_server × support % / 12)
    busy_hourly_per_gpu  GPU power while busy above idle:
                         TDP × (average_gpu_power_fraction − idle_gpu_power_fraction) × PUE × tariff
                         (the site's idle fraction defaults to 0: all GPU power per busy hour).
OWNED (``constraints.owned``): like BUY with capex 0 and no residual (sunk cost); support, power
    and colocation are still paid (support priced on the GPU's current purchase price).
RESERVED   fixed_monthly_per_gpu = price per GPU-hour × 730 h, scaled up when the horizon is not
           a whole number of commitment terms (you pay whole terms: ceil(h / term) × term months).
ON_DEMAND  busy_hourly_per_gpu = price per GPU-hour, paid only for hours used.

Offer choice is deterministic. Purchases: offers in the request currency first (no FX risk), then
the most recent ``as_of``, then the cheapest, then the id. Rentals: the cheapest effective price
(then most recent, then id) — a renter simply takes the cheapest provider.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pricebook.catalog import gpu as catalogue_gpu
from pricebook.catalog import server_holds
from pricebook.money import convert, on_vat_basis
from pricebook.schema import Currency, GpuSpec, Money, Offer, OfferKind, Pricebook, ServerSpec
from solver.domain import AcquisitionMode, Constraints
from solver.pricing.options import AcquisitionOption
from solver.units import HOURS_PER_MONTH, MONTHS_PER_YEAR, WATTS_PER_KW

_PURCHASE_KINDS = (OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER)
_RENTAL_KIND = {AcquisitionMode.RESERVED: OfferKind.RESERVED, AcquisitionMode.ON_DEMAND: OfferKind.ON_DEMAND}


# --------------------------------------------------------------------------------------------
# Money in the request's currency
# --------------------------------------------------------------------------------------------


def to_currency(amount: Money, currency: Currency, book: Pricebook) -> float:
    """``amount`` as a float in ``currency`` (the book's FX rate; pricebook overrides apply first)."""
    return float(convert(amount, currency, book).amount)


def priced(amount: Money, includes_vat: bool, constraints: Constraints, book: Pricebook) -> float:
    """An amount in the request currency (dated FX rate) and on the request's VAT basis."""
    converted = convert(amount, constraints.currency, book)
    return float(on_vat_basis(converted, includes_vat, constraints.include_vat, book.site.vat_rate).amount)


def offer_price(offer: Offer, constraints: Constraints, book: Pricebook) -> float:
    """An offer's price in the request currency, on the request's VAT basis."""
    return priced(offer.price, offer.includes_vat, constraints, book)


def site_price(amount: Money, constraints: Constraints, book: Pricebook) -> float:
    """A site assumption (colocation, host cost) in the request currency and VAT basis."""
    return priced(amount, book.site.prices_include_vat, constraints, book)


def electricity_per_kwh(constraints: Constraints, book: Pricebook) -> float:
    """The site tariff in the request currency (each currency has its own sourced tariff)."""
    site = book.site
    tariff = site.electricity_krw_per_kwh if constraints.currency == "KRW" else site.electricity_usd_per_kwh
    return site_price(Money(amount=Decimal(repr(tariff)), currency=constraints.currency), constraints, book)


def residual_fraction_at(horizon_months: int, book: Pricebook) -> float:
    """Value left after ``horizon_months`` as a share of purchase price (straight-line to the residual)."""
    site = book.site
    used = min(horizon_months, site.depreciation_months) / site.depreciation_months
    return 1.0 - (1.0 - site.residual_value_fraction) * used


def reserved_months_paid(horizon_months: int, term_months: int) -> int:
    """Months a reservation is paid for over the horizon: whole commitment terms."""
    if term_months <= 0:
        return horizon_months
    return math.ceil(horizon_months / term_months) * term_months


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Purchase:
    """The purchase price behind one BUY option, before support/power/colocation."""

    offer_id: str
    capex_per_gpu: float
    host_cost: float


def acquisition_options(book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    """Every priced way to get each allowed GPU in each allowed mode, plus already-owned GPUs.

    Sorted by id. GPUs without any offer for a mode simply have no option in that mode; the
    optimizer's explanations report a GPU type with no options at all. GPUs are named by catalogue
    id (``solver.resolve`` resolved the request's aliases).
    """
    allowed = set(constraints.allowed_gpus)
    _require_catalogue_ids(book, allowed | {o.gpu for o in constraints.owned})
    options: list[AcquisitionOption] = []
    for gpu in book.gpus:
        if allowed and gpu.id not in allowed:
            continue
        for mode in constraints.allowed_modes:
            if mode is AcquisitionMode.BUY:
                options.extend(_buy_options(gpu, book, constraints))
            else:
                rental = _rental_option(gpu, mode, book, constraints)
                if rental is not None:
                    options.append(rental)
    owned_gpus = sorted({o.gpu for o in constraints.owned})
    for gpu_id in owned_gpus:
        options.extend(_owned_options(catalogue_gpu(book, gpu_id), book, constraints))
    return sorted(options, key=lambda o: o.id)


def _require_catalogue_ids(book: Pricebook, gpus: set[str]) -> None:
    """An alias or unknown GPU here is a bug (a request that skipped ``solver.resolve``), not user
    input: raised, rather than silently pricing nothing for it."""
    unknown = sorted(gpus - {g.id for g in book.gpus})
    if unknown:
        msg = f"not catalogue GPU ids: {', '.join(unknown)} (resolve the request first: solver.resolve)"
        raise ValueError(msg)


def servers_for(gpu: GpuSpec, book: Pricebook) -> list[ServerSpec]:
    """Server models that hold ``gpu``, by id (deterministic)."""
    return sorted((s for s in book.servers if server_holds(s, gpu)), key=lambda s: s.id)


def _purchase_preference(offer: Offer, price: float, currency: Currency) -> tuple[bool, int, float, str]:
    return (offer.price.currency != currency, -offer.as_of.toordinal(), price, offer.id)


def _choose_purchase(
    gpu: GpuSpec, server: ServerSpec | None, book: Pricebook, constraints: Constraints
) -> _Purchase | None:
    """The purchase behind a BUY option in ``server`` (None = a card with no server model)."""
    host = 0.0
    if server is not None:
        # Host cost carries no VAT flag of its own: it is on the site's VAT basis.
        host = site_price(server.host_cost, constraints, book)
    scored: list[tuple[tuple[bool, int, float, str], _Purchase]] = []
    for offer in book.offers:
        if offer.gpu != gpu.id or offer.kind not in _PURCHASE_KINDS:
            continue
        price = offer_price(offer, constraints, book)
        if offer.kind is OfferKind.PURCHASE_SERVER:
            if server is None or offer.server != server.id:
                continue
            # A whole-server quote includes the GPUs: split it into host and per-GPU parts so
            # that "GPUs only" pricing and partial servers stay meaningful.
            per_gpu = max(0.0, price - host) / server.gpus_per_server
            scored.append(
                (
                    _purchase_preference(offer, price / server.gpus_per_server, constraints.currency),
                    _Purchase(offer.id, per_gpu, min(host, price)),
                )
            )
        else:
            # Compare like with like: a card's price plus its share of the host it needs.
            per_gpu_all_in = price + (host / server.gpus_per_server if server is not None else 0.0)
            scored.append(
                (
                    _purchase_preference(offer, per_gpu_all_in, constraints.currency),
                    _Purchase(offer.id, price, host),
                )
            )
    if not scored:
        return None
    return min(scored, key=lambda item: item[0])[1]


def _buy_options(gpu: GpuSpec, book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    options: list[AcquisitionOption] = []
    servers: Sequence[ServerSpec | None] = servers_for(gpu, book) or [None]
    for server in servers:
        purchase = _choose_purchase(gpu, server, book, constraints)
        if purchase is None:
            continue
        options.append(_owned_hardware_option(gpu, server, purchase, book, constraints, owned=False))
    return options


def _owned_options(gpu: GpuSpec, book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    """GPUs already installed: capex sunk, running costs still paid. The request does not say in
    which server model they sit, so there is one option per model that holds the GPU and the
    optimizer picks (a fixed choice made owning GPUs dearer than buying them)."""
    options = []
    servers: Sequence[ServerSpec | None] = servers_for(gpu, book) or [None]
    for server in servers:
        purchase = _choose_purchase(gpu, server, book, constraints)
        if purchase is None:
            # No current price to base support on: owned GPUs then cost only power and colocation.
            purchase = _Purchase(offer_id="owned", capex_per_gpu=0.0, host_cost=0.0)
        options.append(_owned_hardware_option(gpu, server, purchase, book, constraints, owned=True))
    return options


def _owned_hardware_option(
    gpu: GpuSpec,
    server: ServerSpec | None,
    purchase: _Purchase,
    book: Pricebook,
    constraints: Constraints,
    *,
    owned: bool,
) -> AcquisitionOption:
    site = book.site
    tariff = electricity_per_kwh(constraints, book)
    host_cost = purchase.host_cost if constraints.include_host_costs and not owned else 0.0
    # Support is priced on what the hardware costs today, whether or not it is already paid for.
    support_host = purchase.host_cost if constraints.include_host_costs else 0.0
    support_per_month = site.support_fraction_per_year / MONTHS_PER_YEAR
    if server is not None:
        gpus_per_server = server.gpus_per_server
        domain = server.scale_up_domain_size
        # Bought SXM/OAM GPUs come as whole baseboards; owned ones are installed as they are, so a
        # partial board of owned GPUs is still hardware that serves.
        must_be_full = gpu.form_factor in ("sxm", "oam") and not owned
        rack_units = float(server.rack_units)
        host_kw = server.host_power_w * site.pue / WATTS_PER_KW
        colocation = rack_units * site_price(site.colocation_per_rack_unit_month, constraints, book)
    else:
        # A card going into a host the buyer already has: no host cost, rack or host power.
        gpus_per_server = max(1, gpu.scale_up_domain_size)
        domain = gpu.scale_up_domain_size
        must_be_full = False
        rack_units = 0.0
        host_kw = 0.0
        colocation = 0.0
    if not constraints.include_host_costs:
        # GPUs-only pricing (cards into hosts already running): the host's power and rack rent
        # are not this purchase's cost. The rack units still count against a rack cap.
        host_kw = 0.0
        colocation = 0.0
    host_power_monthly = host_kw * tariff * HOURS_PER_MONTH
    # A held GPU draws its idle power every hour, and the rest of its average draw when busy.
    idle_fraction = min(site.idle_gpu_power_fraction, site.average_gpu_power_fraction)
    idle_power_monthly = gpu.tdp_w * idle_fraction * site.pue / WATTS_PER_KW * tariff * HOURS_PER_MONTH
    busy_gpu_kw = gpu.tdp_w * (site.average_gpu_power_fraction - idle_fraction) * site.pue / WATTS_PER_KW
    place = server.id if server is not None else purchase.offer_id
    return AcquisitionOption(
        id=f"{gpu.id}/{'owned' if owned else AcquisitionMode.BUY.value}/{place}",
        gpu=gpu.id,
        mode=AcquisitionMode.BUY,
        offer_id=purchase.offer_id,
        server_id=server.id if server is not None else None,
        gpus_per_server=gpus_per_server,
        server_must_be_full=must_be_full,
        scale_up_domain_size=max(1, min(domain, gpus_per_server)),
        capex_per_gpu=0.0 if owned else purchase.capex_per_gpu,
        capex_per_server=host_cost,
        residual_fraction=0.0 if owned else residual_fraction_at(constraints.horizon_months, book),
        fixed_monthly_per_gpu=purchase.capex_per_gpu * support_per_month + idle_power_monthly,
        fixed_monthly_per_server=colocation + host_power_monthly + support_host * support_per_month,
        busy_hourly_per_gpu=busy_gpu_kw * tariff,
        power_kw_per_gpu=gpu.tdp_w * site.pue / WATTS_PER_KW,
        power_kw_per_server=host_kw,
        rack_units_per_server=rack_units,
        owned=owned,
        colocation_monthly_per_server=colocation,
        host_power_monthly_per_server=host_power_monthly,
        idle_power_monthly_per_gpu=idle_power_monthly,
    )


def _rental_option(
    gpu: GpuSpec, mode: AcquisitionMode, book: Pricebook, constraints: Constraints
) -> AcquisitionOption | None:
    kind = _RENTAL_KIND[mode]
    horizon = constraints.horizon_months
    scored: list[tuple[tuple[float, int, str], Offer, float]] = []
    for offer in _offers(book, gpu.id, kind):
        hourly = offer_price(offer, constraints, book)
        if mode is AcquisitionMode.RESERVED:
            monthly = hourly * HOURS_PER_MONTH * reserved_months_paid(horizon, offer.term_months) / horizon
            scored.append(((monthly, -offer.as_of.toordinal(), offer.id), offer, monthly))
        else:
            scored.append(((hourly, -offer.as_of.toordinal(), offer.id), offer, hourly))
    if not scored:
        return None
    _, offer, cost = min(scored, key=lambda item: item[0])
    domain = max(1, gpu.scale_up_domain_size)
    return AcquisitionOption(
        id=f"{gpu.id}/{mode.value}/{offer.id}",
        gpu=gpu.id,
        mode=mode,
        offer_id=offer.id,
        server_id=None,
        gpus_per_server=domain,
        server_must_be_full=False,
        scale_up_domain_size=domain,
        capex_per_gpu=0.0,
        capex_per_server=0.0,
        residual_fraction=0.0,
        fixed_monthly_per_gpu=cost if mode is AcquisitionMode.RESERVED else 0.0,
        fixed_monthly_per_server=0.0,
        busy_hourly_per_gpu=cost if mode is AcquisitionMode.ON_DEMAND else 0.0,
        power_kw_per_gpu=0.0,
        power_kw_per_server=0.0,
        rack_units_per_server=0.0,
    )


def _offers(book: Pricebook, gpu_id: str, kind: OfferKind) -> Iterable[Offer]:
    return (o for o in book.offers if o.gpu == gpu_id and o.kind is kind)
