"""Cash flow by year over the horizon: the purchase in year 1, each monthly cost line × the months of
each year, the residual value credited in the last year. The rows are the plan's rounded TCO lines,
so the years add up to the horizon TCO exactly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pricebook.schema import Money
from report.data import Economics, QuoteData
from report.schedule import Schedule
from solver.pricing.discounting import year_months

ROWS = (
    "capex",
    "support",
    "power",
    "colocation",
    "software",
    "storage",
    "reserved",
    "on_demand",
    "lease",
    "residual",
)
"""Cash-flow rows in report order (label keys ``cf.<row>``)."""


@dataclass(frozen=True, slots=True)
class CashFlow:
    years: tuple[int, ...]
    months: tuple[int, ...]
    """Months of the horizon in each year (the last year may be partial)."""
    rows: tuple[tuple[str, tuple[Money, ...]], ...]
    """(row, amount per year); the residual is negative (money back)."""
    totals: tuple[Money, ...]
    total: Money


def money_sum(amounts: Sequence[Money]) -> Money:
    """Sum of amounts of one currency (the first's)."""
    total = sum((a.amount for a in amounts[1:]), amounts[0].amount)
    return Money(amount=total, currency=amounts[0].currency)


def cash_flow(economics: Economics, horizon_months: int) -> CashFlow:
    currency = economics.capex.currency
    months = year_months(horizon_months)
    years = len(months)
    monthly = economics.opex.by_row()
    zero = Decimal(0) * economics.capex.amount  # keeps the currency's minor-unit exponent

    def money(amount: Decimal) -> Money:
        return Money(amount=amount, currency=currency)

    rows: list[tuple[str, tuple[Money, ...]]] = []
    for row in ROWS:
        if row == "capex":
            amounts = [economics.capex.amount if y == 0 else zero for y in range(years)]
        elif row == "residual":
            amounts = [-economics.residual_value.amount if y == years - 1 else zero for y in range(years)]
        elif row == "lease":
            leases = [m.amount for m in economics.lease_by_year]
            amounts = [leases[y] if y < len(leases) else zero for y in range(years)]
        else:
            amounts = [monthly[row].amount * m for m in months]
        rows.append((row, tuple(money(a) for a in amounts)))
    totals = tuple(money(sum((r[1][y].amount for r in rows), zero)) for y in range(years))
    return CashFlow(
        years=tuple(range(1, years + 1)),
        months=months,
        rows=tuple(rows),
        totals=totals,
        total=money(sum((t.amount for t in totals), zero)),
    )


STAGED_ROWS = ("capex", "opex", "residual")
"""A multi-year plan's cash-flow rows: each year's purchases, its opex, the residual value."""


def staged_cash_flow(schedule: Schedule, residual: Money) -> CashFlow:
    """A multi-year plan's cash by year from its schedule's rows: the year's capex (paid at its
    start), its opex per month × its months, the residual value credited in the last year."""
    years = schedule.years
    currency = residual.currency
    zero = Decimal(0) * residual.amount
    last = len(years) - 1
    rows = (
        ("capex", tuple(y.capex for y in years)),
        ("opex", tuple(Money(amount=y.opex_monthly.amount * y.months, currency=currency) for y in years)),
        (
            "residual",
            tuple(
                Money(amount=-residual.amount if i == last else zero, currency=currency)
                for i in range(len(years))
            ),
        ),
    )
    totals = tuple(money_sum([r[1][i] for r in rows]) for i in range(len(years)))
    return CashFlow(
        years=tuple(y.year for y in years),
        months=tuple(y.months for y in years),
        rows=rows,
        totals=totals,
        total=money_sum(totals),
    )


def quote_cash_flow(quote: QuoteData) -> CashFlow:
    """The quote's cash flow by year: a multi-year plan's from its schedule, else the plan's lines."""
    econ = quote.economics
    assert econ is not None
    if quote.schedule is not None:
        return staged_cash_flow(quote.schedule, econ.residual_value)
    return cash_flow(econ, quote.horizon_months)
