"""Lease offers (issue 32): a lease is priced from its own numbers as the annuity it is (the
payments written out here from the offer's figures, discounted by hand), and the pricebook's
estimates reproduce the annuity formula they are derived from."""

from __future__ import annotations

import pytest

from pricebook.catalog import gpu as catalogue_gpu
from pricebook.loader import load_default
from pricebook.schema import Offer, OfferKind, Pricebook
from solver.domain import Constraints
from solver.pricing.costs import acquisition_options, lease_option

LEASE36 = "hgx-h200-8gpu.lease36.est-wacc"
LEASE72 = "hgx-h200-8gpu.lease72.est-wacc"


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _offer(book: Pricebook, offer_id: str) -> Offer:
    return next(o for o in book.offers if o.id == offer_id)


def test_the_estimates_are_the_annuities_they_claim(book: Pricebook) -> None:
    i = 0.1025 / 12
    p = 312_667
    assert float(_offer(book, LEASE72).price.amount) == pytest.approx(p * i / (1 - (1 + i) ** -72), abs=0.005)
    b = 0.30 * p
    monthly = (p - b * (1 + i) ** -36) * i / (1 - (1 + i) ** -36)
    assert float(_offer(book, LEASE36).price.amount) == pytest.approx(monthly, abs=0.005)
    assert all(o.label.value == "estimate" for o in book.offers if o.kind is OfferKind.LEASE)


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.1025])
def test_a_36_month_lease_costs_the_hand_computed_annuity(book: Pricebook, rate: float) -> None:
    constraints = Constraints(currency="USD", horizon_months=36, include_leases=True)
    option = lease_option(catalogue_gpu(book, "h200-sxm"), _offer(book, LEASE36), book, constraints)
    payment, buyout = 7_889.15, 93_800.10
    assert option.lease_payments_per_server == pytest.approx(
        (12 * payment, 12 * payment, 12 * payment + buyout)
    )
    # Yearly in arrears: 12 P × (1 − (1 + r)^−3) / r + B (1 + r)^−3; 36 P + B undiscounted.
    annuity = 3.0 if rate == 0 else (1 - (1 + rate) ** -3) / rate
    expected = 12 * payment * annuity + buyout * (1 + rate) ** -3
    assert option.lease_cost(1, rate) == pytest.approx(expected)
    assert option.lease_cost(2, rate) == pytest.approx(2 * expected)
    # Used as if bought: no capex, the financed price's market value at 36 months (30 %) is credited.
    assert (option.capex_per_gpu, option.capex_per_server) == (0.0, 0.0)
    assert option.residual_value(8, 1) == pytest.approx(0.30 * 312_667)
    assert option.monthly_per_server == pytest.approx(option.fixed_monthly_per_server + payment)


def test_a_72_month_lease_in_a_36_month_plan_is_settled_at_its_end(book: Pricebook) -> None:
    constraints = Constraints(currency="USD", horizon_months=36, include_leases=True)
    option = lease_option(catalogue_gpu(book, "h200-sxm"), _offer(book, LEASE72), book, constraints)
    payment = 5_831.91
    assert option.lease_payments_per_server == pytest.approx((12 * payment, 12 * payment, 48 * payment))
    assert option.lease_total(1) == pytest.approx(72 * payment)


def test_leases_are_options_only_when_asked(book: Pricebook) -> None:
    base = Constraints(currency="USD", allowed_gpus=("h200-sxm",))
    assert not [o for o in acquisition_options(book, base) if o.leased]


@pytest.mark.parametrize(
    ("rate", "months", "chosen"),
    [
        # Nominal: 36 × 7,889.15 + 93,800.10 = 377,809.50 beats 72 × 5,831.91 = 419,897.52.
        (None, 36, LEASE36),
        (None, 72, LEASE36),
        # At 30 % over 72 months the later payments are worth less: 69,982.92 × annuity(30 %, 6)
        # = 184,947 against 94,669.80 × annuity(30 %, 3) + 93,800.10 / 1.3³ = 214,626.
        (0.30, 72, LEASE72),
    ],
)
def test_one_lease_per_server_model_the_cheapest_today(
    book: Pricebook, rate: float | None, months: int, chosen: str
) -> None:
    asked = Constraints(
        currency="USD",
        allowed_gpus=("h200-sxm",),
        include_leases=True,
        horizon_months=months,
        discount_rate_annual=rate,
    )
    assert [o.offer_id for o in acquisition_options(book, asked) if o.leased] == [chosen]


@pytest.mark.parametrize(("rate", "lease_cheaper"), [(0.085, False), (0.095, True)])
def test_the_72_month_lease_ties_with_buying_near_9_percent(
    book: Pricebook, rate: float, lease_cheaper: bool
) -> None:
    # Over 72 months both own the server at the end and pay the same running costs: the purchase
    # is 312,667 today, the lease 12 × 5,831.91 a year in arrears for 6 years (tie ≈ 9.14 %).
    constraints = Constraints(currency="USD", horizon_months=72, include_leases=True)
    option = lease_option(catalogue_gpu(book, "h200-sxm"), _offer(book, LEASE72), book, constraints)
    by_hand = 12 * 5_831.91 * (1 - (1 + rate) ** -6) / rate
    assert option.lease_cost(1, rate) == pytest.approx(by_hand)
    assert (by_hand < 312_667) is lease_cheaper
    bought = next(
        o
        for o in acquisition_options(book, constraints.model_copy(update={"allowed_gpus": ("h200-sxm",)}))
        if o.server_id == "hgx-h200-8gpu" and not o.leased
    )
    assert bought.capex(8, 1) == pytest.approx(312_667)
    assert bought.fixed_monthly_per_server + 8 * bought.fixed_monthly_per_gpu == pytest.approx(
        option.fixed_monthly_per_server + 8 * option.fixed_monthly_per_gpu
    )


def test_a_lease_taken_mid_year_pays_by_plan_year_and_is_settled_at_the_end(book: Pricebook) -> None:
    # Taken at month 6 of a 36-month plan: 6 instalments in year 1, 12 in year 2, 12 in year 3
    # and the 6 still due after the horizon with the buy-out.
    constraints = Constraints(currency="USD", horizon_months=36, include_leases=True)
    option = lease_option(catalogue_gpu(book, "h200-sxm"), _offer(book, LEASE36), book, constraints)
    payment, buyout = 7_889.15, 93_800.10
    assert option.lease_payments_over(36, 6) == pytest.approx(
        (6 * payment, 12 * payment, 18 * payment + buyout)
    )
    assert option.lease_payments_over(36) == option.lease_payments_per_server
