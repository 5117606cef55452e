"""Plans with a discount rate (issue 32): the yearly cash flows and the NPV the answer shows are the
formulas of docs/economics.md applied to the plan's own TCO lines (written out here); a zero rate
plans exactly as no rate; the NPV objective finds the lower NPV, the nominal one the lower TCO; and
the dearer money is, the less a plan buys up front."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from planner_factories import h200_l40s_request

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, CostObjective
from solver.planner import PlanResult, plan
from solver.resolve import resolve


def _plan(book: Pricebook, **constraints: object) -> PlanResult:
    return plan(resolve(h200_l40s_request(constraints), book), time_limit_s=20)


def _by_hand(result: PlanResult, rate: float) -> list[tuple[Decimal, Decimal]]:
    """(nominal, discounted) per plan year from the TCO lines: year 0 the capex; year y the monthly
    opex × its months at the end of the year, the last less the residual; ÷ 1.r^y to the cent."""
    assert result.tco is not None
    total = result.tco.total
    months = result.horizon_months
    years = [total.capex.amount]
    while months > 0:
        years.append(total.opex_monthly.amount * min(12, months))
        months -= 12
    years[-1] -= total.residual_value.amount
    one_plus = Decimal(1) + Decimal(repr(rate))
    return [
        (amount, (amount / one_plus**y).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
        for y, amount in enumerate(years)
    ]


def test_npv_is_the_discounted_sum_of_the_reported_yearly_flows(book: Pricebook) -> None:
    result = _plan(book, discount_rate_annual=0.10, horizon_months=30)
    flows = result.cash_flows
    assert flows is not None and result.tco is not None
    expected = _by_hand(result, 0.10)
    assert [(y.nominal.amount, y.discounted.amount) for y in flows.years] == expected
    assert [y.months for y in flows.years] == [0, 12, 12, 6]
    assert flows.npv.amount == sum(d for _, d in expected)
    assert flows.nominal_total.amount == result.tco.total.horizon_total.amount
    assert flows.objective is CostObjective.NPV
    assert all("discounted at 10.00% a year" in row.verdict for row in result.break_even.buy_vs_rent)
    assert not [w for w in result.warnings if w.startswith("internal")]


def test_a_zero_rate_plans_exactly_as_no_rate(book: Pricebook) -> None:
    plain = _plan(book)
    zero = _plan(book, discount_rate_annual=0.0)
    assert plain.cash_flows is None
    assert zero.cash_flows is not None and plain.tco is not None
    assert zero.fleet == plain.fleet
    assert zero.tco == plain.tco
    assert zero.cash_flows.npv.amount == plain.tco.total.horizon_total.amount
    assert all(y.discounted == y.nominal for y in zero.cash_flows.years)


def test_each_objective_wins_on_its_own_measure(book: Pricebook) -> None:
    rate = 0.25
    npv_plan = _plan(book, discount_rate_annual=rate, horizon_months=60)
    nominal_plan = _plan(book, discount_rate_annual=rate, horizon_months=60, objective=CostObjective.NOMINAL)
    assert npv_plan.cash_flows is not None and nominal_plan.cash_flows is not None
    assert npv_plan.tco is not None and nominal_plan.tco is not None
    assert npv_plan.cash_flows.npv.amount <= nominal_plan.cash_flows.npv.amount
    assert nominal_plan.tco.total.horizon_total.amount <= npv_plan.tco.total.horizon_total.amount


@pytest.mark.parametrize(("low", "high"), [(0.0, 0.15), (0.15, 0.5)])
def test_dearer_money_never_buys_more_up_front(book: Pricebook, low: float, high: float) -> None:
    # Cost ÷ W = capex × (1/W − f·d/W) + monthly: the capex's weight grows with the rate (W and d/W
    # fall), so the optimal capex never rises with it (ties aside).
    cheap = _plan(book, discount_rate_annual=low, horizon_months=48)
    dear = _plan(book, discount_rate_annual=high, horizon_months=48)
    assert cheap.tco is not None and dear.tco is not None
    assert dear.tco.total.capex.amount <= cheap.tco.total.capex.amount


def test_buying_leasing_and_renting_are_weighed_on_one_basis(book: Pricebook) -> None:
    # The same rate for all: the plan that may lease never has a higher NPV than one that may only
    # buy and rent, nor than renting alone; here leasing wins (no capex up front at 10 %).
    rate = 0.10
    buy_rent = _plan(book, discount_rate_annual=rate)
    everything = _plan(book, discount_rate_annual=rate, include_leases=True)
    rent = _plan(book, discount_rate_annual=rate, allowed_modes=(AcquisitionMode.ON_DEMAND,))
    npvs = [p.cash_flows.npv.amount for p in (everything, buy_rent, rent)]  # type: ignore[union-attr]
    assert npvs[0] <= npvs[1] and npvs[0] <= npvs[2]
    leased = [line for line in everything.fleet if "lease" in line.offer_id]
    assert leased, "expected the plan to lease at 10 %"
    # One server model is leased or bought through one option, so its fabric is never split away.
    models = [line.server_id for line in everything.fleet if line.server_id is not None]
    assert len(models) == len(set(models))
    if sum(line.servers for line in leased) >= 2:
        assert everything.tco is not None and everything.tco.total.networking.amount > 0
    assert everything.tco is not None
    # The leases' yearly payments add up to the TCO's lease line, and the flows to the TCO.
    assert sum(m.amount for m in everything.lease_by_year) == everything.tco.total.lease.amount
    flows = everything.cash_flows
    assert flows is not None
    assert flows.nominal_total.amount == everything.tco.total.horizon_total.amount
    assert [(n, d) for n, d in _by_hand_with_leases(everything, rate)] == [
        (y.nominal.amount, y.discounted.amount) for y in flows.years
    ]
    assert not [w for w in everything.warnings if w.startswith("internal")]


def _by_hand_with_leases(result: PlanResult, rate: float) -> list[tuple[Decimal, Decimal]]:
    rows = _by_hand(result, rate)
    one_plus = Decimal(1) + Decimal(repr(rate))
    out = [rows[0]]
    for y, ((nominal, _), lease) in enumerate(zip(rows[1:], result.lease_by_year, strict=True), start=1):
        total = nominal + lease.amount
        out.append((total, (total / one_plus**y).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)))
    return out


def test_leased_servers_of_one_model_share_their_fabric(book: Pricebook) -> None:
    # Buy-only at 10 %: 16 H200 lease two HGX servers; through one option, so the two-server fabric
    # is paid (splitting them over two options would price each as a lone node).
    result = _plan(book, discount_rate_annual=0.10, include_leases=True, allowed_modes=(AcquisitionMode.BUY,))
    assert result.tco is not None
    servers = [line for line in result.fleet if line.server_id == "hgx-h200-8gpu"]
    assert len(servers) == 1 and servers[0].servers >= 2
    assert "lease" in servers[0].offer_id
    assert result.tco.total.networking.amount > 0
    assert f"h200-sxm ×{servers[0].gpus} lease" in result.summary


def test_under_npv_the_baselines_are_compared_on_npv(book: Pricebook) -> None:
    options = {"compute_baselines": True, "compute_sensitivity": False}
    req = h200_l40s_request({"discount_rate_annual": 0.25, "horizon_months": 60}, options=options)
    result = plan(resolve(req, book), time_limit_s=20)
    saving = result.baseline_saving
    assert saving is not None and saving.in_npv and result.cash_flows is not None
    # Each baseline's extra cost is its NPV less the plan's; the plan minimised the NPV, so none is
    # negative, and the saving is the best baseline's.
    extras = [b.extra_cost.amount for b in result.baselines if b.extra_cost is not None]
    assert extras and min(extras) >= 0
    assert saving.saving.amount == min(extras)
    assert "in net present value" in result.summary or saving.saving.amount == 0
