"""PlanFleet: the cheapest verified fleet for a request, with its economics, baselines and
sensitivity (``plan``), and the steps the other pipelines share with it.

``plan_instance`` solves one built instance within the caller's time limit, shared among the
stages by ``solver.budget.DEFAULT_BUDGET``; the answer's ``stages`` say what each one used.
"""

from __future__ import annotations

import dataclasses
import time
from functools import partial

import structlog

from pricebook.schema import Pricebook
from solver.analysis.headroom import Headroom
from solver.analysis.whatif import BaselineRun
from solver.budget import DEFAULT_BUDGET as BUDGET
from solver.budget import StageClock
from solver.domain import CapacityQuantile, PlanRequest
from solver.errors import SolveCancelled
from solver.optimizer.api import request_summary, solve
from solver.optimizer.cancel import CancelToken, polls_cancel
from solver.optimizer.candidates import build_instance, perf_capacity_checker
from solver.optimizer.headroom import GROWTH_SEARCHED_TO, FleetCheck
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution, LimitFired, SolveStatus
from solver.optimizer.risk import demand_probabilities
from solver.periods import is_staged
from solver.planner.assemble import Extras, assemble_result
from solver.planner.baselines import price_baselines, solve_baselines
from solver.planner.disaggregation import compare_aggregated, uses_disaggregation
from solver.planner.headroom import plan_headroom
from solver.planner.incumbent import cheaper_baseline_as_plan
from solver.planner.notices import with_notices
from solver.planner.results import Baseline, BaselineSaving, PlanResult, Sensitivity
from solver.planner.sensitivity import CUT_SHORT_WARNING, cut_short, sensitivity_rows
from solver.planner.staged import FinalYearHeadroom, plan_staged
from solver.resolve import ResolvedRequest

log = structlog.get_logger(__name__)


def plan(
    resolved: ResolvedRequest,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
) -> PlanResult:
    """The cheapest verified fleet for the request, with its economics, baselines and sensitivity."""
    result = plan_request(resolved, time_limit_s=time_limit_s, cancel=cancel, with_extras=True)
    log.info(
        "plan_done",
        status=result.status.value,
        seconds=round(result.seconds, 3),
        time_limit_s=time_limit_s,
        candidates=result.candidates_considered,
        baselines=len(result.baselines),
        sensitivity_solves=sum(s.solves for s in result.sensitivity),
        horizon_tco=str(result.horizon_tco.amount) if result.horizon_tco else None,
    )
    return result


@polls_cancel
def plan_request(
    resolved: ResolvedRequest,
    *,
    time_limit_s: float,
    cancel: CancelToken | None,
    with_extras: bool,
    utilization_override: float | None = None,
) -> PlanResult:
    """The instance built, then ``plan_instance``: all within ``time_limit_s``."""
    started = time.monotonic()
    if is_staged(resolved.request):
        final_year = _final_year_headroom(resolved, cancel)
        return plan_staged(
            resolved,
            time_limit_s=time_limit_s,
            cancel=cancel,
            started=started,
            headroom=final_year if with_extras else None,
            with_extras=with_extras,
        )
    instance = build_instance(resolved.request, resolved.book)
    return plan_instance(
        resolved,
        instance,
        time_limit_s=time_limit_s,
        cancel=cancel,
        started=started,
        with_extras=with_extras,
        utilization_override=utilization_override,
    )


class ReSolver:
    """Re-solves variants of one request's instance (baselines, sensitivity) with the request's
    backend and gap and the call's cancel token: a ``solver.analysis.whatif.Solve``. Their pools
    are held to the same sharing rule as the main plan's (one performance-model checker, whose
    capacities are remembered across the re-solves)."""

    def __init__(self, request: PlanRequest, book: Pricebook, cancel: CancelToken | None) -> None:
        self.request = request
        self.cancel = cancel
        self.capacity_of = perf_capacity_checker(request, book)

    def __call__(
        self,
        instance: FleetInstance,
        time_limit_s: float,
        *,
        explain: bool = False,
        objective_cutoff: float | None = None,
    ) -> FleetSolution:
        opts = self.request.options
        return solve(
            instance,
            time_limit_s=max(BUDGET.min_solve_s, time_limit_s),
            cancel=self.cancel,
            backend=opts.backend,
            relative_gap=opts.relative_gap,
            capacity_of=self.capacity_of,
            explain=explain,
            objective_cutoff=objective_cutoff,
        )

    def below(self, instance: FleetInstance, time_limit_s: float, cutoff: float) -> FleetSolution:
        """A re-solve admitting only plans with a TCO at most ``cutoff`` (``whatif.SolveBelow``)."""
        return self(instance, time_limit_s, objective_cutoff=cutoff)


