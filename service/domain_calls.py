"""The service's calls into the domain (``solver``, ``pricebook``), run in worker threads.

Each function takes validated domain objects and returns an *outcome*: the domain result plus
what the response needs to be reproducible (the pricebook actually used, the overrides applied)
and the solver statistics for the RPC's log line. No protobuf here and no physics or economics:
everything is delegated to ``solver.planner`` (orchestration + economics), falling back to
``solver.optimizer`` for the parts the planner does not offer.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pricebook.schema import Pricebook
from solver import domain
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer import evaluate_fleet, optimize
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import FleetEvaluation, FleetSolution


def _optional_module(name: str) -> ModuleType | None:
    """A domain module that may not exist yet in this checkout (built in parallel)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None
        raise


def performance_model_version() -> str:
    calibration = _optional_module("solver.perf.calibration")
    if calibration is None:
        return ""
    version = getattr(calibration, "MODEL_VERSION", None) or getattr(calibration, "PERFORMANCE_MODEL_VERSION", None)
    if version:
        return str(version)
    try:
        cal = calibration.load_calibration()
    except Exception:  # noqa: BLE001 - the version is informative only
        return ""
    stamp = getattr(cal, "version", None) or getattr(cal, "fitted_on", None) or getattr(cal, "fit_date", None)
    return f"perf-calibration {stamp}" if stamp else ""


def apply_overrides(book: Pricebook, overrides: domain.PricebookOverrides) -> tuple[Pricebook, tuple[str, ...]]:
    """The book with the request's overrides applied, and their descriptions."""
    if overrides == domain.PricebookOverrides():
        return book, ()
    module = _optional_module("pricebook.overrides")
    if module is None:
        raise InvalidRequest([FieldViolation("pricebook_overrides", "pricebook overrides are not supported yet")])
    new_book, applied = module.apply_overrides(book, overrides)
    return new_book, tuple(applied)


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    solution: FleetSolution
    book: Pricebook
    """The pricebook with the request's overrides applied."""
    overrides_applied: tuple[str, ...] = ()
    result: Any = None
    """The planner's ``PlanResult`` (economics, baselines, sensitivity) when the planner ran."""
    log_stats: dict[str, Any] = field(default_factory=dict)


def _log_stats(solution: FleetSolution) -> dict[str, Any]:
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


def _solution_of(result: Any) -> FleetSolution:
    if isinstance(result, FleetSolution):
        return result
    solution = getattr(result, "solution", None)
    if isinstance(solution, FleetSolution):
        return solution
    msg = f"planner returned {type(result).__name__} without a FleetSolution"
    raise TypeError(msg)


def plan(request: domain.PlanRequest, book: Pricebook, deadline_s: float, cancel: CancelToken) -> PlanOutcome:
    planner = _optional_module("solver.planner")
    if planner is not None and hasattr(planner, "plan"):
        result = planner.plan(request, book, deadline_s=deadline_s, cancel=cancel)
        solution = _solution_of(result)
        used_book = getattr(result, "book", None) or book
        applied = tuple(getattr(result, "overrides_applied", ()) or ())
        return PlanOutcome(solution, used_book, applied, result, _log_stats(solution))
    used_book, applied = apply_overrides(book, request.overrides)
    solution = optimize(request, used_book, time_limit_s=deadline_s, cancel=cancel)
    return PlanOutcome(solution, used_book, applied, None, _log_stats(solution))


@dataclass(frozen=True, slots=True)
class EvaluationOutcome:
    evaluation: FleetEvaluation
    book: Pricebook
    overrides_applied: tuple[str, ...] = ()
    result: Any = None
    log_stats: dict[str, Any] = field(default_factory=dict)


def evaluate(fleet: domain.Fleet, request: domain.PlanRequest, book: Pricebook, deadline_s: float,
             cancel: CancelToken, *, compare_with_optimal: bool) -> EvaluationOutcome:
    planner = _optional_module("solver.planner")
    if planner is not None and hasattr(planner, "evaluate"):
        result = planner.evaluate(fleet, request, book, deadline_s=deadline_s, cancel=cancel,
                                  compare_with_optimal=compare_with_optimal)
        evaluation = result if isinstance(result, FleetEvaluation) else result.evaluation
        used_book = getattr(result, "book", None) or book
        applied = tuple(getattr(result, "overrides_applied", ()) or ())
        return EvaluationOutcome(evaluation, used_book, applied, result, _log_stats(evaluation.solution))
    used_book, applied = apply_overrides(book, request.overrides)
    evaluation = evaluate_fleet(fleet, request, used_book, time_limit_s=deadline_s, cancel=cancel,
                                compare_optimal=compare_with_optimal)
    return EvaluationOutcome(evaluation, used_book, applied, None, _log_stats(evaluation.solution))


@dataclass(frozen=True, slots=True)
class BreakEvenOutcome:
    book: Pricebook
    overrides_applied: tuple[str, ...] = ()
    result: Any = None
    """The planner's break-even result."""
    plan: PlanOutcome | None = None
    log_stats: dict[str, Any] = field(default_factory=dict)


def break_even(query: Any, book: Pricebook, deadline_s: float, cancel: CancelToken) -> BreakEvenOutcome:
    """Buy vs rent vs API for ``query`` (``service.converters.BreakEvenQuery``)."""
    planner = _optional_module("solver.planner")
    if planner is None or not hasattr(planner, "analyze_break_even"):
        msg = "AnalyzeBreakEven needs solver.planner.analyze_break_even, which is not available yet"
        raise NotImplementedError(msg)
    result = planner.analyze_break_even(
        query.request, book, gpu=query.gpu, fleet=query.fleet, utilization=query.utilization,
        deadline_s=deadline_s, cancel=cancel,
    )
    used_book = getattr(result, "book", None) or book
    applied = tuple(getattr(result, "overrides_applied", ()) or ())
    solution = getattr(result, "solution", None)
    stats = _log_stats(solution) if isinstance(solution, FleetSolution) else {}
    return BreakEvenOutcome(used_book, applied, result, None, stats)


@dataclass(frozen=True, slots=True)
class SweepPointRequest:
    index: int
    value: float
    request: domain.PlanRequest


@dataclass(frozen=True, slots=True)
class SweepPointOutcome:
    index: int
    value: float
    plan: PlanOutcome


def sweep_point(point: SweepPointRequest, book: Pricebook, deadline_s: float, cancel: CancelToken) -> SweepPointOutcome:
    return SweepPointOutcome(point.index, point.value, plan(point.request, book, deadline_s, cancel))


def estimate_cases(cases: Sequence[Mapping[str, Any]], book: Pricebook) -> list[dict[str, Any]]:
    """Batch what-ifs through ``solver.perf.cases`` (the batch-file contract of issue #4)."""
    module = _optional_module("solver.perf.cases")
    if module is None:
        msg = "EstimatePerformance needs solver.perf.cases, which is not available yet"
        raise NotImplementedError(msg)
    return list(module.estimate_cases([dict(c) for c in cases], book))


def pareto_flags(values: Sequence[float], costs: Sequence[float | None]) -> list[bool]:
    """Whether each sweep point is on the cost frontier: a point with a plan is dominated when
    another point reaches at least as far on the swept value (higher) for no more money, and
    strictly better on one of the two."""
    flags = []
    for i, (value, cost) in enumerate(zip(values, costs, strict=True)):
        if cost is None:
            flags.append(False)
            continue
        dominated = any(
            j != i and other is not None and other <= cost and v >= value and (other < cost or v > value)
            for j, (v, other) in enumerate(zip(values, costs, strict=True))
        )
        flags.append(not dominated)
    return flags
