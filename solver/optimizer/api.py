"""Public entry points of the optimizer.

- ``optimize(request, book, *, time_limit_s, cancel=None, options_override=None) -> FleetSolution``:
  candidates (performance model) + options (economics) → MIP → verified, explained plan.
- ``evaluate_fleet(fleet, request, book) -> FleetEvaluation``: best assignment onto a given fleet.
- ``solve(instance, ...) -> FleetSolution``: the same on an already-built ``FleetInstance``.

Every returned plan has passed ``solver.optimizer.evaluate.check_solution``; a plan that fails is
our bug: logged with the request, re-solved once by the plain model, and discarded when that
fails too (an answer without a plan that says why, never an error). Hardware a plan leaves idle is
removed before it is returned (``solver.optimizer.idle``), whichever solve found it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import structlog

from pricebook.schema import Pricebook
from solver.domain import Fleet, PlanRequest, SolverOptions
from solver.optimizer.cancel import CancelToken, polls_cancel
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.driver import DEFAULT_BACKEND, OwnPlans, relaxation_bound, solve_mip
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.explain import diagnose_infeasible, explain_local_runner_ups, explain_runner_ups
from solver.optimizer.fleet_eval import evaluate_fixed_fleet
from solver.optimizer.idle import without_idle_hardware
from solver.optimizer.instance import FleetInstance
from solver.optimizer.pool_timing import solve_pools_by_timing
from solver.optimizer.results import Diagnosis, FleetEvaluation, FleetSolution, SolveStatus, Violation
from solver.optimizer.solution import build_solution, empty_solution, with_tco_objective

log = structlog.get_logger(__name__)

CLUSTERED_BOUND_SHARE = 0.1
"""Share of the time limit for the bound of a plan whose hours were clustered (an LP: ~1 s at
100 workloads)."""
RUNNER_UP_MAX_WORKLOADS = 12
"""Runner-ups re-plan the whole portfolio once per workload up to this size, when the plan is
proven optimal; otherwise they are local (the other workloads keep their replicas)."""
LOCAL_RUNNER_UP_SHARE = 0.15
"""Share of the time limit kept for runner-ups: local ones fit in it (largest workloads first; the
rest say they were not computed). A plan proven sooner leaves more, for full re-plans when small.
Measured on the 5-workload benchmark portfolio at the default 10 s: the plan is not proven within
the limit, and without the reserve no workload had a runner-up."""


@polls_cancel
def solve(
    instance: FleetInstance,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = DEFAULT_BACKEND,
    relative_gap: float = 1e-4,
    capacity_of: CapacityOf | None = None,
    explain: bool = True,
    request_summary: str = "",
    lp_guided: bool = True,
    objective_cutoff: float | None = None,
) -> FleetSolution:
    """Solve, verify and (optionally) explain one instance within ``time_limit_s`` seconds.

    ``lp_guided=False`` solves the full MIP alone (benchmarks measure what the search adds).
    ``objective_cutoff``: only plans with a TCO at most this (request currency); INFEASIBLE then
    means none is that cheap."""
    started = time.perf_counter()
    backend = DEFAULT_BACKEND if backend == "auto" else backend
    own_plans = OwnPlans()

    def planned(inst: FleetInstance, limit: float, *, plain: bool = False) -> FleetSolution:
        # plain: without the exact reductions, the LP-guided search and the tie-break stage.
        mip = solve_mip(
            inst,
            time_limit_s=limit,
            cancel=cancel,
            backend=backend,
            relative_gap=relative_gap,
            lp_guided=lp_guided and not plain,
            exact_reductions=not plain,
            tie_break=explain and not plain,
            objective_cutoff=objective_cutoff,
            own_plans=None if plain else own_plans,
        )
        return with_tco_objective(build_solution(inst, mip))

    budget = time_limit_s * (1 - LOCAL_RUNNER_UP_SHARE) if explain else time_limit_s
    instance, solution = solve_pools_by_timing(
        instance, planned, budget, capacity_of, lambda _, s: s, carry=with_earlier_bound
    )
    if solution.has_plan and instance.hours_clustered:
        bound_limit = max(0.5, CLUSTERED_BOUND_SHARE * time_limit_s)
        solution = with_clustered_hours_bound(instance, solution, relative_gap, bound_limit)
    solved_on = instance
    if solution.has_plan:
        solution = _verified_or_discarded(
            instance,
            solution,
            capacity_of,
            request_summary,
            resolve=lambda limit: planned(solved_on, limit, plain=True),
            time_left=lambda: time_limit_s - (time.perf_counter() - started),
        )
    if solution.has_plan and not (cancel is not None and cancel.expired):
        solution = without_idle_hardware(
            instance,
            solution,
            time_limit_s=time_limit_s - (time.perf_counter() - started),
            backend=backend,
            capacity_of=capacity_of,
            cancel=cancel,
        )
    if not explain:
        return solution
    remaining = time_limit_s - (time.perf_counter() - started)
    if solution.status is SolveStatus.INFEASIBLE:
        return diagnose_infeasible(
            instance, solution, time_limit_s=max(0.5, remaining), cancel=cancel, backend=backend
        )
    if cancel is not None and cancel.expired:
        return solution  # wrapped up (deadline or shutdown): runner-ups are optional work
    if not solution.has_plan or remaining <= 0.2:
        return solution
    # Full re-plans only when the plan is proven: a re-plan of a time-limited plan is as hard as the
    # plan itself, and would be compared with a plan that is not the optimum.
    if solution.status is SolveStatus.OPTIMAL and len(instance.inference) <= RUNNER_UP_MAX_WORKLOADS:
        return explain_runner_ups(instance, solution, time_limit_s=remaining, cancel=cancel, backend=backend)
    return explain_local_runner_ups(
        instance, solution, time_limit_s=remaining, cancel=cancel, backend=backend
    )


def with_earlier_bound(earlier: FleetSolution, later: FleetSolution) -> FleetSolution:
    """``later`` (a re-solve of an instance with fewer plans: pools derated or dropped) with the
    larger of the two proven bounds: a bound of the earlier instance bounds every plan of the
    later one. Its gap is recomputed against that bound, and it is ``OPTIMAL`` when that gap is
    within the requested one."""
    carried, own = earlier.stats.best_bound, later.stats.best_bound
    tco = later.stats.objective
    if carried is None or tco is None or not later.has_plan or (own is not None and own >= carried):
        return later
    stats = later.stats.restated(tco, carried)
    return dataclasses.replace(later, status=stats.status, stats=stats)


MIN_REPAIR_SOLVE_S = 0.5
"""A plan that fails verification is re-solved (without the exact reductions and the LP-guided
search) when at least this many seconds are left, or given at least this many."""


def _verified_or_discarded(
    instance: FleetInstance,
    solution: FleetSolution,
    capacity_of: CapacityOf | None,
    request_summary: str,
    *,
    resolve: Callable[[float], FleetSolution],
    time_left: Callable[[], float],
) -> FleetSolution:
    """``solution`` when it passes ``check_solution``. Otherwise (our bug: logged with the request)
    the instance is solved once more by the plain model, and that plan is returned if it passes;
    if it does not, or there is none, the answer says so honestly: no plan
    (``SolveStatus.NO_SOLUTION``, the violations in the diagnosis), never an error."""
    violations = _violations(instance, solution, capacity_of, request_summary)
    if not violations:
        return solution
    again = resolve(max(MIN_REPAIR_SOLVE_S, time_left()))
    if again.has_plan and not _violations(instance, again, capacity_of, request_summary):
        log.warning("plan_repaired", request=request_summary, status=again.status.value)
        return again
    return discarded(instance, solution, violations)


def _violations(
    instance: FleetInstance, solution: FleetSolution, capacity_of: CapacityOf | None, request_summary: str
) -> list[Violation]:
    violations = check_solution(instance, solution, capacity_of)
    if violations:
        log.error(
            "plan_failed_verification",
            request=request_summary,
            violations=[f"{v.kind}:{v.subject}: {v.message}" for v in violations],
        )
    return violations


DISCARDED_VIOLATIONS_SHOWN = 3


def discarded(instance: FleetInstance, solution: FleetSolution, violations: list[Violation]) -> FleetSolution:
    """No plan: the solver's plan failed the independent check (the first violations say how)."""
    found = "; ".join(f"{v.kind} {v.subject}: {v.message}" for v in violations[:DISCARDED_VIOLATIONS_SHOWN])
    message = (
        "the solver's plan failed the independent check of every constraint and was discarded "
        f"({found}); no verified plan was found. This is a defect of fleetplan, logged with the "
        "request id."
    )
    stats = dataclasses.replace(
        solution.stats, status=SolveStatus.NO_SOLUTION, objective=None, best_bound=None, gap=None
    )
    return dataclasses.replace(empty_solution(instance, stats), diagnosis=Diagnosis(messages=(message,)))


