"""EvaluateFleet: how a given fleet serves the workloads, what it costs, and how much cheaper the
optimal plan of the same request is (both priced by the same rounded TCO report).

The fleet's items name catalogue ids (``solver.resolve.resolve_fleet``, or the service's fleet
conversion)."""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict

from pricebook.schema import Currency, Money
from solver.domain import AcquisitionMode, Fleet
from solver.optimizer.api import evaluate_fleet
from solver.optimizer.cancel import CancelToken
from solver.optimizer.candidates import build_instance
from solver.optimizer.results import FleetEvaluation, FleetSolution, SolveStatus
from solver.periods import is_staged
from solver.planner.assemble import Extras, assemble_result, solution_tco
from solver.planner.notices import with_notices
from solver.planner.results import EvaluationResult
from solver.planner.staged_evaluate import evaluate_staged, is_staged_fleet
from solver.resolve import ResolvedRequest


def evaluate(
    fleet: Fleet,
    resolved: ResolvedRequest,
    *,
    time_limit_s: float | None = None,
    cancel: CancelToken | None = None,
    compare_with_optimal: bool = True,
) -> EvaluationResult:
    """How a given fleet serves the workloads, what it costs, and how much cheaper the optimum is."""
    started = time.monotonic()
    request, book = resolved.request, resolved.book
    limit = time_limit_s if time_limit_s is not None else request.options.time_limit_s
    if is_staged(request) or is_staged_fleet(fleet):
        return evaluate_staged(fleet, resolved, time_limit_s=limit, cancel=cancel)
    evaluation = evaluate_fleet(
        fleet, request, book, time_limit_s=limit, cancel=cancel, compare_optimal=compare_with_optimal
    )
    instance = build_instance(request, book, fleet=fleet)
    result = assemble_result(
        request,
        book,
        instance,
        _priced(evaluation),
        extras=Extras(warnings=tuple(evaluation.messages)),
        overrides_applied=resolved.overrides_applied,
        started=started,
    )
    if not evaluation.feasible:
        result = dataclasses.replace(
            result,
            status=SolveStatus.INFEASIBLE,
            summary=f"Not feasible: {'; '.join(evaluation.messages)}. {result.summary}",
        )
    result = with_notices(result, request, book)
    currency = request.constraints.currency
    tco = result.horizon_tco
    optimal = _optimal_tco(evaluation, instance.horizon_months, currency)
    saving = None
    messages = [*evaluation.messages, *_rented_below_given(fleet, evaluation)]
    if tco is not None and optimal is not None:
        saving = Money(amount=tco.amount - optimal.amount, currency=currency)
        if saving.amount > 0:
            messages.append(f"the optimal plan costs {saving.amount:,} {currency} less over the horizon")
    return EvaluationResult(
        feasible=evaluation.feasible,
        plan=result,
        fits=evaluation.fits,
        fleet_horizon_tco=tco,
        optimal_horizon_tco=optimal,
        saving_of_optimal=saving,
        messages=tuple(messages),
    )


def _rented_below_given(fleet: Fleet, evaluation: FleetEvaluation) -> list[str]:
    """On-demand lines the evaluation rents fewer of than given (a given on-demand count is at
    most: GPUs rented by the hour are paid only when used), so the answer's ×N is explained."""
    given: dict[str, int] = defaultdict(int)
    for item in fleet.items:
        if item.mode is AcquisitionMode.ON_DEMAND and not item.owned:
            given[item.gpu] += item.count
    rented: dict[str, int] = defaultdict(int)
    solution = evaluation.solution
    for b in range(len(solution.buckets)):
        at_b: dict[str, int] = defaultdict(int)
        for chosen in solution.options:
            if chosen.mode is AcquisitionMode.ON_DEMAND and chosen.on_demand_gpus:
                at_b[chosen.gpu] += chosen.on_demand_gpus[b]
        for gpu, count in at_b.items():
            rented[gpu] = max(rented[gpu], count)
    return [
        f"{gpu} on_demand: {count} given, {rented[gpu]} rented at the busiest hour (on-demand GPUs are "
        f"paid by the hour used; the fleet lines and the TCO count the {rented[gpu]})"
        for gpu, count in sorted(given.items())
        if solution.has_plan and rented[gpu] < count
    ]


def _priced(evaluation: FleetEvaluation) -> FleetSolution:
    """The evaluated use of the fleet, priced whether or not it meets every cap and SLA: the fleet
    is held (and costs what it costs) either way, so the answer always carries its TCO; only a
    fleet the evaluator could not use at all (training it cannot run) has none."""
    solution = evaluation.solution
    if evaluation.feasible or solution.stats.status not in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
        return solution
    return dataclasses.replace(solution, status=solution.stats.status)


def _optimal_tco(evaluation: FleetEvaluation, horizon_months: int, currency: Currency) -> Money | None:
    """The optimal plan's horizon TCO, priced by the same rounded TCO report as the fleet (and as
    a plan of the same request); None when it was not asked for or not found."""
    if evaluation.optimal is None or evaluation.optimal_instance is None:
        return None
    return solution_tco(evaluation.optimal, evaluation.optimal_instance, currency).total.horizon_total
