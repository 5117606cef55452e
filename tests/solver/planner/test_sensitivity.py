"""Sensitivity (``solver.planner.sensitivity``): thresholds where the mix changes, checked by re-planning."""

from __future__ import annotations

import time

from planner_factories import BARE, request, scaled_book, small_chat_request

from pricebook.schema import OfferKind, Pricebook
from solver.analysis.whatif import mix_of
from solver.domain import SolverOptions
from solver.errors import SolveCancelled
from solver.optimizer.api import solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner import PlanResult, SweepAxis, plan, sweep_request
from solver.planner.sensitivity import sensitivity_rows
from solver.resolve import resolve

PER_GPU_OFFERS = ("rtx-pro-6000-server", "l40s", "h100-pcie")
"""GPU types sold only by the card, so that scaling their offers in the book is exactly the
sensitivity's price multiplier (a server offer would scale its host too)."""


def test_price_sensitivity_threshold_is_where_the_mix_changes(book: Pricebook) -> None:
    assert not any(o.gpu in PER_GPU_OFFERS and o.kind is OfferKind.PURCHASE_SERVER for o in book.offers)
    bare = request(**BARE)
    bare = bare.model_copy(
        update={"constraints": bare.constraints.model_copy(update={"allowed_gpus": PER_GPU_OFFERS})}
    )
    full_plan = plan(
        resolve(request().model_copy(update={"constraints": bare.constraints}), book), time_limit_s=30
    )
    rows = [
        s for s in full_plan.sensitivity if s.subject in PER_GPU_OFFERS and s.change_up_fraction is not None
    ]
    rows += [
        s for s in full_plan.sensitivity if s.subject in PER_GPU_OFFERS and s.change_down_fraction is not None
    ]
    assert rows, "expected at least one price threshold in range"
    row = rows[0]
    up = row.change_up_fraction is not None
    changed_at = row.change_up_fraction if up else row.change_down_fraction
    same_at = row.last_same_up_fraction if up else row.last_same_down_fraction
    assert changed_at is not None and same_at is not None
    assert abs(changed_at - same_at) <= 0.02 + 1e-9  # bisection tolerance
    today = mix_of(full_plan.solution)
    past = plan(resolve(bare, scaled_book(book, row.subject, 1 + changed_at)), time_limit_s=10)
    before = plan(resolve(bare, scaled_book(book, row.subject, 1 + same_at)), time_limit_s=10)
    assert mix_of(past.solution) != today
    assert mix_of(before.solution) == today
    described = row.plan_above if up else row.plan_below
    assert described and all(line.gpu in described for line in past.fleet)


def test_demand_sensitivity_reports_a_row(full_plan: PlanResult) -> None:
    demand = next(s for s in full_plan.sensitivity if s.subject == "demand")
    assert (
        demand.change_down_fraction is not None
        or demand.change_up_fraction is not None
        or "unchanged" in (demand.explanation)
    )


def test_demand_threshold_with_a_daily_profile(book: Pricebook) -> None:
    # Office-hours chat: the optimizer groups hours into buckets and checks every hour. The demand
    # threshold found on the instance must match re-planning the request with scaled demand.
    profile = (1.0,) * 8 + (4.0,) * 10 + (2.0,) * 6
    req = small_chat_request({"compute_baselines": False}, hourly_profile=profile)
    result = plan(resolve(req, book), time_limit_s=30)
    demand = next(s for s in result.sensitivity if s.subject == "demand")
    today = mix_of(result.solution)
    assert demand.change_up_fraction is not None or demand.change_down_fraction is not None
    for changed, same in (
        (demand.change_up_fraction, demand.last_same_up_fraction),
        (demand.change_down_fraction, demand.last_same_down_fraction),
    ):
        if changed is None or same is None:
            continue
        bare = req.model_copy(update={"options": SolverOptions(time_limit_s=10, **BARE)})
        past = plan(
            resolve(sweep_request(bare, SweepAxis.DEMAND_MULTIPLIER, 1 + changed), book), time_limit_s=10
        )
        before = plan(
            resolve(sweep_request(bare, SweepAxis.DEMAND_MULTIPLIER, 1 + same), book), time_limit_s=10
        )
        assert mix_of(past.solution) != today
        assert mix_of(before.solution) == today


def test_a_cancelled_search_keeps_the_finished_rows_and_says_so(book: Pricebook) -> None:
    request_ = resolve(request(**BARE), book).request
    instance = build_instance(request_, book)
    today = solve(instance, time_limit_s=10)
    assert today.has_plan

    def solve_until_demand_moves(variant: FleetInstance, time_limit_s: float) -> FleetSolution:
        if variant.inference != instance.inference:  # a demand search: the call is cancelled
            raise SolveCancelled("cancelled by the test")
        return solve(variant, time_limit_s=time_limit_s)

    deadline = time.monotonic() + 40
    full = sensitivity_rows(instance, today, (), lambda v, t: solve(v, time_limit_s=t), deadline)
    planned = sorted({g for g, _ in mix_of(today)})
    assert [r.subject for r in full][: len(planned)] == planned and full[-1].subject == "demand"
    rows = sensitivity_rows(instance, today, (), solve_until_demand_moves, deadline)
    assert [r.subject for r in rows] == [*(r.subject for r in full[:-1]), "(cancelled)"]
    assert [r.explanation for r in rows[:-1]] == [r.explanation for r in full[:-1]]
