"""Sensitivity (``solver.planner.sensitivity``): thresholds where the mix changes, checked by re-planning."""

from __future__ import annotations

import time

from planner_factories import BARE, request, scaled_book

from pricebook.schema import OfferKind, Pricebook
from solver.analysis.whatif import mix_of
from solver.errors import SolveCancelled
from solver.optimizer.api import solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner import plan
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


def test_a_cancelled_search_keeps_the_finished_rows_and_says_so(book: Pricebook) -> None:
    request_ = resolve(request(**BARE), book).request
    instance = build_instance(request_, book)
    today = solve(instance, time_limit_s=10)
    assert today.has_plan

    deadline = time.monotonic() + 40
    full = sensitivity_rows(instance, today, (), lambda v, t: solve(v, time_limit_s=t), deadline)
    planned = sorted({g for g, _ in mix_of(today)})
    assert [r.subject for r in full][: len(planned)] == planned
    assert all("mix changes" in r.parameter for r in full)
    last = full[-1].subject
    today_prices = [o for o in instance.options if o.gpu == last]

    def solve_until_the_last_price_moves(variant: FleetInstance, time_limit_s: float) -> FleetSolution:
        if [o for o in variant.options if o.gpu == last] != today_prices:  # the call is cancelled
            raise SolveCancelled("cancelled by the test")
        return solve(variant, time_limit_s=time_limit_s)

    rows = sensitivity_rows(instance, today, (), solve_until_the_last_price_moves, deadline)
    assert [r.subject for r in rows] == [*(r.subject for r in full[:-1]), "(cancelled)"]
    assert [r.explanation for r in rows[:-1]] == [r.explanation for r in full[:-1]]