def with_clustered_hours_bound(
    instance: FleetInstance, solution: FleetSolution, relative_gap: float, time_limit_s: float
) -> FleetSolution:
    """A plan of clustered hours with an honest bound: the clustered model serves each bucket at its
    busiest hour, so its own bound is not a bound of the request. The LP relaxation of serving
    each bucket's quietest hour only is (``instance.at_quietest_hours``); the plan is OPTIMAL only
    when it is within ``relative_gap`` of that bound."""
    stats = solution.stats
    if stats.objective is None:
        return solution
    bound = relaxation_bound(instance.at_quietest_hours(), time_limit_s)
    if bound is None:  # no bound in time: nothing is proven, the gap is unknown
        status = SolveStatus.FEASIBLE
        return dataclasses.replace(
            solution,
            status=status,
            stats=dataclasses.replace(stats, status=status, best_bound=None, gap=None),
        )
    bound = min(bound, stats.objective)
    gap = (stats.objective - bound) / stats.objective if stats.objective else 0.0
    status = SolveStatus.OPTIMAL if gap <= relative_gap else SolveStatus.FEASIBLE
    return dataclasses.replace(
        solution,
        status=status,
        stats=dataclasses.replace(stats, status=status, best_bound=bound, gap=gap),
    )


def _options(request: PlanRequest, override: SolverOptions | None) -> SolverOptions:
    return override if override is not None else request.options


