"""A baseline cheaper than the main solve's plan becomes the plan (``solver.planner.incumbent``).

The plans compared are real solves of the Korean public bid (``examples/bids/``): the single-type
baselines are solved as the planner solves them; a dearer feasible fleet of the full request stands
in for a main solve stopped early. Costs are read from the plans' own TCO reports, the check of the
full request from ``evaluate.check_solution``."""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from pathlib import Path

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook import load_default
from service.convert.scenario import scenario_request
from solver.analysis.whatif import BaselineRun, run_baselines
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution
from solver.optimizer.instance import CountLimit, FleetInstance
from solver.optimizer.results import SolveStatus
from solver.planner.assemble import solution_tco
from solver.planner.incumbent import cheaper_baseline_as_plan
from solver.planner.plan import ReSolver
from solver.resolve import ResolvedRequest

BID = Path(__file__).resolve().parents[3] / "examples" / "bids" / "kr_public_rag_bid.yaml"


@functools.cache
def _bid() -> tuple[ResolvedRequest, FleetInstance, ReSolver, tuple[BaselineRun, ...]]:
    resolved = scenario_request(load_scenario(BID, api.PlanFleetRequest), load_default())
    instance = build_instance(resolved.request, resolved.book)
    re_solve = ReSolver(resolved.request, resolved.book, None)
    runs = run_baselines(instance, resolved.allowed_gpus, re_solve, deadline=time.monotonic() + 60)
    return resolved, instance, re_solve, runs


def _total(run: BaselineRun, instance: FleetInstance) -> float:
    assert run.solution is not None
    return float(solution_tco(run.solution, instance, "KRW").total.horizon_total.amount)


def test_the_cheapest_verified_baseline_replaces_a_dearer_plan_with_the_main_bound() -> None:
    _, instance, re_solve, runs = _bid()
    feasible = sorted((r for r in runs if r.feasible), key=lambda r: _total(r, instance))
    assert len(feasible) >= 2, [(r.gpu, r.reason) for r in runs]
    cheapest, dearer = feasible[0], feasible[-1]
    assert dearer.solution is not None and cheapest.solution is not None
    assert _total(cheapest, instance) < _total(dearer, instance)
    bound = _total(cheapest, instance) * 0.9  # a proven bound of a solve stopped early
    stats = replace(
        dearer.solution.stats, status=SolveStatus.FEASIBLE, best_bound=bound, relative_gap_target=1e-4
    )
    main = replace(dearer.solution, status=SolveStatus.FEASIBLE, stats=stats)
    plan = cheaper_baseline_as_plan(instance, main, runs, re_solve.capacity_of, "KRW")
    assert plan.options == cheapest.solution.options
    assert not check_solution(instance, plan, re_solve.capacity_of)
    tco = cheapest.solution.cost.total if cheapest.solution.cost else 0.0
    assert plan.stats.objective == tco and plan.stats.best_bound == bound
    assert plan.stats.gap is not None and abs(plan.stats.gap - (tco - bound) / tco) < 1e-12
    assert plan.status is SolveStatus.FEASIBLE  # 10 % from its bound: not proven


def test_a_plan_no_baseline_beats_stays_and_an_unproven_gap_stays_unknown() -> None:
    _, instance, re_solve, runs = _bid()
    cheapest = min((r for r in runs if r.feasible), key=lambda r: _total(r, instance))
    assert cheapest.solution is not None
    assert cheaper_baseline_as_plan(instance, cheapest.solution, runs, re_solve.capacity_of, "KRW") is (
        cheapest.solution
    )


def test_a_baseline_that_breaks_the_full_request_is_not_taken() -> None:
    """A baseline fleet is checked against the full instance: with a count bound the cheaper
    baseline's fleet breaks, it is refused."""
    _, instance, re_solve, runs = _bid()
    feasible = sorted((r for r in runs if r.feasible), key=lambda r: _total(r, instance))
    cheapest, dearer = feasible[0], feasible[-1]
    assert cheapest.solution is not None and dearer.solution is not None
    strict = replace(instance, count_limits=(CountLimit(cheapest.gpu, max_count=1),))
    assert check_solution(strict, cheapest.solution, re_solve.capacity_of)
    kept = cheaper_baseline_as_plan(strict, dearer.solution, [cheapest], re_solve.capacity_of, "KRW")
    assert kept is dearer.solution
