"""The cost of money, checked against the textbook formulas written out here (not the module's)."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.pricing.discounting import (
    annuity_factor,
    check_rate,
    discount_factor,
    discounted_amount,
    lease_payments_by_year,
    months_to_repay,
    npv,
    opex_month_weight,
    period_weights,
    residual_weight,
    year_months,
    yearly_cash_flows,
)


def test_factors_are_year_end_powers() -> None:
    assert discount_factor(0.10, 0) == 1.0
    assert discount_factor(0.10, 1) == pytest.approx(1 / 1.1)
    assert discount_factor(0.10, 3) == pytest.approx(1 / 1.331)


def test_zero_rate_is_nominal() -> None:
    for months in (1, 11, 12, 30, 36, 60):
        assert opex_month_weight(0.0, months) == months
        assert residual_weight(0.0, months) == 1.0
    flows = yearly_cash_flows(capex=100.0, monthly_opex=2.0, residual=30.0, rate=0.0, horizon_months=30)
    assert [f.nominal for f in flows] == [100.0, 24.0, 24.0, 12.0 - 30.0]
    assert [f.discounted for f in flows] == [f.nominal for f in flows]


def test_partial_last_year_is_discounted_at_its_year_end() -> None:
    assert year_months(30) == (12, 12, 6)
    r = 0.08
    assert opex_month_weight(r, 30) == pytest.approx(12 / 1.08 + 12 / 1.08**2 + 6 / 1.08**3)
    assert residual_weight(r, 30) == pytest.approx(1 / 1.08**3)


def test_monthly_weight_is_twelve_annuities_for_whole_years() -> None:
    # PV of 1 a month over n whole years, paid yearly in arrears: 12 × (1 − (1 + r)^−n) / r.
    for r, n in ((0.1025, 6), (0.045, 5), (0.10, 3)):
        assert opex_month_weight(r, 12 * n) == pytest.approx(12 * (1 - (1 + r) ** -n) / r)
        assert annuity_factor(r, n) == pytest.approx((1 - (1 + r) ** -n) / r)


def test_npv_is_the_discounted_sum_of_the_yearly_flows() -> None:
    r, capex, monthly, residual = 0.10, 1_000_000.0, 20_000.0, 300_000.0
    flows = yearly_cash_flows(capex=capex, monthly_opex=monthly, residual=residual, rate=r, horizon_months=36)
    by_hand = capex + 240_000 / 1.1 + 240_000 / 1.21 + (240_000 - 300_000) / 1.331
    assert npv(flows) == pytest.approx(by_hand)
    # The same NPV from the MIP's coefficients: capex + monthly × weight − residual × weight.
    from_coefficients = capex + monthly * opex_month_weight(r, 36) - residual * residual_weight(r, 36)
    assert from_coefficients == pytest.approx(by_hand)


def test_lease_npv_equals_the_annuity() -> None:
    # 36 instalments of P and a buy-out B at the end of the term, 10 % a year, 48-month plan:
    # yearly instalments 12 P in arrears for 3 years (an annuity) + B at the end of year 3.
    p, b, r = 9_000.0, 50_000.0, 0.10
    by_year = lease_payments_by_year(p, 36, b, 48)
    assert by_year == (12 * p, 12 * p, 12 * p + b, 0.0)
    flows = yearly_cash_flows(
        capex=0.0, monthly_opex=0.0, residual=0.0, rate=r, horizon_months=48, extra_by_year=by_year
    )
    annuity = 12 * p * (1 - 1.1**-3) / 0.1 + b / 1.1**3
    assert npv(flows) == pytest.approx(annuity)


def test_a_lease_outlasting_the_horizon_is_settled_at_its_end() -> None:
    # 24 of 60 instalments fall in the plan; the other 36 and the buy-out are due at its end.
    assert lease_payments_by_year(100.0, 60, 5_000.0, 24) == (1_200.0, 1_200.0 + 3_600.0 + 5_000.0)


def test_period_weights_sum_to_the_monthly_weight() -> None:
    weights = period_weights(0.07, 42)
    assert [w.months for w in weights] == [12, 12, 12, 6]
    assert [w.capex_factor for w in weights] == pytest.approx([1, 1 / 1.07, 1 / 1.07**2, 1 / 1.07**3])
    assert sum(w.opex_weight for w in weights) == pytest.approx(opex_month_weight(0.07, 42))


def test_discounted_amount_rounds_once_to_the_minor_unit() -> None:
    won = Decimal(1)
    assert discounted_amount(Decimal(1_100_000), 0.10, 1, won) == Decimal(1_000_000)
    assert discounted_amount(Decimal(1_000), 0.10, 1, won) == Decimal(909)  # 909.09…
    assert discounted_amount(Decimal("10.005"), 0.0, 3, Decimal("0.01")) == Decimal("10.00")


@pytest.mark.parametrize("rate", [-0.01, 1.0, 2.5, math.inf, math.nan])
def test_bad_rates_are_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="annual rate"):
        check_rate(rate)


@settings(max_examples=200, derandomize=True)
@given(
    low=st.floats(0.0, 0.5),
    step=st.floats(0.001, 0.4),
    months=st.integers(1, 120),
)
def test_a_higher_rate_never_raises_a_weight(low: float, step: float, months: int) -> None:
    high = min(low + step, 0.99)
    assert opex_month_weight(high, months) <= opex_month_weight(low, months) + 1e-9
    assert residual_weight(high, months) <= residual_weight(low, months) + 1e-12


@settings(max_examples=300, derandomize=True)
@given(
    capex=st.floats(1.0, 1e7),
    residual_fraction=st.floats(0.0, 0.95),
    own_monthly=st.floats(0.0, 1e5),
    rent_monthly=st.floats(1.0, 1e6),
    months=st.integers(1, 120),
    low=st.floats(0.0, 0.6),
    step=st.floats(0.001, 0.39),
)
def test_a_higher_rate_never_makes_renting_relatively_dearer(
    *,
    capex: float,
    residual_fraction: float,
    own_monthly: float,
    rent_monthly: float,
    months: int,
    low: float,
    step: float,
) -> None:
    # Buying pays capex now and gets its market value back at the horizon; renting pays every month.
    def costs(rate: float) -> tuple[float, float]:
        buy = yearly_cash_flows(
            capex=capex,
            monthly_opex=own_monthly,
            residual=capex * residual_fraction,
            rate=rate,
            horizon_months=months,
        )
        rent = yearly_cash_flows(
            capex=0.0, monthly_opex=rent_monthly, residual=0.0, rate=rate, horizon_months=months
        )
        return npv(rent), npv(buy)

    # rent/buy at the higher rate ≤ at the lower one (both costs positive), cross-multiplied.
    rent_high, buy_high = costs(low + step)
    rent_low, buy_low = costs(low)
    assert rent_high * buy_low <= rent_low * buy_high * (1 + 1e-9)


def test_months_to_repay() -> None:
    assert months_to_repay(1_000.0, 100.0, 0.0) == 10.0
    # 100 a month at 10 %: year 1 is worth 1,200 / 1.1 = 1,090.91; 1,500 needs 409.09 more at
    # 100 / 1.21 a month in year 2: 4.95 months.
    assert months_to_repay(1_500.0, 100.0, 0.10) == pytest.approx(12 + (1_500 - 1_200 / 1.1) / (100 / 1.21))
    # Never: the whole perpetuity is worth 12 × 100 / 0.1 = 12,000.
    assert months_to_repay(12_001.0, 100.0, 0.10) is None
    assert months_to_repay(1.0, 0.0, 0.10) is None
