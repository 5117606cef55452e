"""A staged plan priced and checked from its counts alone (independent of the MIP's expressions).

``price_staged`` prices a plan given as one ``FleetSolution`` per period (the fleet in service
and its use in that period) by the rules of ``solver.optimizer.stages``' module docstring:
tranches are the growth of each bought option between periods, each priced at its period's
multiplier with its own support and its own market value at the horizon; everything else is paid
period by period at that period's prices. ``check_staged`` verifies each period independently
(``evaluate.check_solution`` on I_p: demand at the SLAs, GPUs, servers, power and racks) and the
staged caps (the capex budget over the horizon, the monthly opex cap in every period) and that
bought hardware stays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from solver.optimizer.evaluate import REL_TOL, CapacityOf, check_solution
from solver.optimizer.instance import Caps
from solver.optimizer.model import MipResult
from solver.optimizer.results import ChosenOption, FleetSolution, Violation, ViolationKind
from solver.optimizer.solution import build_solution
from solver.optimizer.stages import StagedInstance, StagedResult, host_support_monthly, is_bought
from solver.pricing.options import AcquisitionOption


@dataclass(frozen=True, slots=True)
class Tranche:
    """Hardware bought through one option at the start of one period."""

    period: int
    option_id: str
    gpus: int
    servers: int
    hardware: float
    """GPUs and hosts at the period's price (the part with a market value)."""
    capex: float
    """Hardware, installation and the fabric the tranche adds."""
    residual: float
    """Its market value at the end of the horizon."""
    monthly: float
    """What it costs every month it is held (support at its price, colocation, idle power)."""
    leased_value: float = 0.0
    """A lease tranche: its servers' cash price (the value its market value is reckoned from)."""
    lease: tuple[tuple[int, float], ...] = ()
    """A lease tranche: (plan year − 1 of the horizon, its servers' lease payments that year)."""
    lease_monthly: float = 0.0
    """A lease tranche: its servers' instalment a month while the term runs."""

    @property
    def depreciation(self) -> float:
        """Value lost by the end of the horizon (hardware price − market value then)."""
        return self.hardware + self.leased_value - self.residual


@dataclass(frozen=True, slots=True)
class PeriodCost:
    period: int
    months: int
    capex: float
    """Paid at the start of the period (its tranches; the request's one-off costs in the first)."""
    monthly: float
    """Paid every month of the period (tranches held, rentals, busy power, the rest)."""
    lease: float = 0.0
    """Lease payments of the period (instalments and buy-outs; the plan years starting in it)."""
    lease_monthly: float = 0.0
    """Lease instalments a month of the leases running in the period (the opex cap's share)."""

    @property
    def nominal(self) -> float:
        return self.capex + self.monthly * self.months + self.lease

    @property
    def paid_monthly(self) -> float:
        """Everything paid in the period as a monthly average (lease payments spread)."""
        return self.monthly + self.lease / self.months


@dataclass(frozen=True, slots=True)
class StagedCost:
    tranches: tuple[Tranche, ...]
    periods: tuple[PeriodCost, ...]
    residual: float
    """Market value of every tranche at the horizon."""
    tco: float
    """Weighted TCO (nominal weights: the sum of the periods less the residual)."""

    @property
    def nominal_tco(self) -> float:
        return sum(p.nominal for p in self.periods) - self.residual


def staged_solutions(staged: StagedInstance, result: StagedResult) -> tuple[FleetSolution, ...]:
    """One ``FleetSolution`` per period from the staged MIP's values (empty without a plan)."""
    if result.values is None:
        return ()
    return tuple(
        build_solution(inst, MipResult(result.stats, values))
        for inst, values in zip(staged.periods, result.values, strict=True)
    )


def _held(solution: FleetSolution, option_id: str) -> ChosenOption | None:
    return next((c for c in solution.options if c.option_id == option_id), None)


def _tranche(
    staged: StagedInstance, o: AcquisitionOption, q: int, before: tuple[int, int], now: tuple[int, int]
) -> Tranche | None:
    gpus, servers = now[0] - before[0], now[1] - before[1]
    fabric = o.network_capex(now[1]) - o.network_capex(before[1])
    if gpus == 0 and servers == 0 and fabric == 0:
        return None
    mu = staged.multiplier(o, q)
    hardware = mu * o.hardware_capex(gpus, servers)
    per_gpu = o.fixed_monthly_per_gpu + (mu - 1.0) * o.support_monthly_per_gpu
    per_srv = o.fixed_monthly_per_server + (mu - 1.0) * host_support_monthly(o)
    leased = o.lease_value_per_server * servers
    return Tranche(
        period=q,
        option_id=o.id,
        gpus=gpus,
        servers=servers,
        hardware=hardware,
        capex=hardware + o.installation_capex(gpus, servers) + fabric,
        residual=staged.residual_of(o, q) * (hardware + leased),
        monthly=per_gpu * gpus + per_srv * servers,
        leased_value=leased,
        lease=tuple((y, amount * servers) for y, amount in staged.lease_years(o, q)) if o.leased else (),
        lease_monthly=o.lease_monthly_per_server * servers,
    )


