"""The service's calls into the domain, run in worker threads.

Each function takes validated domain objects (requests already resolved: a
``solver.resolve.ResolvedRequest`` or a ``planner.PreparedSweep``) and calls ``solver.planner``
(plan, evaluate, break-even, sweep) or ``solver.perf.cases`` (batch what-ifs). No protobuf here,
and no physics or economics: only the call, the time limit and the solver statistics for the
RPC's log line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from pricebook.schema import Pricebook
from report import Document, Language, QuoteData, ReportFormat, build_quote, render
from solver import domain, planner
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import FleetSolution
from solver.perf import cases as perf_cases
from solver.perf.calibration import load_calibration
from solver.planner.plan import plan_request
from solver.resolve import ResolvedRequest

QUOTE_MAIN_SHARE = 0.6
"""Share of an ExportPlan's time the plan may use; the rent-only alternative gets ``QUOTE_RENT_SHARE``,
and rendering (a PDF takes seconds) the rest."""
QUOTE_RENT_SHARE = 0.15
SAVED_QUOTE_RENT_SHARE = 0.5
"""Share of the time left after a saved plan's solve its rent-only alternative may use (the quote
saved with it; the rest is for saving)."""
RENT_MODES = (domain.AcquisitionMode.RESERVED, domain.AcquisitionMode.ON_DEMAND)


def calibration_fit_date() -> str:
    """Date the performance model's calibration was fitted (kept with saved plans)."""
    return load_calibration().fit_date


def performance_model_version() -> str:
    """Version of the calibrated performance model, for the answer's provenance."""
    return f"analytic model, calibration fitted {calibration_fit_date()}"


def log_stats(solution: FleetSolution) -> dict[str, Any]:
    """Solver statistics of one solve, for the per-RPC log line."""
    stats = solution.stats
    return {
        "status": str(stats.status),
        "objective": stats.objective,
        "bound": stats.best_bound,
        "gap": stats.gap,
        "seconds": round(stats.seconds, 4),
        "limit": str(stats.limit_fired),
        "backend": stats.backend,
        "variables": stats.variables,
        "constraints": stats.constraints,
    }


def plan(resolved: ResolvedRequest, time_limit_s: float, cancel: CancelToken) -> planner.PlanResult:
    return planner.plan(resolved, time_limit_s=time_limit_s, cancel=cancel)


def rent_only(resolved: ResolvedRequest) -> ResolvedRequest:
    """The same request with rentals only (reserved and on demand; what is owned stays)."""
    constraints = resolved.request.constraints.model_copy(update={"allowed_modes": RENT_MODES})
    return resolved.with_request(resolved.request.model_copy(update={"constraints": constraints}))


def quote_data(
    result: planner.PlanResult,
    resolved: ResolvedRequest,
    time_limit_s: float,
    cancel: CancelToken,
    *,
    title: str,
    request_json: str,
    fleetplan_version: str,
) -> QuoteData:
    """The quote of ``result`` (the plan of ``resolved``): the rent-only plan planned beside it
    in ``time_limit_s``, then everything the quote shows (the same for every format and language)."""
    rentals = plan_request(rent_only(resolved), time_limit_s=time_limit_s, cancel=cancel, with_extras=False)
    return build_quote(
        result,
        resolved,
        request_json=request_json,
        rent_only=rentals,
        fleetplan_version=fleetplan_version,
        title=title,
    )


def quote(
    resolved: ResolvedRequest,
    time_limit_s: float,
    cancel: CancelToken,
    *,
    formats: Sequence[ReportFormat],
    language: Language,
    title: str,
    request_json: str,
    fleetplan_version: str,
    present: Callable[[QuoteData], QuoteData],
) -> tuple[list[Document], planner.PlanResult]:
    """ExportPlan of a scenario: the plan (with baselines and sensitivity), the rent-only plan
    beside it, the quote built from both once, ``present``-ed for its audience and rendered in
    every one of ``formats``."""
    result = planner.plan(resolved, time_limit_s=time_limit_s * QUOTE_MAIN_SHARE, cancel=cancel)
    data = quote_data(
        result,
        resolved,
        time_limit_s * QUOTE_RENT_SHARE,
        cancel,
        title=title,
        request_json=request_json,
        fleetplan_version=fleetplan_version,
    )
    return render_quote(present(data), formats=formats, language=language), result


def render_quote(data: QuoteData, *, formats: Sequence[ReportFormat], language: Language) -> list[Document]:
    """One quote rendered in every one of ``formats`` (nothing is planned: the numbers are the
    quote's, the same in each file)."""
    return [render(data, fmt, language) for fmt in formats]


def evaluate(
    fleet: domain.Fleet,
    resolved: ResolvedRequest,
    time_limit_s: float,
    cancel: CancelToken,
    *,
    compare_with_optimal: bool,
) -> planner.EvaluationResult:
    return planner.evaluate(
        fleet,
        resolved,
        time_limit_s=time_limit_s,
        cancel=cancel,
        compare_with_optimal=compare_with_optimal,
    )


def break_even(
    resolved: ResolvedRequest,
    time_limit_s: float,
    cancel: CancelToken,
    *,
    gpu: str | None,
    fleet: domain.Fleet | None,
    utilization: float | None,
) -> planner.BreakEvenAnalysis:
    return planner.analyze_break_even(
        resolved, gpu=gpu, fleet=fleet, utilization=utilization, time_limit_s=time_limit_s, cancel=cancel
    )


def sweep(
    prepared: planner.PreparedSweep, cancel: CancelToken, *, time_limit_s_per_point: float
) -> Iterator[planner.SweepPoint | planner.SweepFrontier]:
    return planner.sweep(prepared, cancel=cancel, time_limit_s_per_point=time_limit_s_per_point)


def estimate_cases(cases: Sequence[Mapping[str, Any]], book: Pricebook) -> list[dict[str, Any]]:
    """Each case (batch-file field names, issue #4) estimated by ``solver.perf.cases``; a bad case
    yields ``{"error": {"field": ..., "reason": ...}}`` and the others are still estimated."""
    rows: list[dict[str, Any]] = []
    for data in cases:
        try:
            rows.append(perf_cases.estimate_case(perf_cases.EstimateCase.model_validate(dict(data)), book))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = [str(p) for p in first["loc"]]
            field = ".".join(loc[:2] if loc and loc[0] == "model_spec" else loc[:1])
            rows.append({"error": {"field": field, "reason": str(first["msg"])}})
        except perf_cases.CaseError as exc:
            rows.append({"error": {"field": exc.field, "reason": exc.reason}})
    return rows