def optimize(
    request: PlanRequest,
    book: Pricebook,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    options_override: SolverOptions | None = None,
) -> FleetSolution:
    """The cheapest verified fleet for ``request`` (``book`` with the request's overrides applied)."""
    opts = _options(request, options_override)
    instance = build_instance(request, book)
    return solve(
        instance,
        time_limit_s=min(time_limit_s, opts.time_limit_s),
        cancel=cancel,
        backend=opts.backend,
        relative_gap=opts.relative_gap,
        capacity_of=perf_capacity_checker(request, book),
        request_summary=request_summary(request),
    )


@polls_cancel
def evaluate_fleet(
    fleet: Fleet,
    request: PlanRequest,
    book: Pricebook,
    *,
    time_limit_s: float | None = None,
    cancel: CancelToken | None = None,
    compare_optimal: bool = True,
) -> FleetEvaluation:
    """Best assignment of ``request``'s workloads onto ``fleet``; see ``solver.optimizer.fleet_eval``."""
    limit = time_limit_s if time_limit_s is not None else request.options.time_limit_s
    instance = build_instance(request, book, fleet=fleet)
    optimal = optimal_instance = None
    if compare_optimal:
        optimal_instance = build_instance(request, book)
        optimal = solve(
            optimal_instance,
            time_limit_s=limit / 2,
            cancel=cancel,
            backend=request.options.backend,
            relative_gap=request.options.relative_gap,
            capacity_of=perf_capacity_checker(request, book),
            explain=False,
        )
    evaluation = evaluate_fixed_fleet(
        instance,
        fleet,
        time_limit_s=limit / 2 if compare_optimal else limit,
        cancel=cancel,
        backend=request.options.backend,
        capacity_of=perf_capacity_checker(request, book),
        optimal=optimal,
    )
    if optimal is None or not optimal.has_plan:
        return evaluation
    return dataclasses.replace(evaluation, optimal=optimal, optimal_instance=optimal_instance)


REQUEST_LOG_CHARS = 2000
"""The request (as JSON) logged with a plan that fails verification, cut to this many characters."""


def request_summary(request: PlanRequest) -> str:
    """The request as logged beside a plan that fails verification (bounded)."""
    return request.model_dump_json(exclude_defaults=True)[:REQUEST_LOG_CHARS]