def _bought_counts(
    staged: StagedInstance, solutions: tuple[FleetSolution, ...]
) -> Iterator[tuple[int, AcquisitionOption, tuple[int, int], tuple[int, int]]]:
    """(period, bought option, (GPUs, servers) held the period before, held in the period)."""
    held: dict[str, tuple[int, int]] = {}
    for p, (inst, sol) in enumerate(zip(staged.periods, solutions, strict=True)):
        for o in inst.options:
            if not is_bought(o):
                continue
            c = _held(sol, o.id)
            now = (c.gpus, c.servers) if c is not None else (0, 0)
            yield p, o, held.get(o.id, (0, 0)), now
            held[o.id] = now


def tranches(staged: StagedInstance, solutions: tuple[FleetSolution, ...]) -> tuple[Tranche, ...]:
    """Every tranche of the plan: the growth of each bought option from period to period."""
    found = (_tranche(staged, o, q, before, now) for q, o, before, now in _bought_counts(staged, solutions))
    return tuple(t for t in found if t is not None)


def _period_monthly(staged: StagedInstance, p: int, solution: FleetSolution, held: list[Tranche]) -> float:
    inst = staged.periods[p]
    monthly = inst.extra_monthly + sum(t.monthly for t in held)
    for c in solution.options:
        o = inst.option(c.option_id)
        monthly += o.busy_hourly_per_gpu * c.busy_gpu_hours_per_month
        if not is_bought(o):
            monthly += o.fixed_monthly_per_gpu * c.gpus + o.fixed_monthly_per_server * c.servers
    return monthly


def _option_of(staged: StagedInstance, t: Tranche) -> AcquisitionOption:
    return staged.periods[t.period].option(t.option_id)


def price_staged(staged: StagedInstance, solutions: tuple[FleetSolution, ...]) -> StagedCost:
    """The plan's tranches, cost per period and weighted TCO (the module docstring)."""
    parts = tranches(staged, solutions)
    w = staged.weights_or_nominal()
    periods = []
    tco = 0.0
    for p, sol in enumerate(solutions):
        capex = sum(t.capex for t in parts if t.period == p)
        if p == 0:
            capex += staged.first.extra_capex
        held = [t for t in parts if t.period <= p]
        lease = sum(a for t in parts for y, a in t.lease if staged.period_of_year(y) == p)
        instalments = sum(
            t.lease_monthly
            for t in held
            if t.lease and staged.lease_running(_option_of(staged, t), t.period, p)
        )
        months = staged.periods[p].horizon_months
        cost = PeriodCost(p, months, capex, _period_monthly(staged, p, sol, held), lease, instalments)
        periods.append(cost)
        tco += w.at_start[p] * cost.capex + cost.months * w.per_month[p] * cost.monthly
    tco += sum(a * w.at_year_end(y) for t in parts for y, a in t.lease)
    residual = sum(t.residual for t in parts)
    return StagedCost(parts, tuple(periods), residual, tco - w.at_horizon * residual)


def check_staged(
    staged: StagedInstance, solutions: tuple[FleetSolution, ...], capacity_of: CapacityOf | None = None
) -> list[Violation]:
    """Every violated constraint of the staged plan, each period's prefixed "year N: "."""
    out: list[Violation] = []
    caps = staged.first.caps
    for p, (inst, sol) in enumerate(zip(staged.periods, solutions, strict=True)):
        own_caps = Caps(power_cap_kw=caps.power_cap_kw, rack_units_cap=caps.rack_units_cap)
        found = check_solution(dataclasses.replace(inst, caps=own_caps), sol, capacity_of)
        out += [dataclasses.replace(v, subject=f"year {p + 1}: {v.subject}") for v in found]
    out += _shrinking(staged, solutions)
    cost = price_staged(staged, solutions)
    total = sum(p.capex for p in cost.periods)
    if caps.capex_budget is not None and total > caps.capex_budget * (1 + REL_TOL) + 1e-9:
        out.append(
            Violation(ViolationKind.CAP, "capex budget", f"uses {total:.6g} > cap {caps.capex_budget:.6g}")
        )
    limit = caps.monthly_opex_cap
    for period in cost.periods:
        used = period.monthly + period.lease_monthly
        if limit is not None and used > limit * (1 + REL_TOL) + 1e-9:
            message = f"uses {used:.6g} > cap {limit:.6g}"
            out.append(Violation(ViolationKind.CAP, f"year {period.period + 1}: monthly opex", message))
    return out


def _shrinking(staged: StagedInstance, solutions: tuple[FleetSolution, ...]) -> list[Violation]:
    """Bought hardware stays: no bought option holds fewer GPUs or servers than a period before."""
    return [
        Violation(
            ViolationKind.COUNT,
            f"year {p + 1}: {o.id}",
            f"holds {now[0]} GPUs in {now[1]} servers, fewer than the {before[0]} in {before[1]} bought",
        )
        for p, o, before, now in _bought_counts(staged, solutions)
        if now[0] < before[0] or now[1] < before[1]
    ]
