"""Leases in multi-year plans (issue 32): a lease may be taken in any year, is used as if owned
from then, and its payments (instalments, then the buy-out, what is still due settled at the
horizon's end) fall in that year and the following ones, discounted at the end of each plan year."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_factories import h200_l40s_request

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, PlanRequest, PricePath
from solver.optimizer.candidates import build_instance
from solver.optimizer.stage_eval import check_staged, price_staged, staged_solutions
from solver.optimizer.stages import StagedInstance, solve_staged
from solver.planner import evaluate, plan
from solver.planner.staged import StagedPlan, solve_checked
from solver.planner.staged_evaluate import fleet_of_schedule
from solver.resolve import resolve

LEASE36 = "hgx-h200-8gpu.lease36.est-wacc"
PAYMENT, BUYOUT = 7_889.15, 93_800.10
"""LEASE36's instalment and buy-out (tests/solver/pricing/test_leases.py derives them)."""
FLAT = (PricePath(gpu="h200-sxm", multipliers=(1.0,) * 3), PricePath(gpu="l40s", multipliers=(1.0,) * 3))


def _request(growth: tuple[float, ...], rate: float, *, leases: bool = True, **more: object) -> PlanRequest:
    constraints = {
        "discount_rate_annual": rate,
        "include_leases": leases,
        "allowed_modes": (AcquisitionMode.BUY,),
        "price_by_year": FLAT,
        **more,
    }
    req = h200_l40s_request(constraints)
    inference = tuple(w.model_copy(update={"demand_by_year": growth}) for w in req.inference)
    return req.model_copy(update={"inference": inference})


def _solved(book: Pricebook, req: PlanRequest) -> StagedPlan:
    resolved = resolve(req, book)
    found = solve_checked(resolved, build_instance(req, book), 30, None)
    assert found.cost is not None
    return found


def test_a_lease_taken_in_year_two_pays_from_year_two_and_is_settled_at_the_end(book: Pricebook) -> None:
    rate = 0.10
    found = _solved(book, _request((1.0, 2.0, 2.0), rate))
    cost = found.cost
    assert cost is not None
    servers = {t.period: t.servers for t in cost.tranches if t.option_id.endswith(LEASE36)}
    assert servers.get(0, 0) > 0 and servers.get(1, 0) > 0, "expected a lease in year 1 and in year 2"
    s1, s2 = servers[0], servers[1]
    # Year 1's lease: 12 P a year, the buy-out with the last. Year 2's: 12 P in year 2, and in
    # year 3 its 12 instalments, the 12 still due after the horizon and the buy-out.
    by_hand = [
        12 * PAYMENT * s1,
        12 * PAYMENT * (s1 + s2),
        (12 * PAYMENT + BUYOUT) * s1 + (24 * PAYMENT + BUYOUT) * s2,
    ]
    assert [p.lease for p in cost.periods] == pytest.approx(by_hand)
    # Instalments in the opex cap's share while the term runs (all three years here).
    assert [p.lease_monthly for p in cost.periods] == pytest.approx(
        [PAYMENT * s1, PAYMENT * (s1 + s2), PAYMENT * (s1 + s2)]
    )
    # The leases' NPV from the annuity formula, a(n) = (1 − v^n) / r, v = 1 / (1 + r).
    v = 1 / (1 + rate)

    def annuity(n: int) -> float:
        return (1 - v**n) / rate

    # year 2's: 12 instalments at the end of years 2 and 3 (v · a(2)), then the 12 still due and
    # the buy-out at the end of year 3
    leases_npv = s1 * (12 * PAYMENT * annuity(3) + BUYOUT * v**3)
    leases_npv += s2 * (12 * PAYMENT * v * annuity(2) + (12 * PAYMENT + BUYOUT) * v**3)
    # The whole NPV: purchases at the start of year p + 1 (end of year p), a year's opex at its
    # end, the leases, less the market value at the horizon.
    rest = sum(v**p * c.capex + v ** (p + 1) * 12 * c.monthly for p, c in enumerate(cost.periods))
    assert cost.tco == pytest.approx(rest + leases_npv - v**3 * cost.residual)
    assert found.result.tco == pytest.approx(cost.tco)


