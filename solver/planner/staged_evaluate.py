"""EvaluateFleet for a multi-year fleet: lines with ``from_year`` (and, rented, ``until_year``).

Each year's fleet in service is pinned as EvaluateFleet pins a fleet (held GPUs exactly, on-demand
GPUs at most), the staged MIP (``solver.optimizer.stages``) finds the cheapest use of it, and the
plan is priced and checked by the same functions as the planner's (``stage_eval.price_staged``,
``check_staged``): the same fleet costs the same as the planner said. A fleet that cannot serve a
year's demand is named by year.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict

from solver.domain import Fleet, FleetItem
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer.cancel import CancelToken
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.driver import solve_mip
from solver.optimizer.instance import Caps, FleetInstance
from solver.optimizer.results import SolveStatus
from solver.optimizer.solution import empty_solution
from solver.optimizer.stage_eval import check_staged, price_staged, staged_solutions
from solver.optimizer.stages import StagedInstance, solve_staged
from solver.periods import period_months
from solver.planner.results import EvaluationResult
from solver.planner.schedule import StagedSchedule
from solver.planner.staged import assembled, staged_answer, staged_instance
from solver.resolve import ResolvedRequest


def is_staged_fleet(fleet: Fleet) -> bool:
    return any(i.from_year > 1 or i.until_year is not None for i in fleet.items)


def fleet_in_year(fleet: Fleet, year: int) -> Fleet | None:
    """The lines in service in ``year`` (1 = the first), alike lines merged; None = none."""
    counts: dict[tuple[object, ...], int] = defaultdict(int)
    for i in fleet.items:
        if i.from_year <= year and (i.until_year is None or year <= i.until_year):
            counts[(i.gpu, i.mode, i.owned, i.server, i.offer)] += i.count
    if not counts:
        return None
    items = tuple(
        FleetItem(gpu=g, mode=m, owned=o, server=s, offer=f, count=n) for (g, m, o, s, f), n in counts.items()
    )
    return Fleet(items=items)


def fleet_of_schedule(plan: StagedSchedule) -> Fleet:
    """A staged plan's fleet as EvaluateFleet takes it: each tranche from its year, each year's
    rentals in that year only."""
    items = [
        FleetItem(
            gpu=i.gpu, mode=i.mode, count=i.gpus, server=i.server_id, offer=i.offer_id, from_year=y.year
        )
        for y in plan.years
        for i in y.added
        if i.gpus > 0
    ]
    items += [
        FleetItem(gpu=i.gpu, mode=i.mode, count=i.gpus, offer=i.offer_id, from_year=y.year, until_year=y.year)
        for y in plan.years
        for i in y.fleet
        if i.mode.value != "buy"
    ]
    return Fleet(items=tuple(items))


def check_years(fleet: Fleet, periods: int) -> None:
    """Every line's years lie within the plan's periods (``InvalidRequest`` naming the field)."""
    violations = [
        FieldViolation(f"fleet.items[{i}].{name}", f"is after the last period ({periods})")
        for i, item in enumerate(fleet.items)
        for name, year in (("from_year", item.from_year), ("until_year", item.until_year))
        if year is not None and year > periods
    ]
    if violations:
        raise InvalidRequest(violations)


def _bases(fleet: Fleet, resolved: ResolvedRequest) -> tuple[FleetInstance, ...]:
    request, book = resolved.request, resolved.book
    check_years(fleet, len(period_months(request)))
    free = build_instance(request, book)
    out = []
    for year in range(1, len(period_months(request)) + 1):
        in_service = fleet_in_year(fleet, year)
        if in_service is None:
            out.append(dataclasses.replace(free, fixed_fleet=()))
        else:
            out.append(build_instance(request, book, fleet=in_service))
    return tuple(out)


def _years_not_served(staged: StagedInstance, time_limit_s: float) -> list[str]:
    """Years whose own fleet cannot serve their demand (site caps kept, money caps dropped)."""
    out = []
    for p, inst in enumerate(staged.periods):
        caps = Caps(power_cap_kw=inst.caps.power_cap_kw, rack_units_cap=inst.caps.rack_units_cap)
        alone = solve_mip(dataclasses.replace(inst, caps=caps), time_limit_s=time_limit_s)
        if alone.stats.status is SolveStatus.INFEASIBLE:
            out.append(f"year {p + 1}: the fleet in service does not serve that year's demand at its SLAs")
    return out or ["the fleet serves every year alone, but not within the capex budget or the opex cap"]


def evaluate_staged(
    fleet: Fleet, resolved: ResolvedRequest, *, time_limit_s: float, cancel: CancelToken | None = None
) -> EvaluationResult:
    """How a multi-year fleet serves each year, and what it costs (the module docstring)."""
    started = time.monotonic()
    request, book = resolved.request, resolved.book
    staged = staged_instance(request, book, _bases(fleet, resolved))
    result = solve_staged(
        staged, time_limit_s=time_limit_s, relative_gap=request.options.relative_gap, cancel=cancel
    )
    solutions = staged_solutions(staged, result)
    last = staged.periods[-1]
    messages = (
        _years_not_served(staged, time_limit_s / 4)
        if not solutions
        else [
            f"{v.subject}: {v.message}"
            for v in check_staged(staged, solutions, perf_capacity_checker(request, book))
        ]
    )
    if messages:
        plan = assembled(resolved, last, empty_solution(last, result.stats), started)
        plan = dataclasses.replace(
            plan, status=SolveStatus.INFEASIBLE, summary="Not feasible: " + "; ".join(messages)
        )
        return EvaluationResult(False, plan, (), None, None, None, tuple(messages))
    cost = price_staged(staged, solutions)
    plan = staged_answer(resolved, staged, solutions, cost, started)
    assert plan.schedule is not None
    return EvaluationResult(True, plan, (), plan.schedule.horizon_tco, None, None, ())