@polls_cancel
def plan_instance(
    resolved: ResolvedRequest,
    instance: FleetInstance,
    *,
    time_limit_s: float,
    cancel: CancelToken | None,
    started: float,
    with_extras: bool,
    utilization_override: float | None = None,
) -> PlanResult:
    """Solve ``instance`` (built from ``resolved``; and, ``with_extras``, its baselines and
    sensitivity) and assemble the answer; ``started`` (``time.monotonic()``) is when the call
    began: building the instance already used part of ``time_limit_s``."""
    request, book = resolved.request, resolved.book
    clock = StageClock()
    remaining_s = max(BUDGET.min_solve_s, time_limit_s - (time.monotonic() - started))
    deadline_share = BUDGET.main_solve_share_of(remaining_s, with_extras=with_extras)
    main_limit = min(request.options.time_limit_s, deadline_share)
    with clock.timed("main_solve", main_limit):
        solution = solve_main(request, book, instance, main_limit, cancel)
    extras: Extras = Extras()
    runs: tuple[BaselineRun, ...] = ()
    headroom: Headroom | None = None
    if with_extras and solution.has_plan:
        deadline = BUDGET.extras_deadline(started, time_limit_s)
        extras, runs, headroom, solution = _extras(
            resolved, instance, solution, cancel=cancel, deadline=deadline, clock=clock
        )
    complete = (
        solution.stats.status is SolveStatus.OPTIMAL
        and solution.stats.limit_fired is LimitFired.NONE
        and not extras.warnings  # extras cut short or cancelled
        and not _cancelled(cancel)
        and all(r.solution is None or r.solution.stats.limit_fired is LimitFired.NONE for r in runs)
    )
    result = assemble_result(
        request,
        book,
        instance,
        solution,
        extras=extras,
        overrides_applied=resolved.overrides_applied,
        started=started,
        utilization_override=utilization_override,
        complete=complete,
        deadline_limited=deadline_share < request.options.time_limit_s,
    )
    if headroom is not None:
        result = dataclasses.replace(result, headroom=headroom)
    result = with_notices(result, resolved.request, resolved.book)
    if with_extras and uses_disaggregation(result.solution):
        limit_s = BUDGET.p50_limit(max(0.0, started + time_limit_s - time.monotonic()))
        with clock.timed("aggregated_alternative", limit_s):
            re_solve = ReSolver(request, book, cancel)
            currency = request.constraints.currency
            comparison = compare_aggregated(instance, result.solution, re_solve, limit_s, currency)
        result = dataclasses.replace(result, disaggregation=comparison)
    time_left_s = max(0.0, started + time_limit_s - time.monotonic())
    with clock.timed("p50_resolve", BUDGET.p50_limit(time_left_s)):
        result = _with_risk(result, resolved, instance, cancel, time_left_s)
    return dataclasses.replace(result, stages=tuple(clock.stages))


def _with_risk(
    result: PlanResult,
    resolved: ResolvedRequest,
    instance: FleetInstance,
    cancel: CancelToken | None,
    time_left_s: float,
) -> PlanResult:
    """The plan's TCO at its capacity quantile and at p50, and each workload's chance of having
    its demand met (issue 20)."""
    solution = result.solution
    if not solution.has_plan or solution.cost is None:
        return result
    quantile = resolved.request.constraints.capacity_quantile
    tco = solution.cost.total
    at_p50: float | None = tco
    if quantile is not CapacityQuantile.P50:
        request = resolved.request
        p50 = request.model_copy(
            update={
                "constraints": request.constraints.model_copy(
                    update={"capacity_quantile": CapacityQuantile.P50}
                )
            }
        )
        re_solve = ReSolver(p50, resolved.book, cancel)
        median = re_solve(build_instance(p50, resolved.book), BUDGET.p50_limit(time_left_s))
        at_p50 = median.cost.total if median.has_plan and median.cost is not None else None
    return dataclasses.replace(
        result,
        capacity_quantile=quantile,
        tco_at_quantile=tco,
        tco_at_p50=at_p50,
        meets_demand=tuple(demand_probabilities(instance, solution).items()),
    )


