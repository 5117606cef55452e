"""The plan's incumbent: a single-GPU-type baseline that serves the full request for less than the
main solve's plan (a time-limited solve, or one stopped within its relative gap) becomes the plan.

The baseline's fleet is re-checked against the full instance (``evaluate.check_solution``: every
workload, cap and count bound of the request, not only the single-type instance it was solved on)
before it is taken. The statistics stay the main solve's, with the objective moved to the baseline's
TCO: the main solve's best bound is a bound on the full request, so the gap is computed against it
(``gap = (objective − bound) / objective``; unknown when there is no bound), and the plan is
``OPTIMAL`` when that gap is within the requested one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pricebook.schema import Currency
from solver.analysis.whatif import BaselineRun
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.assemble import solution_tco


def cheaper_baseline_as_plan(
    instance: FleetInstance,
    solution: FleetSolution,
    runs: Sequence[BaselineRun],
    capacity_of: CapacityOf | None,
    currency: Currency,
) -> FleetSolution:
    """``solution``, or the cheapest baseline fleet (by the plan's own rounded TCO report) that costs
    less and passes the independent check on ``instance``, with honest statistics."""
    if not solution.has_plan:
        return solution
    best = solution
    best_total = solution_tco(solution, instance, currency).total.horizon_total.amount
    for run in runs:
        if not run.feasible or run.solution is None or run.instance is None:
            continue
        total = solution_tco(run.solution, run.instance, currency).total.horizon_total.amount
        if total < best_total and not check_solution(instance, run.solution, capacity_of):
            best, best_total = run.solution, total
    if best is solution:
        return solution
    return _with_main_statistics(best, solution)


def _with_main_statistics(baseline: FleetSolution, main: FleetSolution) -> FleetSolution:
    """The baseline's plan with the main solve's statistics, its objective and gap moved to it."""
    tco = baseline.cost.total if baseline.cost is not None else main.stats.objective
    stats = main.stats if tco is None else main.stats.restated(tco, main.stats.best_bound)
    return dataclasses.replace(baseline, status=stats.status, stats=stats)
