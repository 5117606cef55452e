"""The plan's cash by plan year and its net present value (``constraints.discount_rate_annual``).

Year 0 is the purchases (the TCO's capex); plan year y is the monthly opex × its months and the
leases' payments of the year, the last year less the market value credited at the horizon
(``solver.pricing.discounting``). The amounts
are the TCO's rounded lines, so the nominal years add up to the horizon TCO exactly; each year's
discounted amount is rounded once to the minor unit and the NPV is their sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pricebook.schema import Currency, Money
from solver.analysis.tco import FleetLine, TcoReport, minor_unit, to_money
from solver.domain import CostObjective
from solver.pricing.discounting import discounted_amount, year_months

__all__ = ["CashFlowYear", "CashFlows", "cash_flows", "lease_by_year", "yearly_flows"]


@dataclass(frozen=True, slots=True)
class CashFlowYear:
    year: int
    """0 = the start (purchases); y = the end of the y-th twelve months."""
    months: int
    """Months of the horizon in the year (0 for year 0)."""
    nominal: Money
    discounted: Money


@dataclass(frozen=True, slots=True)
class CashFlows:
    rate: float
    objective: CostObjective
    """What the plan minimised."""
    years: tuple[CashFlowYear, ...]
    npv: Money
    """Σ discounted."""
    nominal_total: Money
    """Σ nominal: the horizon TCO."""


def lease_by_year(lines: Sequence[FleetLine], currency: Currency) -> tuple[Money, ...]:
    """The leases' payments per plan year (1 …), each line's year rounded once to the minor unit;
    () without a lease. They add up to the TCO's lease line (each line's years are whole minor
    units: ``AcquisitionOption.lease_payments_per_server``)."""
    leased = [line for line in lines if line.option.leased]
    if not leased:
        return ()
    zero = Decimal(0).quantize(minor_unit(currency))

    def year(y: int) -> Money:
        paid = (x.option.lease_payments_per_server[y] * x.servers for x in leased)
        amounts = (to_money(amount, currency).amount for amount in paid)
        return Money(amount=sum(amounts, zero), currency=currency)

    return tuple(year(y) for y in range(len(leased[0].option.lease_payments_per_server)))


def cash_flows(
    tco: TcoReport, rate: float, objective: CostObjective, leases: Sequence[Money] = ()
) -> CashFlows:
    """``tco``'s cash per plan year, nominal and discounted at ``rate`` (a year); ``leases``: the
    leases' payments per plan year (``lease_by_year``)."""
    months = year_months(tco.horizon_months)
    nominal = [tco.capex.amount]
    nominal += [tco.opex_monthly.amount * m for m in months]
    for y, lease in enumerate(leases, start=1):
        nominal[y] += lease.amount
    nominal[-1] -= tco.residual_value.amount
    return yearly_flows(nominal, months, rate, objective, tco.currency)


def yearly_flows(
    nominal: Sequence[Decimal],
    months: Sequence[int],
    rate: float,
    objective: CostObjective,
    currency: Currency,
) -> CashFlows:
    """Cash flows of the nominal amounts of years 0 … Y (year y has ``months[y − 1]`` months), each
    discounted at ``rate`` and rounded once to the minor unit."""
    unit = minor_unit(currency)
    years = tuple(
        CashFlowYear(
            year=y,
            months=0 if y == 0 else months[y - 1],
            nominal=Money(amount=amount, currency=currency),
            discounted=Money(amount=discounted_amount(amount, rate, y, unit), currency=currency),
        )
        for y, amount in enumerate(nominal)
    )
    zero = Decimal(0).quantize(unit)
    return CashFlows(
        rate=rate,
        objective=objective,
        years=years,
        npv=Money(amount=sum((y.discounted.amount for y in years), zero), currency=currency),
        nominal_total=Money(amount=sum((y.nominal.amount for y in years), zero), currency=currency),
    )
