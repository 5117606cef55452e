"""AnalyzeBreakEven: the plan's break-even section (``plan_break_even``) for one GPU type alone
(a what-if), for a given fleet, or (neither) for the optimal plan, optionally at a utilization the
caller gives instead of the plan's own. The GPU type and the fleet's items are catalogue ids."""

from __future__ import annotations

from dataclasses import replace

from pricebook.schema import GpuId
from solver.domain import Fleet
from solver.optimizer.cancel import CancelToken
from solver.planner.evaluate import evaluate
from solver.planner.plan import plan_request
from solver.planner.plan_break_even import buy_vs_rent_rows, comparison_options
from solver.planner.results import BreakEvenAnalysis, PlanResult
from solver.resolve import ResolvedRequest


def analyze_break_even(
    resolved: ResolvedRequest,
    *,
    gpu: GpuId | None = None,
    fleet: Fleet | None = None,
    utilization: float | None = None,
    time_limit_s: float,
    cancel: CancelToken | None = None,
) -> BreakEvenAnalysis:
    """Break-even for a single GPU type (what-if), a given fleet, or (neither) the optimal plan."""
    if fleet is not None:
        evaluation = evaluate(
            fleet, resolved, time_limit_s=time_limit_s, cancel=cancel, compare_with_optimal=False
        )
        result = evaluation.plan
        if utilization is not None:
            result = _at_utilization(result, resolved, utilization)
        return BreakEvenAnalysis(result.break_even, result.unit_costs, result)
    if gpu is not None:
        request = resolved.request
        constraints = request.constraints.model_copy(update={"allowed_gpus": (gpu,)})
        resolved = resolved.with_request(request.model_copy(update={"constraints": constraints}))
    result = plan_request(
        resolved,
        time_limit_s=time_limit_s,
        cancel=cancel,
        with_extras=False,
        utilization_override=utilization,
    )
    return BreakEvenAnalysis(result.break_even, result.unit_costs, result)


def _at_utilization(result: PlanResult, resolved: ResolvedRequest, utilization: float) -> PlanResult:
    """The result with its buy-vs-rent rows recomputed at ``utilization``."""
    constraints = resolved.request.constraints
    comparison = comparison_options(constraints, resolved.book)
    gpus = (row.gpu for row in result.break_even.buy_vs_rent)
    rows = buy_vs_rent_rows(gpus, comparison, constraints, lambda _gpu: utilization)
    return replace(result, break_even=replace(result.break_even, buy_vs_rent=rows))
