"""The cost of money: discount factors, yearly cash flows and their net present value.

Convention (docs/economics.md, "The cost of money"): cash is counted per plan year, the way an
annual NPV table (and Excel's ``NPV(rate, years 1..N) + year 0``) counts it:

- **year 0** is the day the plan starts: what is bought up front is paid then, factor 1;
- **year y** (1 … Y, Y = ceil(H / 12)) holds every monthly payment of its months (12, the last year
  possibly fewer) and, in the last year, the market value credited at the horizon; it is paid at the
  end of the year, factor ``(1 + r) ** -y``. A partial last year is discounted at its year's end
  too, so the factor of a year is always ``(1 + r) ** -year``, whatever the horizon;
- purchases made at the start of year y (a staged plan) fall at the end of year y − 1: factor
  ``(1 + r) ** -(y - 1)``.

At ``r = 0`` every factor is 1 and every weight is the nominal one (``opex_month_weight`` = H,
``residual_weight`` = 1): plans without a rate are exactly the undiscounted ones.

Money here is a float in the request's currency (the MIP's coefficients); ``discounted_amount``
rounds a Decimal amount of the answer once to its minor unit, so an NPV is the sum of the yearly
discounted amounts the answer shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

__all__ = [
    "MAX_DISCOUNT_RATE",
    "MONTHS_PER_YEAR",
    "PeriodWeight",
    "YearlyCashFlow",
    "annuity_factor",
    "check_rate",
    "discount_factor",
    "discounted_amount",
    "lease_payments_by_year",
    "months_to_repay",
    "npv",
    "opex_month_weight",
    "period_weights",
    "plan_years",
    "residual_weight",
    "year_months",
    "yearly_cash_flows",
]

MONTHS_PER_YEAR = 12
MAX_DISCOUNT_RATE = 1.0
"""Rates are below 100 % a year (a WACC or social discount rate; 10.25 % in the SemiAnalysis model)."""


def check_rate(rate: float) -> float:
    """``rate`` if it is a usable annual rate (finite, 0 ≤ rate < 1), else ValueError saying why."""
    if not math.isfinite(rate) or not 0.0 <= rate < MAX_DISCOUNT_RATE:
        msg = f"must be a finite annual rate with 0 <= rate < 1 (0.1 = 10 % a year), got {rate!r}"
        raise ValueError(msg)
    return rate


def plan_years(horizon_months: int) -> int:
    """Plan years of a horizon: ceil(H / 12)."""
    return -(-horizon_months // MONTHS_PER_YEAR)


def year_months(horizon_months: int) -> tuple[int, ...]:
    """Months of the horizon in plan years 1 … Y (the last may be partial): 30 → (12, 12, 6)."""
    return tuple(
        min(MONTHS_PER_YEAR, horizon_months - MONTHS_PER_YEAR * y) for y in range(plan_years(horizon_months))
    )


def discount_factor(rate: float, year: int) -> float:
    """What 1 paid at the end of plan year ``year`` (0 = at the start) is worth today."""
    return float((1.0 + rate) ** -year)


def opex_month_weight(rate: float, horizon_months: int) -> float:
    """Today's value of 1 paid every month of the horizon: Σ_y months_y × factor(y). A monthly
    cost coefficient × this is its discounted horizon cost (H at rate 0)."""
    if rate == 0:
        return float(horizon_months)
    return sum(m * discount_factor(rate, y) for y, m in enumerate(year_months(horizon_months), start=1))


def residual_weight(rate: float, horizon_months: int) -> float:
    """Today's value of 1 credited at the horizon (in the last plan year): 1 at rate 0."""
    return 1.0 if rate == 0 else discount_factor(rate, plan_years(horizon_months))


MAX_PAYBACK_YEARS = 100
"""Discounted paybacks are searched this far (a century: beyond it the answer is "never")."""


def months_to_repay(amount: float, monthly: float, rate: float) -> float | None:
    """Months of saving ``monthly`` until their value today reaches ``amount`` (a discounted
    payback): each month of plan year y is worth ``monthly`` × (1 + r)^−y, and within the year the
    months count linearly. ``amount`` ÷ ``monthly`` at rate 0; None when they never get there."""
    if monthly <= 0:
        return None
    if rate == 0:
        return amount / monthly
    reached = 0.0
    for year in range(1, MAX_PAYBACK_YEARS + 1):
        worth = monthly * discount_factor(rate, year)
        if reached + MONTHS_PER_YEAR * worth >= amount:
            return MONTHS_PER_YEAR * (year - 1) + (amount - reached) / worth
        reached += MONTHS_PER_YEAR * worth
    return None


