"""The service's calls into the domain, run in worker threads.

Each function takes validated domain objects (requests already resolved: a
``solver.resolve.ResolvedRequest`` or a ``planner.PreparedSweep``) and calls ``solver.planner``
(plan, evaluate, break-even, sweep) or ``solver.perf.cases`` (batch what-ifs). No protobuf here,
and no physics or economics: only the call, the time limit and the solver statistics for the
RPC's log line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from pricebook.schema import Pricebook
from solver import domain, planner
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import FleetSolution
from solver.perf import cases as perf_cases
from solver.perf.calibration import load_calibration
from solver.resolve import ResolvedRequest


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
