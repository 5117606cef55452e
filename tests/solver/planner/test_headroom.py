"""A plan's headroom (``solver.planner.headroom``), checked against EvaluateFleet alone: the fixed
fleet serves demand × (1 + growth) and not one point more; each workload alike; the addition,
added to the fleet, serves the next step."""

from __future__ import annotations

from planner_factories import BARE

from pricebook.schema import Pricebook
from solver.domain import Fleet, FleetItem, PlanRequest, SolverOptions
from solver.planner import PlanResult, evaluate
from solver.resolve import resolve

POINT = 0.01
"""One percentage point past the headroom (the search narrows it to half a point)."""


def _scaled(request: PlanRequest, factor: float, only: str | None = None) -> PlanRequest:
    inference = tuple(
        w.model_copy(update={"daily_tokens": w.daily_tokens * factor})
        if (only is None or w.name == only) and w.daily_tokens is not None
        else w
        for w in request.inference
    )
    return request.model_copy(
        update={"inference": inference, "options": SolverOptions(time_limit_s=20, **BARE)}
    )


def _serves(book: Pricebook, request: PlanRequest, fleet: Fleet) -> bool:
    return evaluate(fleet, resolve(request, book), compare_with_optimal=False).feasible


def _grown(fleet: Fleet, added: tuple[FleetItem, ...]) -> Fleet:
    return Fleet(items=(*fleet.items, *added))


def _request_of(full_plan: PlanResult, book: Pricebook) -> PlanRequest:
    from planner_factories import request  # noqa: PLC0415 (the full plan's own request)

    return request()


def test_overall_headroom_is_the_largest_growth_the_fleet_serves(
    book: Pricebook, full_plan: PlanResult
) -> None:
    h = full_plan.headroom
    assert h is not None
    fleet = full_plan.solution.fleet()
    assert fleet is not None
    req = _request_of(full_plan, book)
    assert _serves(book, _scaled(req, 1 + h.demand_growth_served), fleet)
    if not h.at_least:
        assert not _serves(book, _scaled(req, 1 + h.demand_growth_served + POINT), fleet)


def test_each_workloads_headroom_is_its_own(book: Pricebook, full_plan: PlanResult) -> None:
    h = full_plan.headroom
    assert h is not None
    fleet = full_plan.solution.fleet()
    assert fleet is not None
    req = _request_of(full_plan, book)
    assert [w.workload for w in h.workloads] == [w.name for w in req.inference]
    for w in h.workloads:
        assert w.demand_growth_served >= h.demand_growth_served - 1e-9
        assert _serves(book, _scaled(req, 1 + w.demand_growth_served, only=w.workload), fleet)
        if not w.at_least:
            grown = _scaled(req, 1 + w.demand_growth_served + POINT, only=w.workload)
            assert not _serves(book, grown, fleet)


def test_the_addition_serves_the_next_step(book: Pricebook, full_plan: PlanResult) -> None:
    h = full_plan.headroom
    assert h is not None and h.next_step_growth is not None
    fleet = full_plan.solution.fleet()
    assert fleet is not None
    req = _scaled(_request_of(full_plan, book), 1 + h.next_step_growth)
    assert h.addition, h.note
    assert not _serves(book, req, fleet)
    assert _serves(book, req, _grown(fleet, h.added))
    assert all(f"{i.count} × {i.gpu} {i.mode.value}" in h.addition for i in h.added)
    assert h.addition_extra_tco is not None and h.addition_extra_tco.amount > 0
