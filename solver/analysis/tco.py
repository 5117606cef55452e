"""Total cost of ownership of a fleet, and what it costs per token or per training run.

Input: the options a fleet uses with their GPU and server counts and busy GPU-hours per month
(``FleetLine``; the planner builds them from the optimizer's ``ChosenOption``). The arithmetic is
the same as ``AcquisitionOption.horizon_cost`` — which the MIP objective uses — split into the
lines a bid shows:

    purchase            capex_per_gpu × GPUs + capex_per_server × servers   (once, up front)
    networking          network_capex_per_server × servers once 2 or more (once; multi-node fabric)
    installation        installation_capex_per_gpu × GPUs + per server × servers (once)
    storage             the request's TB × price per TB (once, fleet-wide) or per TB-month
    residual value      purchase × residual_fraction (hardware only)    (recovered at the end)
    depreciation        capex − residual value, spread over the horizon
    support             (fixed_monthly_per_gpu − idle power − software) × GPUs (bought/owned) + host support
    power               busy GPU-hours × busy power price + idle GPU power × GPUs + host power
    colocation          rack rent per server
    software            software_monthly_per_gpu × GPUs (+ per on-demand GPU-hour)
    reserved rental     (fixed_monthly_per_gpu − software) × GPUs (reserved options)
    on-demand rental    busy GPU-hours × (hourly price − software) (on-demand options)

    capex          = purchase + networking + installation + storage bought
    monthly opex   = support + power + colocation + software + storage rented + reserved + on-demand
    horizon TCO    = capex − residual value + monthly opex × horizon months

Money in reports is Decimal ``Money`` rounded to the currency's minor unit (cents, whole won);
horizon totals are sums of the rounded lines so a bid's columns add up exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import ROUND_HALF_EVEN, Decimal
from enum import StrEnum
from typing import Any

from pricebook.schema import Currency, GpuId, Money, Pricebook, SiteModel
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload, TrainingWorkload
from solver.pricing.costs import residual_value_credit, site_model
from solver.pricing.options import AcquisitionOption
from solver.units import (
    DAYS_PER_MONTH,
    HOURS_PER_MONTH,
    MONTHS_PER_YEAR,
    SECONDS_PER_HOUR,
    TOKENS_PER_MILLION,
)

_MINOR_UNIT = {"USD": Decimal("0.01"), "KRW": Decimal("1")}


_UNIT_PRICE_QUANTUM = {"USD": Decimal("0.0001"), "KRW": Decimal("0.01")}


def _rounded(amount: float, quantum: Decimal, currency: Currency) -> Money:
    """``amount`` as Decimal ``Money``, rounded to ``quantum`` (banker's rounding)."""
    return Money(
        amount=Decimal(repr(float(amount))).quantize(quantum, rounding=ROUND_HALF_EVEN), currency=currency
    )


def minor_unit(currency: Currency) -> Decimal:
    """The currency's smallest amount (cent, whole won): every amount of the answer is rounded to it."""
    return _MINOR_UNIT[currency]


def to_money(amount: float, currency: Currency) -> Money:
    """A float amount as Decimal ``Money`` rounded to the currency's minor unit (banker's rounding)."""
    return _rounded(amount, _MINOR_UNIT[currency], currency)


def to_unit_price(amount: float, currency: Currency) -> Money:
    """A per-unit price (per GPU-hour, per 1M tokens) to 1/100 of the minor unit: API prices such
    as $0.075 per 1M tokens would lose their meaning rounded to the cent."""
    return _rounded(amount, _UNIT_PRICE_QUANTUM[currency], currency)


def add_money(amounts: Iterable[Money], currency: Currency) -> Money:
    total = Decimal(0).quantize(_MINOR_UNIT[currency])
    for amount in amounts:
        if amount.currency != currency:
            msg = f"cannot add {amount.currency} to {currency}"
            raise ValueError(msg)
        total += amount.amount
    return Money(amount=total, currency=currency)


@dataclass(frozen=True, slots=True)
class FleetLine:
    """GPUs acquired through one option, and how much they are used."""

    option: AcquisitionOption
    gpus: int
    """GPUs held every hour (on-demand: the peak rented, for the record only)."""
    servers: int
    busy_gpu_hours_per_month: float


@dataclass(frozen=True, slots=True)
class CostLines:
    """One set of TCO lines in float (request currency): per fleet line or summed."""

    purchase_gpus: float = 0.0
    purchase_hosts: float = 0.0
    residual_value: float = 0.0
    support_monthly: float = 0.0
    power_monthly: float = 0.0
    colocation_monthly: float = 0.0
    reserved_monthly: float = 0.0
    on_demand_monthly: float = 0.0
    networking: float = 0.0
    installation: float = 0.0
    storage: float = 0.0
    software_monthly: float = 0.0
    storage_monthly: float = 0.0
    lease: float = 0.0
    """Lease payments over the horizon (instalments and buy-out): neither capex nor a monthly line."""

    @property
    def capex(self) -> float:
        return self.purchase_gpus + self.purchase_hosts + self.networking + self.installation + self.storage

    @property
    def opex_monthly(self) -> float:
        return (
            self.support_monthly
            + self.power_monthly
            + self.colocation_monthly
            + self.reserved_monthly
            + self.on_demand_monthly
            + self.software_monthly
            + self.storage_monthly
        )

    def horizon_total(self, horizon_months: int) -> float:
        return self.capex - self.residual_value + self.opex_monthly * horizon_months + self.lease

    def __add__(self, other: CostLines) -> CostLines:
        return CostLines(
            *(a + b for a, b in zip(_fields(self), _fields(other), strict=True)),
        )


def _fields(lines: CostLines) -> tuple[float, ...]:
    return tuple(getattr(lines, f.name) for f in fields(lines))


def storage_lines(storage_capex: float, storage_monthly: float) -> CostLines:
    """The request's storage (a fleet-wide line, not any option's)."""
    return CostLines(storage=storage_capex, storage_monthly=storage_monthly)


def cost_lines(line: FleetLine) -> CostLines:
    """Split one fleet line's cost into TCO lines (see the module docstring)."""
    opt = line.option
    if opt.mode is AcquisitionMode.RESERVED:
        return CostLines(
            reserved_monthly=(opt.fixed_monthly_per_gpu - opt.software_monthly_per_gpu) * line.gpus,
            software_monthly=opt.software_monthly_per_gpu * line.gpus,
        )
    if opt.mode is AcquisitionMode.ON_DEMAND:
        hours = line.busy_gpu_hours_per_month
        return CostLines(
            on_demand_monthly=(opt.busy_hourly_per_gpu - opt.software_hourly_per_gpu) * hours,
            software_monthly=opt.software_hourly_per_gpu * hours,
        )
    purchase_gpus = opt.capex_per_gpu * line.gpus
    purchase_hosts = opt.capex_per_server * line.servers
    server_support = (
        opt.fixed_monthly_per_server - opt.colocation_monthly_per_server - opt.host_power_monthly_per_server
    )
    return CostLines(
        purchase_gpus=purchase_gpus,
        purchase_hosts=purchase_hosts,
        residual_value=opt.residual_value(line.gpus, line.servers),
        support_monthly=opt.support_monthly_per_gpu * line.gpus + server_support * line.servers,
        power_monthly=opt.busy_hourly_per_gpu * line.busy_gpu_hours_per_month
        + opt.idle_power_monthly_per_gpu * line.gpus
        + opt.host_power_monthly_per_server * line.servers,
        colocation_monthly=opt.colocation_monthly_per_gpu * line.gpus
        + opt.colocation_monthly_per_server * line.servers,
        networking=opt.network_capex(line.servers),
        installation=opt.installation_capex(line.gpus, line.servers),
        software_monthly=opt.software_monthly_per_gpu * line.gpus,
        lease=opt.lease_total(line.servers),
    )


@dataclass(frozen=True, slots=True)
class TcoReport:
    """TCO lines as ``Money`` (one currency), for one option or the whole fleet."""

    purchase_gpus: Money
    purchase_hosts: Money
    capex: Money
    """Everything paid up front: GPUs, hosts, networking, installation, storage."""
    residual_value: Money
    depreciation: Money
    """capex − residual value: what the purchases lose over the horizon."""
    depreciation_monthly: Money
    support_monthly: Money
    power_monthly: Money
    colocation_monthly: Money
    reserved_monthly: Money
    on_demand_monthly: Money
    opex_monthly: Money
    opex_horizon: Money
    total_monthly: Money
    """Horizon TCO ÷ horizon months (depreciation + opex per month)."""
    horizon_total: Money
    horizon_months: int
    networking: Money
    """Scale-out fabric of multi-node bought servers (switch ports, optics, NICs)."""
    installation: Money
    storage: Money
    """Storage bought up front."""
    software_monthly: Money
    storage_monthly: Money
    """Storage rented per TB-month."""
    lease: Money
    """Lease payments over the horizon (instalments and buy-outs; not capex)."""

    @property
    def currency(self) -> Currency:
        return self.capex.currency

    @property
    def hardware(self) -> Money:
        """GPUs and hosts: the purchases with a market value at the horizon (book depreciation's base)."""
        return add_money((self.purchase_gpus, self.purchase_hosts), self.currency)


_ONCE_LINES = ("purchase_gpus", "purchase_hosts", "networking", "installation", "storage")
"""The ``CostLines`` paid up front (their sum is the capex)."""
_MONTHLY_LINES = (
    "support_monthly",
    "power_monthly",
    "colocation_monthly",
    "reserved_monthly",
    "on_demand_monthly",
    "software_monthly",
    "storage_monthly",
)
"""The ``CostLines`` paid every month (their sum is the opex)."""


def report(lines: CostLines | Sequence[CostLines], horizon_months: int, currency: Currency) -> TcoReport:
    """Round each line once; totals are sums of the rounded lines. Given several parts (a fleet's
    options and its fleet-wide lines), each part's lines are rounded once and the report's are
    their sums: the parts' own reports add up to it exactly, to the won or cent (one rounding
    rule for the fleet lines and the TCO)."""
    parts = (lines,) if isinstance(lines, CostLines) else tuple(lines)

    def m(name: str) -> Money:
        return add_money((to_money(getattr(part, name), currency) for part in parts), currency)

    once = {name: m(name) for name in _ONCE_LINES}
    capex = add_money(once.values(), currency)
    residual = m("residual_value")
    depreciation = Money(amount=capex.amount - residual.amount, currency=currency)
    monthly = {name: m(name) for name in _MONTHLY_LINES}
    opex_monthly = add_money(monthly.values(), currency)
    opex_horizon = Money(amount=opex_monthly.amount * horizon_months, currency=currency)
    lease = m("lease")
    horizon_total = Money(
        amount=depreciation.amount + opex_horizon.amount + lease.amount, currency=currency
    )
    return TcoReport(
        **once,
        **monthly,
        capex=capex,
        residual_value=residual,
        depreciation=depreciation,
        depreciation_monthly=to_money(float(depreciation.amount) / horizon_months, currency),
        opex_monthly=opex_monthly,
        opex_horizon=opex_horizon,
        total_monthly=to_money(float(horizon_total.amount) / horizon_months, currency),
        horizon_total=horizon_total,
        horizon_months=horizon_months,
        lease=lease,
    )


@dataclass(frozen=True, slots=True)
class OptionTco:
    option_id: str
    gpu: GpuId
    mode: AcquisitionMode
    owned: bool
    gpus: int
    servers: int
    busy_gpu_hours_per_month: float
    utilization: float
    """Busy GPU-hours ÷ GPU-hours held (0 for on-demand, which is only paid while busy)."""
    tco: TcoReport


@dataclass(frozen=True, slots=True)
class FleetTco:
    currency: Currency
    horizon_months: int
    by_option: tuple[OptionTco, ...]
    total: TcoReport
    total_float: float
    """Unrounded horizon TCO (compare with the optimizer's objective)."""


def fleet_tco(
    lines: Sequence[FleetLine],
    horizon_months: int,
    currency: Currency,
    fleet_wide: CostLines | None = None,
) -> FleetTco:
    """TCO of a whole fleet: per option and in total (with ``fleet_wide`` lines such as the
    request's storage, which belong to no option)."""
    by_option: list[OptionTco] = []
    total = fleet_wide or CostLines()
    parts = [total]
    for line in lines:
        split = cost_lines(line)
        total = total + split
        parts.append(split)
        held_hours = line.gpus * HOURS_PER_MONTH
        utilization = line.busy_gpu_hours_per_month / held_hours if held_hours > 0 else 0.0
        if line.option.mode is AcquisitionMode.ON_DEMAND:
            utilization = 0.0
        by_option.append(
            OptionTco(
                option_id=line.option.id,
                gpu=line.option.gpu,
                mode=line.option.mode,
                owned=line.option.owned,
                gpus=line.gpus,
                servers=line.servers,
                busy_gpu_hours_per_month=line.busy_gpu_hours_per_month,
                utilization=min(1.0, utilization),
                tco=report(split, horizon_months, currency),
            )
        )
    return FleetTco(
        currency=currency,
        horizon_months=horizon_months,
        by_option=tuple(by_option),
        total=report(parts, horizon_months, currency),
        total_float=total.horizon_total(horizon_months),
    )


# --------------------------------------------------------------------------------------------
# VAT and accounting depreciation: lines beside the (ex-VAT, market-value) TCO
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VatLines:
    """Supply / VAT / total (공급가액 / 부가세 / 합계) of what the fleet pays over the horizon.

    supply = capex + opex × horizon months (every payment, ex-VAT); VAT = supply × rate, rounded
    once; total = supply + VAT. The residual value is a later sale (the buyer pays its VAT), so the
    TCO with VAT = the ex-VAT TCO + the VAT line. Korean B2B VAT is recoverable as input tax; the line
    shows the cash a bid must fund, not a cost."""

    rate: float
    supply: Money
    vat: Money
    total: Money
    capex_vat: Money
    """VAT on the purchases alone (what a VAT-inclusive capex budget must also cover)."""
    horizon_total_with_vat: Money


def vat_lines(tco: TcoReport, rate: float) -> VatLines:
    """The VAT line of ``tco`` at ``rate`` (0.10 = 10 %)."""
    currency = tco.currency
    supply = add_money((tco.capex, tco.opex_horizon, tco.lease), currency)  # every payment, leases too
    vat = to_money(float(supply.amount) * rate, currency)
    return VatLines(
        rate=rate,
        supply=supply,
        vat=vat,
        total=add_money((supply, vat), currency),
        capex_vat=to_money(float(tco.capex.amount) * rate, currency),
        horizon_total_with_vat=add_money((tco.horizon_total, vat), currency),
    )


@dataclass(frozen=True, slots=True)
class DepreciationYear:
    """One year of straight-line book depreciation of the fleet's purchases."""

    year: int
    """1 = the first twelve months of the horizon."""
    months: int
    """Months of the horizon in this year (the last year may be short)."""
    depreciation: Money
    book_value_end: Money
    """Purchases less the depreciation so far, at the end of this year."""


def depreciation_schedule(
    capex: Money, horizon_months: int, life_months: int
) -> tuple[DepreciationYear, ...]:
    """Book depreciation per year of the horizon: capex × months in the year ÷ ``life_months``
    (straight line to zero), never below zero. Accounting only: the TCO uses market value."""
    if capex.amount <= 0:
        return ()
    currency = capex.currency
    rows: list[DepreciationYear] = []
    booked = Decimal(0)
    year = int(MONTHS_PER_YEAR)
    for start in range(0, horizon_months, year):
        months = min(year, horizon_months - start)
        used = min(start + months, life_months) - min(start, life_months)
        amount = to_money(float(capex.amount) * used / life_months, currency).amount
        amount = min(amount, capex.amount - booked)
        booked += amount
        rows.append(
            DepreciationYear(
                year=start // year + 1,
                months=months,
                depreciation=Money(amount=amount, currency=currency),
                book_value_end=Money(amount=capex.amount - booked, currency=currency),
            )
        )
    return tuple(rows)


# --------------------------------------------------------------------------------------------
# Unit economics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkloadUsage:
    """GPU-hours per month a workload occupies on each GPU type (from the plan)."""

    workload: str
    gpu_hours_per_month: Mapping[GpuId, float]


class UnitCostKind(StrEnum):
    """What a unit cost is per: tokens (inference) or runs (training)."""

    INFERENCE = "inference"
    TRAINING = "training"


@dataclass(frozen=True, slots=True)
class UnitCost:
    workload: str
    kind: UnitCostKind
    horizon_cost: Money
    """The workload's share of the fleet TCO over the horizon."""
    monthly_cost: Money
    share_of_fleet: float
    per_million_output_tokens: Money | None = None
    per_million_total_tokens: Money | None = None
    per_training_run: Money | None = None
    output_tokens_per_month: float = 0.0
    total_tokens_per_month: float = 0.0
    runs_per_month: float = 0.0


def gpu_type_costs(lines: Sequence[FleetLine], horizon_months: int) -> dict[GpuId, float]:
    """Horizon TCO per GPU type (all its options together)."""
    costs: dict[GpuId, float] = {}
    for line in lines:
        costs[line.option.gpu] = costs.get(line.option.gpu, 0.0) + cost_lines(line).horizon_total(
            horizon_months
        )
    return costs


def allocate_cost(
    lines: Sequence[FleetLine], usages: Sequence[WorkloadUsage], horizon_months: int
) -> dict[str, float]:
    """Each workload's share of the fleet TCO over the horizon.

    Each GPU type's whole cost (idle time and redundancy included) is split among the workloads
    in proportion to the GPU-hours they occupy on it: fully allocated cost, so the shares add up
    to the fleet TCO. A GPU type nobody uses (not expected in an optimal plan) is split evenly.
    """
    shares = {u.workload: 0.0 for u in usages}
    for gpu, cost in gpu_type_costs(lines, horizon_months).items():
        hours = {u.workload: u.gpu_hours_per_month.get(gpu, 0.0) for u in usages}
        used = sum(hours.values())
        for workload, h in hours.items():
            shares[workload] += cost * (h / used if used > 0 else 1.0 / max(1, len(usages)))
    return shares


def daily_requests(workload: InferenceWorkload) -> float:
    """Requests on an average day: implied by the daily tokens when given, else the hourly rates."""
    if workload.daily_tokens is not None:
        # Daily tokens are the demand itself; the flat hourly rates derived from them are scaled
        # by the peak-to-average factor, so derive the volume directly.
        return workload.daily_tokens / workload.tokens_per_request
    return sum(rate * SECONDS_PER_HOUR for rate in workload.hourly_request_rates())


def inference_tokens_per_month(workload: InferenceWorkload) -> tuple[float, float]:
    """(output, total) tokens per month the workload's demand implies (average day, 365/12 days)."""
    requests = daily_requests(workload)
    return (
        requests * workload.output_tokens * DAYS_PER_MONTH,
        requests * workload.tokens_per_request * DAYS_PER_MONTH,
    )


def unit_costs(
    lines: Sequence[FleetLine],
    usages: Sequence[WorkloadUsage],
    *,
    inference: Sequence[InferenceWorkload],
    training: Sequence[TrainingWorkload],
    horizon_months: int,
    currency: Currency,
) -> tuple[UnitCost, ...]:
    """Cost per 1M output / total tokens for inference workloads, per run for training workloads."""
    shares = allocate_cost(lines, usages, horizon_months)
    fleet_total = sum(shares.values())

    def share_of(name: str, kind: UnitCostKind, **per_unit: Any) -> UnitCost:
        share = shares.get(name, 0.0)
        return UnitCost(
            workload=name,
            kind=kind,
            horizon_cost=to_money(share, currency),
            monthly_cost=to_money(share / horizon_months, currency),
            share_of_fleet=share / fleet_total if fleet_total > 0 else 0.0,
            **per_unit,
        )

    result: list[UnitCost] = []
    for w in inference:
        monthly = shares.get(w.name, 0.0) / horizon_months
        output, total = inference_tokens_per_month(w)
        result.append(
            share_of(
                w.name,
                UnitCostKind.INFERENCE,
                per_million_output_tokens=to_unit_price(monthly / output * TOKENS_PER_MILLION, currency),
                per_million_total_tokens=to_unit_price(monthly / total * TOKENS_PER_MILLION, currency),
                output_tokens_per_month=output,
                total_tokens_per_month=total,
            )
        )
    for t in training:
        monthly = shares.get(t.name, 0.0) / horizon_months
        result.append(
            share_of(
                t.name,
                UnitCostKind.TRAINING,
                per_training_run=to_money(monthly / t.runs_per_month, currency),
                runs_per_month=t.runs_per_month,
            )
        )
    return tuple(result)


class CostComponentName(StrEnum):
    """The named parts of a TCO (proto ``CostComponent.name``), in report order."""

    GPU_PURCHASE = "gpu_purchase"
    HOST_PURCHASE = "host_purchase"
    RESIDUAL_VALUE = "residual_value"
    SUPPORT = "support"
    POWER = "power"
    COLOCATION = "colocation"
    RESERVED_RENTAL = "reserved_rental"
    ON_DEMAND_RENTAL = "on_demand_rental"
    NETWORKING = "networking"
    INSTALLATION = "installation"
    STORAGE = "storage"
    SOFTWARE = "software"
    LEASE = "lease"


@dataclass(frozen=True, slots=True)
class CostComponent:
    name: CostComponentName
    horizon_amount: Money
    """Over the whole horizon (negative for the residual value)."""
    monthly_amount: Money
    """Average per month (one-off items spread over the horizon)."""
    explanation: str


@dataclass(frozen=True, slots=True)
class SiteTerms:
    """The request's site settings the cost components are explained by."""

    site_model: SiteModel = SiteModel.COLOCATION
    residual_value_credit: bool = True


def site_terms(constraints: Constraints, book: Pricebook) -> SiteTerms:
    """The site model and residual credit a plan was priced with (the request's, else the book's)."""
    return SiteTerms(site_model(constraints, book), residual_value_credit(constraints, book))


def cost_components(tco: TcoReport, terms: SiteTerms = SiteTerms()) -> tuple[CostComponent, ...]:
    """The TCO as named components that add up to ``tco.horizon_total``."""
    months = tco.horizon_months
    own_site = terms.site_model is SiteModel.OWN_SITE
    currency = tco.currency

    def once(amount: Money) -> tuple[Money, Money]:
        return amount, to_money(float(amount.amount) / months, currency)

    def monthly(amount: Money) -> tuple[Money, Money]:
        return Money(amount=amount.amount * months, currency=currency), amount

    negative_residual = Money(amount=-tco.residual_value.amount, currency=currency)
    rows = (
        (
            CostComponentName.GPU_PURCHASE,
            once(tco.purchase_gpus),
            "GPU purchase price × GPUs bought (owned GPUs: 0, sunk)",
        ),
        (
            CostComponentName.HOST_PURCHASE,
            once(tco.purchase_hosts),
            "host (chassis, CPUs, NICs) price × servers bought",
        ),
        (
            CostComponentName.RESIDUAL_VALUE,
            once(negative_residual),
            "market value of the hardware at the end of the horizon: purchases × its GPU class's residual "
            "curve at that age (e.g. 30 % after 36 months)",
        ),
        (
            CostComponentName.SUPPORT,
            monthly(tco.support_monthly),
            "support/maintenance % per year of the purchase price ÷ 12, per month held",
        ),
        (
            CostComponentName.POWER,
            monthly(tco.power_monthly),
            OWN_SITE_POWER
            if own_site
            else "GPU TDP × PUE × tariff × (idle fraction every held hour + the rest of the average "
            "draw per busy hour), plus host power every hour; none for colocated hardware whose "
            "colocation price includes power",
        ),
        (
            CostComponentName.COLOCATION,
            monthly(tco.colocation_monthly),
            OWN_SITE_SPACE
            if own_site
            else "colocation price per kW-month × IT power (GPU TDP + host power) per server, or per "
            "rack unit × rack units",
        ),
        (
            CostComponentName.RESERVED_RENTAL,
            monthly(tco.reserved_monthly),
            f"reserved GPUs × price per GPU-hour × {HOURS_PER_MONTH:g} h",
        ),
        (
            CostComponentName.ON_DEMAND_RENTAL,
            monthly(tco.on_demand_monthly),
            "on-demand GPU-hours used × price per GPU-hour",
        ),
        (
            CostComponentName.NETWORKING,
            once(tco.networking),
            "servers of a model bought 2 or more: GPU slots × (switch port + optics per GPU) + NICs × "
            "NIC price (unless the host price includes them), by fabric (InfiniBand, RoCE Ethernet)",
        ),
        (
            CostComponentName.INSTALLATION,
            once(tco.installation),
            "installation fraction × (GPUs + hosts bought) + installation fee × servers bought",
        ),
        (
            CostComponentName.STORAGE,
            _storage(tco, months),
            "storage TB × price per TB (bought once, or per TB-month)",
        ),
        (
            CostComponentName.SOFTWARE,
            monthly(tco.software_monthly),
            "licence price per GPU-year ÷ 12 × GPUs held (on demand: ÷ 8,760 × GPU-hours used); NVIDIA AI "
            "Enterprise on a SKU that includes it: only the months beyond the included ones",
        ),
        (
            CostComponentName.LEASE,
            once(tco.lease),
            "leased servers × (instalment × months of the term + buy-out); a term beyond the horizon "
            "is settled at its end (the hardware is then owned: its market value is in the residual)",
        ),
    )
    # Colocated hardware whose colocation price includes power has no power cost of its own: the
    # line stays, at zero, so a reader sees power was not forgotten (nor counted twice).
    power_in_colocation = tco.power_monthly.amount == 0 and tco.colocation_monthly.amount != 0
    # Without the residual credit the line stays at zero for bought hardware, saying why.
    no_credit = not terms.residual_value_credit and tco.hardware.amount != 0
    components: list[CostComponent] = []
    for name, (horizon, per_month), why in rows:
        if name is CostComponentName.POWER and power_in_colocation and not own_site:
            components.append(CostComponent(name, horizon, per_month, POWER_IN_COLOCATION))
        elif name is CostComponentName.RESIDUAL_VALUE and no_credit:
            components.append(CostComponent(name, horizon, per_month, NO_RESIDUAL_CREDIT))
        elif horizon.amount != 0:
            components.append(CostComponent(name, horizon, per_month, why))
    return tuple(components)


def _storage(tco: TcoReport, months: int) -> tuple[Money, Money]:
    """Storage over the horizon and per month, bought or rented."""
    horizon = tco.storage.amount + tco.storage_monthly.amount * months
    return (
        Money(amount=horizon, currency=tco.currency),
        to_money(float(horizon) / months, tco.currency),
    )


POWER_IN_COLOCATION = (
    "0: the colocation price includes the power drawn (colocation_includes_power), never counted twice"
)
OWN_SITE_POWER = (
    "own site: GPU TDP × PUE × site tariff × (idle fraction every held hour + the rest of the average "
    "draw per busy hour), plus host power × PUE × tariff every hour; no colocation fee"
)
OWN_SITE_SPACE = (
    "own site: space price per rack unit-month × rack units, or per kW-month × IT power (GPU TDP + "
    "host power); no colocation fee, the power is in the power line"
)
NO_RESIDUAL_CREDIT = (
    "0: no resale value credited (residual_value_credit false: hardware the buyer cannot sell, "
    "e.g. public-sector 불용 처리)"
)
