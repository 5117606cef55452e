"""Buy vs rent with a discount rate (issue 32), against the test book's H200 numbers written out
here: the break-even is the utilization at which owning's and renting's values today are equal,
and the payback is discounted (the months of saving whose value today repays the capital)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pricebook.schema import Pricebook
from solver.analysis.breakeven import BuyVsRent, buy_vs_rent, owning_cost, payback_months
from solver.domain import AcquisitionMode, Constraints
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption

BookFactory = Callable[..., Pricebook]
MODES = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)
HGX = "h200-sxm/buy/hgx-h200-8gpu"
# The test book's H200, per GPU of a full HGX server (see test_breakeven.py): $35,000 + $40,000 / 8
# bought, 30 % market value after 36 months; running $350 + $1,375.20 / 8 a month; $0.063 power
# per busy hour; $3.50 an hour on demand.
PURCHASE = 35_000 + 40_000 / 8
RUNNING = 350 + 1_375.2 / 8
POWER, ON_DEMAND = 0.063, 3.5


def _rows(
    make_book: BookFactory, rate: float, utilization: float | None = None, months: int = 36
) -> tuple[BuyVsRent, AcquisitionOption]:
    options = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=months, allowed_modes=MODES)
    )
    return buy_vs_rent(
        "h200-sxm",
        options,
        horizon_months=months,
        currency="USD",
        plan_utilization=utilization,
        discount_rate=rate,
    ), {o.id: o for o in options}[HGX]


def test_the_discounted_break_even_by_hand(make_book: BookFactory) -> None:
    r = 0.10
    row, _ = _rows(make_book, r)
    # Today's value of a month's cost over 3 years paid at each year's end: W = 12 × annuity(10 %, 3).
    w = 12 * (1 - 1.1**-3) / 0.1
    capital = PURCHASE * (1 - 0.30 / 1.1**3)  # the market value comes back at the end of year 3
    fixed = capital / w + RUNNING
    assert row.owned_fixed_monthly_per_gpu == pytest.approx(fixed)
    assert row.break_even_utilization_on_demand == pytest.approx(fixed / (730 * (ON_DEMAND - POWER)))
    assert "discounted at 10.00% a year" in row.verdict


def test_at_the_discounted_break_even_both_sides_are_worth_the_same(make_book: BookFactory) -> None:
    r = 0.08
    row, bought = _rows(make_book, r)
    u = row.break_even_utilization_on_demand
    assert u is not None
    w = 12 / 1.08 + 12 / 1.08**2 + 12 / 1.08**3
    owning_today = PURCHASE - PURCHASE * 0.30 / 1.08**3 + (RUNNING + POWER * 730 * u) * w
    renting_today = ON_DEMAND * 730 * u * w
    assert owning_today == pytest.approx(renting_today, rel=1e-9)
    owning = owning_cost(bought, 36, discount_rate=r)
    assert payback_months(owning, ON_DEMAND, u) == pytest.approx(36, rel=1e-9)
    assert payback_months(owning, ON_DEMAND, min(1.0, u * 1.05)) < 36  # type: ignore[operator]


def test_dearer_money_raises_the_break_even_and_the_payback(make_book: BookFactory) -> None:
    nominal, _ = _rows(make_book, 0.0, 0.9)
    discounted, _ = _rows(make_book, 0.15, 0.9)
    assert nominal.break_even_utilization_on_demand is not None
    assert discounted.break_even_utilization_on_demand is not None
    assert discounted.break_even_utilization_on_demand > nominal.break_even_utilization_on_demand
    assert nominal.payback_months is not None and discounted.payback_months is not None
    assert discounted.payback_months > nominal.payback_months


def test_the_discounted_payback_by_hand(make_book: BookFactory) -> None:
    r = 0.10
    _, bought = _rows(make_book, r)
    owning = owning_cost(bought, 36, discount_rate=r)
    saving = (ON_DEMAND - POWER) * 730 * 1.0 - RUNNING
    capital = PURCHASE * (1 - 0.30 / 1.1**3)
    # Year 1 repays 12 × saving / 1.1; the rest at saving / 1.21 a month in year 2.
    first_year = 12 * saving / 1.1
    assert first_year < capital < first_year + 12 * saving / 1.21
    expected = 12 + (capital - first_year) / (saving / 1.21)
    assert payback_months(owning, ON_DEMAND, 1.0) == pytest.approx(expected)