def _extras(
    resolved: ResolvedRequest,
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    cancel: CancelToken | None,
    deadline: float,
    clock: StageClock,
) -> tuple[Extras, tuple[BaselineRun, ...], Headroom | None, FleetSolution]:
    """Baselines, then headroom and sensitivity (both with ``compute_sensitivity``), until
    ``deadline``, as the request's options ask; skipped when the call's deadline or a shutdown
    already ended the main solve early. A verified baseline cheaper than ``solution`` becomes the
    plan (returned last; ``solver.planner.incumbent``) before headroom and sensitivity look at it."""
    if cancel is not None and cancel.expired:
        warning = "baselines and sensitivity skipped: the deadline or a shutdown ended the solve early"
        return Extras(warnings=(warning,)), (), None, solution
    if _cancelled(cancel):
        return Extras(), (), None, solution
    request = resolved.request
    re_solve = ReSolver(request, resolved.book, cancel)
    options = request.options
    warnings: list[str] = []
    runs: tuple[BaselineRun, ...] = ()
    baselines: tuple[Baseline, ...] = ()
    saving: BaselineSaving | None = None
    if options.compute_baselines:
        baselines_deadline = BUDGET.baselines_deadline(deadline, with_sensitivity=options.compute_sensitivity)
        diagnose = partial(re_solve, explain=True)
        with clock.timed("baselines", baselines_deadline - time.monotonic()):
            runs = solve_baselines(
                instance, resolved.allowed_gpus, re_solve, baselines_deadline, warnings, diagnose=diagnose
            )
            solution = cheaper_baseline_as_plan(
                instance, solution, runs, re_solve.capacity_of, request.constraints.currency
            )
            baselines, saving = price_baselines(runs, solution, request, instance)
    sensitivity: tuple[Sensitivity, ...] = ()
    headroom: Headroom | None = None
    if options.compute_sensitivity and not _cancelled(cancel):
        headroom_deadline = BUDGET.headroom_deadline(deadline)
        with clock.timed("headroom", headroom_deadline - time.monotonic()):
            headroom = _headroom(
                resolved,
                instance,
                solution,
                re_solve,
                cancel=cancel,
                warnings=warnings,
                deadline=headroom_deadline,
            )
        with clock.timed("sensitivity", deadline - time.monotonic()):
            sensitivity = sensitivity_rows(
                instance, solution, runs, re_solve, deadline, solve_below=re_solve.below
            )
        if cut_short(sensitivity):
            warnings.append(CUT_SHORT_WARNING)
    return Extras(baselines, saving, sensitivity, tuple(warnings)), runs, headroom, solution


def _headroom(
    resolved: ResolvedRequest,
    instance: FleetInstance,
    solution: FleetSolution,
    re_solve: ReSolver,
    *,
    cancel: CancelToken | None,
    warnings: list[str],
    deadline: float,
) -> Headroom | None:
    """The plan's headroom (``solver.planner.headroom``); a warning when it is only a lower bound
    because time ran out, none when the call was cancelled."""
    request = resolved.request
    check = FleetCheck(
        cancel=cancel,
        backend=request.options.backend,
        capacity_of=perf_capacity_checker(request, resolved.book),
    )
    try:
        headroom = plan_headroom(
            instance, solution, check, re_solve, request.constraints.currency, deadline=deadline
        )
    except SolveCancelled:
        warnings.append("headroom not computed: the call was cancelled")
        return None
    if headroom is not None and headroom.at_least and headroom.demand_growth_served < GROWTH_SEARCHED_TO - 1:
        warnings.append("headroom search was cut short by the time limit: the growth shown is a lower bound")
    return headroom


def _final_year_headroom(resolved: ResolvedRequest, cancel: CancelToken | None) -> FinalYearHeadroom:
    """A staged plan's headroom: its final year's fleet on that year's instance (``_headroom``)."""
    re_solve = ReSolver(resolved.request, resolved.book, cancel)

    def headroom(
        instance: FleetInstance, solution: FleetSolution, deadline: float, warnings: list[str]
    ) -> Headroom | None:
        return _headroom(
            resolved, instance, solution, re_solve, cancel=cancel, warnings=warnings, deadline=deadline
        )

    return headroom


def solve_main(
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    time_limit_s: float,
    cancel: CancelToken | None,
) -> FleetSolution:
    """The main solve, its plan checked against capacities the performance model recomputes."""
    opts = request.options
    return solve(
        instance,
        time_limit_s=time_limit_s,
        cancel=cancel,
        backend=opts.backend,
        relative_gap=opts.relative_gap,
        capacity_of=perf_capacity_checker(request, book),
        request_summary=request_summary(request),
    )


def _cancelled(cancel: CancelToken | None) -> bool:
    return cancel is not None and cancel.cancelled
