"""Price every way to acquire GPU capacity: ``acquisition_options(book, constraints)``.

One :class:`~solver.pricing.options.AcquisitionOption` per (GPU, mode, server or offer), all
money as floats in the request's currency (converted with the book's dated FX rate) and ex-VAT
(VAT is a line of its own: ``solver.analysis.tco``). The optimizer builds its objective on these
numbers and ``solver.analysis.tco`` breaks a chosen fleet down with the same numbers, so both
always agree.

Cost model, per option (``HOURS_PER_MONTH`` = 8,760 / 12 = 730 h):

BUY (one option per server model that holds the GPU)
    capex_per_gpu        purchase offer price per GPU (a whole-server offer: (price − host) / slots)
    capex_per_server     the server's ``host_cost`` (0 when ``include_host_costs`` is False)
    residual_fraction    market value left at the end of the horizon: the GPU class's residual curve
                         (``pricebook.schema.ResidualCurve``) at the horizon's age, e.g. 0.30^(36/36)
                         = 30 % after 36 months; applied to GPUs and host alike
    fixed_monthly_per_gpu     support: capex_per_gpu × support_fraction_per_year / 12
                              + colocation of the GPU (per-kW basis: TDP / 1000 × price per kW-month)
                              + idle GPU power: TDP × idle_gpu_power_fraction × PUE × tariff × 730 h
    fixed_monthly_per_server  colocation of the host (per kW: host_power_w / 1000 × price; per rack
                              unit: rack units × price) + host power (host_power_w × PUE × tariff
                              × 730 h) + host support (capex_per_server × support % / 12)
    busy_hourly_per_gpu  GPU power while busy above idle:
                         TDP × (average_gpu_power_fraction − idle_gpu_power_fraction) × PUE × tariff
    network_capex_per_server  scale-out fabric of a server with one NIC per GPU (HGX/OAM), paid once the
                         plan buys 2 or more of them (``AcquisitionOption.network_capex``): GPU slots ×
                         (switch port + optics per GPU) + NICs × NIC price unless the host price includes
                         them (``site.network_fabrics`` by the NIC's kind; ``include_network_costs``)
    installation_capex   the request's ``installation_fraction`` × (GPU price, host price) + its
                         ``installation_per_server`` per server (no market value at the horizon)
    Power is never charged twice: hardware in a colocation whose price includes power
    (``colocation_includes_power``) has no power cost of its own; hardware on the buyer's own site
    (no server model, or ``include_host_costs`` False: hosts already running) pays no colocation,
    and its GPUs pay the tariff. ``site_model`` own_site (the request's, else the book's): bought
    servers pay no colocation fee, GPU and host power at the tariff × PUE, and the site's
    ``own_site_space_price_month`` per rack unit or per kW (0 when none is given).
    ``residual_value_credit`` false (the request's, else the book's): residual_fraction 0.
OWNED (``constraints.owned``): like BUY with capex 0 and no residual (sunk cost); support, power
    and colocation are still paid (support priced on the GPU's current purchase price).
RESERVED   fixed_monthly_per_gpu = price per GPU-hour × 730 h, scaled up when the horizon is not
           a whole number of commitment terms (you pay whole terms: ceil(h / term) × term months).
ON_DEMAND  busy_hourly_per_gpu = price per GPU-hour, paid only for hours used.
STORAGE    the request's ``storage``: TB × price per TB, once (``storage_capex``) or every month
           (``monthly``: ``storage_monthly``); it does not depend on the fleet (a constant of the
           MIP, in its capex or opex cap and objective).
SOFTWARE   each of the request's ``software_licences``: price per GPU-year ÷ 12 every month per held
           GPU (bought, owned, reserved), ÷ 8,760 per on-demand GPU-hour; NVIDIA AI Enterprise on a
           GPU whose purchase offer includes it for N months is paid for the months beyond N only
           (averaged over the horizon: × max(0, H − N) / H).
Rentals come in whole instances of the offer's ``gpus_per_instance`` GPUs.

Offer choice (``eligible_offers``), per GPU and mode: pinned offers (``constraints.pinned_offers``)
if any is pinned for that GPU and mode; else the offers of allowed providers and regions; under the
default ``most_reliable`` policy only those with the most reliable label among them (quote > list >
street > derived > estimate). Rentals: every eligible offer is an option (its own instance size,
term and rate) unless another is at most as dear per GPU and rents instances whose size divides its
own (``undominated_rentals``). Purchases: per server model the cheapest (per GPU with its share of
the host), then the most recent, then the id. ``offer_options`` prices a named offer whatever the
policy (a fleet line naming it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from pricebook.catalog import gpu as catalogue_gpu
from pricebook.catalog import network_fabric, network_parts, plannable_gpus, residual_curve, server_holds
from pricebook.money import convert, on_vat_basis
from pricebook.schema import (
    ColocationBasis,
    Currency,
    GpuSpec,
    Money,
    Offer,
    OfferKind,
    Pricebook,
    PriceLabel,
    ServerSpec,
    SiteModel,
    label_rank,
)
from solver.domain import AcquisitionMode, Constraints, OfferPolicy
from solver.pricing.options import AcquisitionOption
from solver.units import HOURS_PER_MONTH, MONTHS_PER_YEAR, WATTS_PER_KW

_PURCHASE_KINDS = (OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER)
_RENTAL_KIND = {AcquisitionMode.RESERVED: OfferKind.RESERVED, AcquisitionMode.ON_DEMAND: OfferKind.ON_DEMAND}


def offer_mode(offer: Offer) -> AcquisitionMode:
    """How GPUs of ``offer`` are acquired: bought, reserved or rented on demand."""
    if offer.kind in _PURCHASE_KINDS or offer.kind is OfferKind.LEASE:
        return AcquisitionMode.BUY
    return next(m for m, kind in _RENTAL_KIND.items() if kind is offer.kind)


# --------------------------------------------------------------------------------------------
# Money in the request's currency
# --------------------------------------------------------------------------------------------


def to_currency(amount: Money, currency: Currency, book: Pricebook) -> float:
    """``amount`` as a float in ``currency`` (the book's FX rate; pricebook overrides apply first)."""
    return float(convert(amount, currency, book).amount)


def priced(amount: Money, includes_vat: bool, constraints: Constraints, book: Pricebook) -> float:
    """An amount in the request currency (dated FX rate), ex-VAT (a VAT-inclusive price has its VAT
    removed: the answer adds VAT as a line of its own)."""
    converted = convert(amount, constraints.currency, book)
    return float(on_vat_basis(converted, includes_vat, False, book.site.vat_rate).amount)


def offer_price(offer: Offer, constraints: Constraints, book: Pricebook) -> float:
    """An offer's price in the request currency, ex-VAT."""
    return priced(offer.price, offer.includes_vat, constraints, book)


def site_price(amount: Money, constraints: Constraints, book: Pricebook) -> float:
    """A site assumption (colocation, host cost) in the request currency, ex-VAT."""
    return priced(amount, book.site.prices_include_vat, constraints, book)


def capex_budget_ex_vat(constraints: Constraints, book: Pricebook) -> float | None:
    """The capex budget on the planner's ex-VAT basis: a VAT-inclusive budget
    (``capex_budget_includes_vat``) buys 1 / (1 + VAT rate) of its amount before VAT."""
    if constraints.capex_budget is None:
        return None
    budget = to_currency(constraints.capex_budget, constraints.currency, book)
    if constraints.capex_budget_includes_vat:
        budget /= 1.0 + book.site.vat_rate
    return budget


def site_model(constraints: Constraints, book: Pricebook) -> SiteModel:
    """Where bought servers run: the request's choice, else the pricebook's."""
    return constraints.site_model or book.site.site_model


def residual_value_credit(constraints: Constraints, book: Pricebook) -> bool:
    """Whether the TCO credits the hardware's market value at the horizon: the request's choice,
    else the pricebook's (false for a buyer who cannot sell it: public sector 불용 처리)."""
    if constraints.residual_value_credit is None:
        return book.site.residual_value_credit
    return constraints.residual_value_credit


def _rack_price(constraints: Constraints, book: Pricebook) -> tuple[float, ColocationBasis, bool]:
    """What a bought server's rack costs a month, per what, and whether that includes its power:
    the colocation rate, or on the buyer's own site its space price (0 when none is given) and
    never the power (paid at the tariff)."""
    site = book.site
    if site_model(constraints, book) is SiteModel.COLOCATION:
        price = site_price(site.colocation_price_month, constraints, book)
        return price, site.colocation_basis, site.colocation_includes_power
    space = site.own_site_space_price_month
    price = site_price(space, constraints, book) if space is not None else 0.0
    return price, site.own_site_space_basis, False


def electricity_per_kwh(constraints: Constraints, book: Pricebook) -> float:
    """The site tariff in the request currency (each currency has its own sourced tariff)."""
    site = book.site
    tariff = site.electricity_krw_per_kwh if constraints.currency == "KRW" else site.electricity_usd_per_kwh
    return site_price(Money(amount=Decimal(repr(tariff)), currency=constraints.currency), constraints, book)


def network_capex_per_server(server: ServerSpec, constraints: Constraints, book: Pricebook) -> float:
    """The scale-out fabric of one server of ``server`` (module docstring; 0 without a scale-out NIC,
    without a priced fabric of its kind, or when the request leaves networking out)."""
    fabric = network_fabric(book.site, server)
    if fabric is None or not (constraints.include_network_costs and constraints.include_host_costs):
        return 0.0
    nics = server.scale_out_nics
    assert nics is not None  # a fabric was found for it
    per_gpu = 0.0
    for part in network_parts(fabric, server):
        count = nics.per_gpu if part is fabric.nic else 1.0
        per_gpu += count * site_price(part.price, constraints, book)
    return server.gpus_per_server * per_gpu


def software_per_gpu_month(constraints: Constraints, book: Pricebook, included_months: int = 0) -> float:
    """Software licences per GPU and month held (module docstring); ``included_months`` of NVIDIA
    AI Enterprise come with the GPU's purchase offer (``Offer.ai_enterprise_included_months``)."""
    months = constraints.horizon_months
    total = 0.0
    for licence in constraints.software_licences:
        monthly = to_currency(licence.price_per_gpu_year, constraints.currency, book) / MONTHS_PER_YEAR
        if licence.nvidia_ai_enterprise:
            monthly *= max(0, months - included_months) / months
        total += monthly
    return total


def _storage_total(constraints: Constraints, book: Pricebook, *, monthly: bool) -> float:
    storage = constraints.storage
    if storage is None or storage.monthly is not monthly:
        return 0.0
    return storage.capacity_tb * to_currency(storage.price_per_tb, constraints.currency, book)


def storage_capex(constraints: Constraints, book: Pricebook) -> float:
    """The request's storage bought up front: TB × price per TB (0 without storage or when monthly)."""
    return _storage_total(constraints, book, monthly=False)


def storage_monthly(constraints: Constraints, book: Pricebook) -> float:
    """The request's storage rented: TB × price per TB-month (0 without storage or when bought)."""
    return _storage_total(constraints, book, monthly=True)


def _allowed(value: str, included: Iterable[str], excluded: Iterable[str]) -> bool:
    key = value.casefold()
    wanted = {v.casefold() for v in included}
    return (not wanted or key in wanted) and key not in {v.casefold() for v in excluded}


def _provider_allowed(offer: Offer, constraints: Constraints) -> bool:
    """The request's include/exclude lists of providers and regions allow ``offer``."""
    return _allowed(
        offer.provider, constraints.include_providers, constraints.exclude_providers
    ) and _allowed(offer.region, constraints.include_regions, constraints.exclude_regions)


def eligible_offers(offers: Iterable[Offer], constraints: Constraints) -> list[Offer]:
    """The offers of one GPU and mode the request lets the planner choose from (module docstring):
    the pinned ones if any is pinned, else the allowed providers' offers, under ``most_reliable``
    only those with the most reliable label among them."""
    candidates = list(offers)
    pinned = [o for o in candidates if o.id in constraints.pinned_offers]
    if pinned:
        return pinned
    allowed = [o for o in candidates if _provider_allowed(o, constraints)]
    if constraints.offer_policy is OfferPolicy.MOST_RELIABLE and allowed:
        best = min(label_rank(o.label) for o in allowed)
        allowed = [o for o in allowed if label_rank(o.label) == best]
    return allowed


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
    provider: str = ""
    label: PriceLabel | None = None
    ai_enterprise_included_months: int = 0


def acquisition_options(book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    """Every priced way to get each allowed GPU in each allowed mode, plus already-owned GPUs.

    Sorted by id. GPUs without any offer for a mode simply have no option in that mode; the
    optimizer's explanations report a GPU type with no options at all. GPUs are named by catalogue
    id (``solver.resolve`` resolved the request's aliases).
    """
    allowed = set(constraints.allowed_gpus)
    _require_catalogue_ids(book, allowed | {o.gpu for o in constraints.owned})
    options: list[AcquisitionOption] = []
    # Named GPUs are planned as named (the request was checked); the default is the plannable set.
    for gpu in book.gpus if allowed else plannable_gpus(book, constraints.allow_consumer_gpus):
        if allowed and gpu.id not in allowed:
            continue
        for mode in constraints.allowed_modes:
            if mode is AcquisitionMode.BUY:
                options.extend(_buy_options(gpu, book, constraints))
            else:
                options.extend(_rental_options(gpu, mode, book, constraints))
    owned_gpus = sorted({o.gpu for o in constraints.owned})
    for gpu_id in owned_gpus:
        options.extend(_owned_options(catalogue_gpu(book, gpu_id), book, constraints))
    return sorted(options, key=lambda o: o.id)


def offer_options(offer: Offer, book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    """The options of one named offer whatever the offer policy (a fleet line naming its offer):
    a rental, or a purchase in each server model that holds the GPU (a whole-server offer: its
    own). Ids end in ``@offer`` when the offer is not the policy's choice for that id."""
    gpu = catalogue_gpu(book, offer.gpu)
    if offer.kind is OfferKind.LEASE:
        return [lease_option(gpu, offer, book, constraints)]
    if offer.kind in _PURCHASE_KINDS:
        options = []
        servers: Sequence[ServerSpec | None] = servers_for(gpu, book) or [None]
        for server in servers:
            priced = _priced_purchase(offer, server, book, constraints)
            if priced is not None:
                option = _owned_hardware_option(gpu, server, priced[1], book, constraints, owned=False)
                options.append(replace(option, id=f"{option.id}@{offer.id}"))
        return options
    return [rental_offer_option(gpu, offer_mode(offer), offer, constraints, book)]


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


def _purchase_preference(offer: Offer, price: float) -> tuple[float, int, str]:
    return (price, -offer.as_of.toordinal(), offer.id)


def _choose_purchase(
    gpu: GpuSpec, server: ServerSpec | None, book: Pricebook, constraints: Constraints
) -> _Purchase | None:
    """The purchase behind a BUY option in ``server`` (None = a card with no server model)."""
    # The policy picks labels per GPU and mode (all its purchase offers), then this server's share.
    of_gpu = (o for o in book.offers if o.gpu == gpu.id and o.kind in _PURCHASE_KINDS)
    scored = [
        priced
        for offer in eligible_offers(of_gpu, constraints)
        if (priced := _priced_purchase(offer, server, book, constraints)) is not None
    ]
    if not scored:
        return None
    return min(scored, key=lambda item: item[0])[1]


def _priced_purchase(
    offer: Offer, server: ServerSpec | None, book: Pricebook, constraints: Constraints
) -> tuple[tuple[float, int, str], _Purchase] | None:
    """``offer`` as the purchase of a BUY option in ``server``, with its preference (per GPU all
    in, most recent, id); None when a whole-server offer is for another server model."""
    # Host cost carries no VAT flag of its own: it is on the site's VAT basis.
    host = site_price(server.host_cost, constraints, book) if server is not None else 0.0
    price = offer_price(offer, constraints, book)
    if offer.kind is OfferKind.PURCHASE_SERVER:
        if server is None or offer.server != server.id:
            return None
        # A whole-server quote includes the GPUs: split it into host and per-GPU parts so
        # that "GPUs only" pricing and partial servers stay meaningful.
        per_gpu, per_gpu_all_in, host = (
            max(0.0, price - host) / server.gpus_per_server,
            price / server.gpus_per_server,
            min(host, price),
        )
    else:
        # Compare like with like: a card's price plus its share of the host it needs.
        per_gpu = price
        per_gpu_all_in = price + (host / server.gpus_per_server if server is not None else 0.0)
    purchase = _Purchase(
        offer.id, per_gpu, host, offer.provider, offer.label, offer.ai_enterprise_included_months
    )
    return _purchase_preference(offer, per_gpu_all_in), purchase


def _buy_options(gpu: GpuSpec, book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    options: list[AcquisitionOption] = []
    servers: Sequence[ServerSpec | None] = servers_for(gpu, book) or [None]
    for server in servers:
        purchase = _choose_purchase(gpu, server, book, constraints)
        if purchase is None:
            continue
        options.append(_owned_hardware_option(gpu, server, purchase, book, constraints, owned=False))
    if constraints.include_leases and constraints.include_host_costs:
        options.extend(_lease_options(gpu, book, constraints))
    return options


def _lease_options(gpu: GpuSpec, book: Pricebook, constraints: Constraints) -> list[AcquisitionOption]:
    """Per server model, the eligible lease whose payments are worth least at the objective's rate
    (then the id): one lease option per model, as one purchase (a model's fabric is its option's)."""
    rate = constraints.objective_discount_rate
    best: dict[str, AcquisitionOption] = {}
    for offer in eligible_offers(_offers(book, gpu.id, OfferKind.LEASE), constraints):
        option = lease_option(gpu, offer, book, constraints)
        key = option.server_id or ""
        kept = best.get(key)
        if kept is None or (option.lease_cost(1, rate), option.id) < (kept.lease_cost(1, rate), kept.id):
            best[key] = option
    return [best[key] for key in sorted(best)]


_MINOR_DIGITS = {"USD": 2, "KRW": 0}


def lease_option(gpu: GpuSpec, offer: Offer, book: Pricebook, constraints: Constraints) -> AcquisitionOption:
    """Servers leased through ``offer``: used as if bought from its financed price (support, site,
    installation, fabric, market value at the horizon), with no capex; the lease's payments per
    plan year instead (``discounting.lease_payments_by_year``, each to the minor unit)."""
    server = next(s for s in book.servers if s.id == offer.server)
    assert offer.financed_price is not None and offer.buyout_price is not None  # checked on load
    financed = priced(offer.financed_price, offer.includes_vat, constraints, book)
    host = min(site_price(server.host_cost, constraints, book), financed)
    purchase = _Purchase(
        offer.id, (financed - host) / server.gpus_per_server, host, offer.provider, offer.label
    )
    option = _owned_hardware_option(gpu, server, purchase, book, constraints, owned=False)
    monthly = offer_price(offer, constraints, book)
    buyout = priced(offer.buyout_price, offer.includes_vat, constraints, book)
    leased = replace(
        option,
        id=f"{gpu.id}/lease/{offer.id}",
        capex_per_gpu=0.0,
        capex_per_server=0.0,
        lease_monthly_per_server=monthly,
        lease_value_per_server=financed,
        lease_term_months=offer.term_months,
        lease_buyout_per_server=buyout,
        lease_minor_digits=_MINOR_DIGITS[constraints.currency],
    )
    return replace(leased, lease_payments_per_server=leased.lease_payments_over(constraints.horizon_months))


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


@dataclass(frozen=True, slots=True)
class _SiteCosts:
    """What holding one GPU type in one server model costs each month besides the hardware."""

    colocation_per_gpu: float = 0.0
    colocation_per_server: float = 0.0
    idle_power_per_gpu: float = 0.0
    """Monthly: the GPU's idle draw, every held hour."""
    busy_power_per_gpu_hour: float = 0.0
    """Per busy GPU-hour: the rest of the GPU's average draw."""
    host_power_per_server: float = 0.0
    host_kw: float = 0.0
    """The host's wall power with PUE (the power cap counts it)."""


def _site_costs(
    gpu: GpuSpec, server: ServerSpec | None, constraints: Constraints, book: Pricebook
) -> _SiteCosts:
    """Rack and power (module docstring): a colocated server pays the colocation rate, and power
    only when that rate excludes it; a server on the buyer's own site (``site_model``) pays its
    space price and the power; a card into a host already running pays its power alone."""
    site = book.site
    tariff = electricity_per_kwh(constraints, book)
    colocated = server is not None and constraints.include_host_costs
    idle_fraction = min(site.idle_gpu_power_fraction, site.average_gpu_power_fraction)
    wall = site.pue / WATTS_PER_KW * tariff  # per watt of IT load per hour
    power = _SiteCosts(
        idle_power_per_gpu=gpu.tdp_w * idle_fraction * wall * HOURS_PER_MONTH,
        busy_power_per_gpu_hour=gpu.tdp_w * (site.average_gpu_power_fraction - idle_fraction) * wall,
    )
    if not colocated:
        # A card into a host the buyer already runs: no host cost, rack rent or host power.
        return power
    assert server is not None
    host_kw = server.host_power_w * site.pue / WATTS_PER_KW
    price, basis, includes_power = _rack_price(constraints, book)
    if basis is ColocationBasis.PER_KW:
        per_gpu, per_server = gpu.tdp_w / WATTS_PER_KW * price, server.host_power_w / WATTS_PER_KW * price
    else:
        per_gpu, per_server = 0.0, server.rack_units * price
    if includes_power:
        return _SiteCosts(colocation_per_gpu=per_gpu, colocation_per_server=per_server, host_kw=host_kw)
    return replace(
        power,
        colocation_per_gpu=per_gpu,
        colocation_per_server=per_server,
        host_power_per_server=host_kw * tariff * HOURS_PER_MONTH,
        host_kw=host_kw,
    )


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
    else:
        gpus_per_server = max(1, gpu.scale_up_domain_size)
        domain = gpu.scale_up_domain_size
        must_be_full = False
        rack_units = 0.0
    costs = _site_costs(gpu, server, constraints, book)
    place = server.id if server is not None else purchase.offer_id
    install = 0.0 if owned else constraints.installation_fraction
    install_per_server = 0.0
    if server is not None and constraints.include_host_costs and not owned:
        fee = constraints.installation_per_server
        install_per_server = install * host_cost + (
            to_currency(fee, constraints.currency, book) if fee is not None else 0.0
        )
    # Owned GPUs: when they were bought (and so how much of a bundled subscription is left) is unknown.
    software = software_per_gpu_month(
        constraints, book, 0 if owned else purchase.ai_enterprise_included_months
    )
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
        residual_fraction=0.0
        if owned or not residual_value_credit(constraints, book)
        else residual_curve(site, gpu).value_at(constraints.horizon_months),
        fixed_monthly_per_gpu=purchase.capex_per_gpu * support_per_month
        + costs.colocation_per_gpu
        + costs.idle_power_per_gpu
        + software,
        fixed_monthly_per_server=costs.colocation_per_server
        + costs.host_power_per_server
        + support_host * support_per_month,
        busy_hourly_per_gpu=costs.busy_power_per_gpu_hour,
        power_kw_per_gpu=gpu.tdp_w * site.pue / WATTS_PER_KW,
        power_kw_per_server=costs.host_kw,
        rack_units_per_server=rack_units,
        owned=owned,
        colocation_monthly_per_server=costs.colocation_per_server,
        host_power_monthly_per_server=costs.host_power_per_server,
        idle_power_monthly_per_gpu=costs.idle_power_per_gpu,
        colocation_monthly_per_gpu=costs.colocation_per_gpu,
        provider=purchase.provider,
        price_label=purchase.label,
        network_capex_per_server=(
            network_capex_per_server(server, constraints, book) if server is not None and not owned else 0.0
        ),
        installation_capex_per_gpu=install * (0.0 if owned else purchase.capex_per_gpu),
        installation_capex_per_server=install_per_server,
        software_monthly_per_gpu=software,
    )


def rental_rate(offer: Offer, mode: AcquisitionMode, constraints: Constraints, book: Pricebook) -> float:
    """What one GPU of a rental offer costs: per GPU-hour used (on demand), or per month held over
    the horizon (reserved: whole commitment terms, ``reserved_months_paid``)."""
    hourly = offer_price(offer, constraints, book)
    if mode is AcquisitionMode.ON_DEMAND:
        return hourly
    horizon = constraints.horizon_months
    return hourly * HOURS_PER_MONTH * reserved_months_paid(horizon, offer.term_months) / horizon


def undominated_rentals(rated: Iterable[tuple[float, Offer]]) -> list[tuple[float, Offer]]:
    """The (rate, offer) pairs no other one dominates, cheapest first: an offer is dominated by
    one at most as dear per GPU whose instance size divides its own (whole instances of the
    other rent any count it rents, for no more). Ties go to the smaller instance, the most recent
    offer, the id."""
    ordered = sorted(
        rated, key=lambda ro: (ro[0], ro[1].gpus_per_instance, -ro[1].as_of.toordinal(), ro[1].id)
    )
    kept: list[tuple[float, Offer]] = []
    for rate, offer in ordered:
        if not any(offer.gpus_per_instance % k.gpus_per_instance == 0 for _, k in kept):
            kept.append((rate, offer))
    return kept


def _rental_options(
    gpu: GpuSpec, mode: AcquisitionMode, book: Pricebook, constraints: Constraints
) -> list[AcquisitionOption]:
    """One option per eligible rental offer of ``gpu`` in ``mode`` that no other dominates
    (``undominated_rentals``): the MIP chooses the mix of rental units (1-GPU and 8-GPU
    instances) and terms."""
    eligible = eligible_offers(_offers(book, gpu.id, _RENTAL_KIND[mode]), constraints)
    rated = [(rental_rate(offer, mode, constraints, book), offer) for offer in eligible]
    return [
        rental_offer_option(gpu, mode, offer, constraints, book) for _, offer in undominated_rentals(rated)
    ]


def rental_offer_option(
    gpu: GpuSpec, mode: AcquisitionMode, offer: Offer, constraints: Constraints, book: Pricebook
) -> AcquisitionOption:
    """The option of renting ``gpu`` through ``offer`` (at its ``rental_rate``)."""
    rate = rental_rate(offer, mode, constraints, book)
    domain = max(1, gpu.scale_up_domain_size)
    software = software_per_gpu_month(constraints, book)
    reserved = mode is AcquisitionMode.RESERVED
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
        fixed_monthly_per_gpu=rate + software if reserved else 0.0,
        fixed_monthly_per_server=0.0,
        busy_hourly_per_gpu=0.0 if reserved else rate + software / HOURS_PER_MONTH,
        power_kw_per_gpu=0.0,
        power_kw_per_server=0.0,
        rack_units_per_server=0.0,
        rental_instance_gpus=offer.gpus_per_instance,
        provider=offer.provider,
        price_label=offer.label,
        software_monthly_per_gpu=software if reserved else 0.0,
        software_hourly_per_gpu=0.0 if reserved else software / HOURS_PER_MONTH,
    )


def _offers(book: Pricebook, gpu_id: str, kind: OfferKind) -> Iterable[Offer]:
    return (o for o in book.offers if o.gpu == gpu_id and o.kind is kind)
