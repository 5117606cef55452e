"""AnalyzeBreakEven: the plan's break-even section (``plan_break_even``) for one GPU type alone
(a what-if), for a given fleet, or (neither) for the optimal plan, optionally at a utilisation the
caller gives instead of the plan's own."""

from __future__ import annotations

from dataclasses import replace

from pricebook.catalog import gpu as catalogue_gpu
from pricebook.schema import GpuId, Pricebook
from solver.domain import Fleet, PlanRequest
from solver.optimizer.cancel import CancelToken
from solver.planner.evaluate import evaluate
from solver.planner.plan import plan_request
from solver.planner.plan_break_even import buy_vs_rent_rows, comparison_options
from solver.planner.results import BreakEvenAnalysis, PlanResult


def analyze_break_even(
    request: PlanRequest,
    book: Pricebook,
    *,
    gpu: GpuId | None = None,
    fleet: Fleet | None = None,
    utilisation: float | None = None,
    time_limit_s: float,
    cancel: CancelToken | None = None,
) -> BreakEvenAnalysis:
    """Break-even for a single GPU type (what-if), a given fleet, or (neither) the optimal plan."""
    if fleet is not None:
        evaluation = evaluate(
            fleet, request, book, time_limit_s=time_limit_s, cancel=cancel, compare_with_optimal=False
        )
        result = evaluation.plan
        if utilisation is not None:
            result = _at_utilisation(result, request, book, utilisation)
        return BreakEvenAnalysis(result.break_even, result.unit_costs, result)
    if gpu is not None:
        constraints = request.constraints.model_copy(update={"allowed_gpus": (catalogue_gpu(book, gpu).id,)})
        request = request.model_copy(update={"constraints": constraints})
    result = plan_request(
        request,
        book,
        time_limit_s=time_limit_s,
        cancel=cancel,
        with_extras=False,
        utilisation_override=utilisation,
    )
    return BreakEvenAnalysis(result.break_even, result.unit_costs, result)


def _at_utilisation(
    result: PlanResult, request: PlanRequest, book: Pricebook, utilisation: float
) -> PlanResult:
    """The result with its buy-vs-rent rows recomputed at ``utilisation``."""
    comparison = comparison_options(request.constraints, book)
    gpus = (row.gpu for row in result.break_even.buy_vs_rent)
    rows = buy_vs_rent_rows(gpus, comparison, request.constraints, lambda _gpu: utilisation)
    return replace(result, break_even=replace(result.break_even, buy_vs_rent=rows))
