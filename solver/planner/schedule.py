"""A multi-year plan's acquisition schedule: per year what is added, what it costs, the fleet in
service and how each workload is deployed; per tranche its depreciation to the horizon."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from pricebook.schema import Currency, Money
from solver.analysis.tco import to_money as money
from solver.domain import AcquisitionMode
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.optimizer.stage_eval import StagedCost, Tranche
from solver.optimizer.stages import StagedInstance


@dataclass(frozen=True, slots=True)
class ScheduleItem:
    """GPUs of one option: bought in a year (``capex`` = their tranche), or in service."""

    gpu: str
    mode: AcquisitionMode
    gpus: int
    servers: int = 0
    offer_id: str | None = None
    server_id: str | None = None
    capex: Money | None = None


@dataclass(frozen=True, slots=True)
class YearDeployment:
    workload: str
    deployment: str
    peak_replicas: int


@dataclass(frozen=True, slots=True)
class ScheduleYear:
    year: int
    """1 = the first period."""
    months: int
    added: tuple[ScheduleItem, ...]
    """Bought at the start of the year."""
    capex: Money
    """Paid at its start (the tranches, their fabric and installation; the request's one-off
    costs in year 1)."""
    opex_monthly: Money
    """Paid every month of the year (tranches held, rentals at the year's prices, power; the
    year's lease payments spread over its months)."""
    fleet: tuple[ScheduleItem, ...]
    """In service during the year: bought so far, owned, reserved, on demand (at the peak)."""
    deployments: tuple[YearDeployment, ...]


@dataclass(frozen=True, slots=True)
class TrancheLine:
    year: int
    gpu: str
    offer_id: str
    server_id: str | None
    gpus: int
    servers: int
    hardware: Money
    residual_value: Money
    depreciation: Money
    gpu_purchase: Money
    """The GPUs at the year's price (``hardware`` = it + ``host_purchase``, each rounded)."""
    host_purchase: Money
    """The hosts at the year's price (0 when the request does not count host costs)."""
    networking: Money
    """The fabric the tranche adds."""
    installation: Money
    capex: Money
    """What the tranche costs at its year's start: hardware, fabric and installation."""


@dataclass(frozen=True, slots=True)
class StagedSchedule:
    years: tuple[ScheduleYear, ...]
    tranches: tuple[TrancheLine, ...]
    horizon_tco: Money
    """The objective's TCO (discounted when the plan minimised the NPV)."""
    nominal_tco: Money
    """Σ the years' capex + opex per month × months, less the tranches' residual values: the
    rows shown, each rounded once to the minor unit (``rounded_nominal``)."""
    discount_rate: float = 0.0

    @property
    def residual(self) -> Money:
        """The tranches' market value at the horizon (Σ the rows)."""
        return _sum((t.residual_value for t in self.tranches), self.nominal_tco.currency)


def _sum(amounts: Iterable[Money], currency: Currency) -> Money:
    return Money(amount=sum((a.amount for a in amounts), Decimal(0)), currency=currency)


def rounded_nominal(
    years: Sequence[ScheduleYear], tranches: Sequence[TrancheLine], currency: Currency
) -> Money:
    """The horizon's nominal cash from the rounded rows (the one rounding rule of a staged plan:
    a year's capex and its opex per month each rounded once, × months exactly)."""
    paid = _sum(
        (Money(amount=y.capex.amount + y.opex_monthly.amount * y.months, currency=currency) for y in years),
        currency,
    )
    return Money(
        amount=paid.amount - _sum((t.residual_value for t in tranches), currency).amount, currency=currency
    )


def _added(
    inst: FleetInstance, tranches: tuple[Tranche, ...], year: int, currency: Currency
) -> tuple[ScheduleItem, ...]:
    out = []
    for t in tranches:
        if t.period != year:
            continue
        o = inst.option(t.option_id)
        out.append(
            ScheduleItem(o.gpu, o.mode, t.gpus, t.servers, o.offer_id, o.server_id, money(t.capex, currency))
        )
    return tuple(out)


def _fleet(inst: FleetInstance, solution: FleetSolution) -> tuple[ScheduleItem, ...]:
    return tuple(
        ScheduleItem(c.gpu, c.mode, c.peak_gpus, c.servers, c.offer_id, c.server_id)
        for c in solution.options
        if c.peak_gpus > 0
    )


def _deployments(solution: FleetSolution) -> tuple[YearDeployment, ...]:
    return tuple(
        YearDeployment(a.workload, use.candidate.label, max(use.replicas, default=0))
        for a in solution.assignments
        for use in a.uses
        if any(use.replicas) or use.pooled
    )


def schedule(
    staged: StagedInstance,
    solutions: tuple[FleetSolution, ...],
    cost: StagedCost,
    discount_rate: float,
    currency: Currency,
) -> StagedSchedule:
    """The schedule of a staged plan priced by ``stage_eval.price_staged``."""
    years = tuple(
        ScheduleYear(
            year=p + 1,
            months=inst.horizon_months,
            added=_added(inst, cost.tranches, p, currency),
            capex=money(cost.periods[p].capex, currency),
            opex_monthly=money(cost.periods[p].paid_monthly, currency),
            fleet=_fleet(inst, sol),
            deployments=_deployments(sol),
        )
        for p, (inst, sol) in enumerate(zip(staged.periods, solutions, strict=True))
    )
    lines = tuple(_tranche_line(staged, t, currency) for t in cost.tranches)
    nominal = rounded_nominal(years, lines, currency)
    return StagedSchedule(
        years=years,
        tranches=lines,
        horizon_tco=nominal if staged.weights is None else money(cost.tco, currency),
        nominal_tco=nominal,
        discount_rate=discount_rate,
    )


def _tranche_line(staged: StagedInstance, t: Tranche, currency: Currency) -> TrancheLine:
    o = staged.periods[t.period].option(t.option_id)
    mu = staged.multiplier(o, t.period)
    # a lease's hardware at its cash price
    hardware, residual = money(t.hardware + t.leased_value, currency), money(t.residual, currency)
    return TrancheLine(
        year=t.period + 1,
        gpu=o.gpu,
        offer_id=o.offer_id,
        server_id=o.server_id,
        gpus=t.gpus,
        servers=t.servers,
        hardware=hardware,
        residual_value=residual,
        depreciation=Money(amount=hardware.amount - residual.amount, currency=currency),
        gpu_purchase=money(mu * o.capex_per_gpu * t.gpus, currency),
        host_purchase=money(mu * o.capex_per_server * t.servers, currency),
        networking=money(t.capex - t.hardware - o.installation_capex(t.gpus, t.servers), currency),
        installation=money(o.installation_capex(t.gpus, t.servers), currency),
        capex=money(t.capex, currency),
    )