def annuity_factor(rate: float, years: int) -> float:
    """Today's value of 1 paid at the end of each of ``years`` years: (1 − (1 + r)^−n) / r (n at r = 0)."""
    if rate == 0:
        return float(years)
    return (1.0 - (1.0 + rate) ** -years) / rate


@dataclass(frozen=True, slots=True)
class PeriodWeight:
    """Objective weights of one plan year of a staged plan: a purchase at the year's start costs
    ``capex_factor`` × its price; a monthly cost held through the year ``opex_weight`` × its amount."""

    year: int
    months: int
    capex_factor: float
    """Factor of the start of the year (the end of the previous one): 1 for year 1."""
    opex_weight: float
    """months × the factor of the year's end."""


def period_weights(rate: float, horizon_months: int) -> tuple[PeriodWeight, ...]:
    """Per plan year, the weights of its purchases and monthly costs (Σ opex_weight =
    ``opex_month_weight``)."""
    return tuple(
        PeriodWeight(
            year=y,
            months=m,
            capex_factor=discount_factor(rate, y - 1),
            opex_weight=m * discount_factor(rate, y),
        )
        for y, m in enumerate(year_months(horizon_months), start=1)
    )


@dataclass(frozen=True, slots=True)
class YearlyCashFlow:
    """Cash out (positive) or in (negative) of one plan year, nominal and today's value."""

    year: int
    nominal: float
    discounted: float


def yearly_cash_flows(
    *,
    capex: float,
    monthly_opex: float,
    residual: float,
    rate: float,
    horizon_months: int,
    extra_by_year: Sequence[float] = (),
) -> tuple[YearlyCashFlow, ...]:
    """Year 0: ``capex``; year y: ``monthly_opex`` × its months (+ ``extra_by_year[y − 1]``: payments
    that are not the same every month, e.g. a lease's instalments and buy-out); the last year less
    ``residual`` (the market value credited at the horizon)."""
    months = year_months(horizon_months)
    flows = [YearlyCashFlow(0, capex, capex)]
    for y, m in enumerate(months, start=1):
        nominal = monthly_opex * m + (extra_by_year[y - 1] if y <= len(extra_by_year) else 0.0)
        if y == len(months):
            nominal -= residual
        flows.append(YearlyCashFlow(y, nominal, nominal * discount_factor(rate, y)))
    return tuple(flows)


def npv(flows: Sequence[YearlyCashFlow]) -> float:
    """Net present value of the flows (cost positive): the sum of their discounted amounts."""
    return sum(f.discounted for f in flows)


def lease_payments_by_year(
    monthly_payment: float, term_months: int, buyout: float, horizon_months: int, start_month: int = 0
) -> tuple[float, ...]:
    """A lease's cash per plan year of the horizon when taken at ``start_month`` (0 = the start):
    the instalments of the months of each year while the term runs, and the buy-out in the year the
    term ends. A lease cannot be cancelled: when the term outlasts the horizon, the instalments
    still due and the buy-out are settled at the horizon's end (in the last year), so a plan always
    bears the whole lease and owns the hardware at its end."""
    by_year = [0.0] * plan_years(horizon_months)
    end = min(start_month + term_months, horizon_months)
    for month in range(start_month, end):
        by_year[month // MONTHS_PER_YEAR] += monthly_payment
    outstanding = max(0, start_month + term_months - horizon_months) * monthly_payment
    by_year[(end - 1) // MONTHS_PER_YEAR] += buyout + outstanding
    return tuple(by_year)


def discounted_amount(nominal: Decimal, rate: float, year: int, minor_unit: Decimal) -> Decimal:
    """``nominal`` paid at the end of ``year`` in today's money, rounded once to ``minor_unit``
    (banker's rounding, as every amount of the answer)."""
    if rate == 0 or year == 0:
        return nominal.quantize(minor_unit, rounding=ROUND_HALF_EVEN)
    factor = (Decimal(1) + Decimal(repr(rate))) ** -year
    return (nominal * factor).quantize(minor_unit, rounding=ROUND_HALF_EVEN)