def test_the_plan_shows_the_lease_tranches_and_cash_flows_adding_up(book: Pricebook) -> None:
    result = plan(resolve(_request((1.0, 2.0, 2.0), 0.10), book), time_limit_s=30)
    assert result.schedule is not None and result.cash_flows is not None
    leased = [t for t in result.schedule.tranches if t.offer_id == LEASE36]
    assert [t.year for t in leased] == [1, 2]
    assert all(t.hardware.amount > 0 for t in leased)  # at the lease's cash price
    assert result.cash_flows.npv == result.schedule.horizon_tco
    assert not [w for w in result.warnings if w.startswith("internal")]


def test_evaluating_a_staged_lease_plan_costs_what_the_planner_said(book: Pricebook) -> None:
    resolved = resolve(_request((1.0, 2.0, 2.0), 0.10), book)
    planned = plan(resolved, time_limit_s=30)
    assert planned.schedule is not None
    evaluated = evaluate(fleet_of_schedule(planned.schedule), resolved, time_limit_s=30)
    assert evaluated.feasible, evaluated.messages
    assert evaluated.fleet_horizon_tco == planned.schedule.horizon_tco
    assert evaluated.plan.schedule is not None
    assert [y.added for y in evaluated.plan.schedule.years] == [y.added for y in planned.schedule.years]


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    growth=st.tuples(st.sampled_from([1.0, 1.5, 2.0]), st.sampled_from([1.0, 2.0, 3.0])),
    rate=st.sampled_from([0.0, 0.05, 0.10, 0.25]),
)
def test_allowing_leases_never_makes_a_staged_plan_dearer(
    book: Pricebook, growth: tuple[float, float], rate: float
) -> None:
    years = (1.0, growth[0], growth[0] * growth[1])
    without = _solved(book, _request(years, rate, leases=False))
    with_leases = _solved(book, _request(years, rate))
    assert without.cost is not None and with_leases.cost is not None
    # both proven within the relative gap target (1e-4) of their optimum
    assert with_leases.cost.tco <= without.cost.tco * (1 + 2e-4)


@pytest.mark.parametrize("rate", [0.0, 0.10, 0.25])
def test_one_flat_period_with_leases_is_todays_plan(book: Pricebook, rate: float) -> None:
    today = h200_l40s_request(
        {"discount_rate_annual": rate, "include_leases": True, "allowed_modes": (AcquisitionMode.BUY,)}
    )
    flat = (PricePath(gpu="h200-sxm", multipliers=(1.0,)), PricePath(gpu="l40s", multipliers=(1.0,)))
    one = today.model_copy(
        update={
            "constraints": today.constraints.model_copy(update={"period_months": 36, "price_by_year": flat})
        }
    )
    single = plan(resolve(today, book), time_limit_s=30)
    staged = plan(resolve(one, book), time_limit_s=30)
    assert single.cash_flows is not None and staged.schedule is not None
    assert staged.schedule.horizon_tco.amount == pytest.approx(single.cash_flows.npv.amount, abs=1)
    assert (rate > 0) == any("lease" in f.offer_id for f in single.fleet)  # leased at a positive rate here
    assert [(f.gpu, f.offer_id, f.gpus) for f in staged.fleet] == [
        (f.gpu, f.offer_id, f.gpus) for f in single.fleet
    ]


def test_lease_instalments_count_in_each_years_opex_cap(book: Pricebook) -> None:
    found = _solved(book, _request((1.0, 2.0, 2.0), 0.10))
    cost = found.cost
    assert cost is not None and any(p.lease_monthly > 0 for p in cost.periods)
    used = max(p.monthly + p.lease_monthly for p in cost.periods)
    without_leases = max(p.monthly for p in cost.periods)
    assert without_leases < used - 1

    def capped(limit: float) -> StagedInstance:
        first = found.staged.periods[0]
        first = dataclasses.replace(first, caps=dataclasses.replace(first.caps, monthly_opex_cap=limit))
        return dataclasses.replace(found.staged, periods=(first, *found.staged.periods[1:]))

    # the same plan under a cap its months without the instalments would meet: refused by year
    refused = check_staged(capped(without_leases + 1), found.solutions)
    assert any(v.subject.endswith("monthly opex") for v in refused)
    assert not check_staged(capped(used + 1), found.solutions)
    # the staged MIP under that cap keeps every year's opex with instalments within it
    replanned = solve_staged(capped(used - 1), time_limit_s=30)
    solutions = staged_solutions(capped(used - 1), replanned)
    assert solutions, "expected a plan within the lower cap"
    priced = price_staged(capped(used - 1), solutions)
    assert max(p.monthly + p.lease_monthly for p in priced.periods) <= used - 1 + 1e-6
