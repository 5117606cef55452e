"""The solve driver: builds the fleet MIP (``solver.optimizer.model``) on a backend and runs it.

One ``solve_mip`` call: the backend and its parameters (SCIP by default, 1 thread, fixed seed),
the run (with the LP-guided search on a second thread for large models), the mapping of the
solver's result to a ``SolverStats`` (status, bound, gap, which limit fired), one structlog
event, and for main plans the tie-break stage (constraint 12 of the model). Never prints.
Why SCIP, and the measurements behind each constant: ``docs/optimizer.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import structlog
from ortools.linear_solver import linear_solver_pb2, pywraplp

from solver.errors import SolveCancelled
from solver.optimizer.cancel import CancelToken, checkpoint, current_cancel, interrupting, polls_cancel
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.gpu_costs import cheapest_cost_per_gpu, cost_alone
from solver.optimizer.instance import FleetInstance
from solver.optimizer.lp_guided import LpGuidedSearch, RestrictedResult, SearchCandidate
from solver.optimizer.model import (
    NO_RELAXATION,
    MipResult,
    MipValues,
    ModelBuilder,
    Relaxation,
)
from solver.optimizer.results import LimitFired, SolverStats, SolveStatus

log = structlog.get_logger(__name__)

BACKENDS: Mapping[str, str] = {"scip": "SCIP", "highs": "HIGHS"}
"""The offered backends (docs/optimizer.md says why CP-SAT and CBC are not among them)."""
DEFAULT_BACKEND = "scip"
MAX_THREADS = 2
SCIP_PARAMETERS = "randomization/randomseedshift = 0\npresolving/dualsparsify/maxrounds = 0\n"
"""Fixed seed: the same request gives the same plan. SCIP 10.0.0's dual-sparsify presolver is off:
with it SCIP proved wrong optima (0.15–1.4 % dearer than HiGHS's proven optimum, reported as
OPTIMAL at gap 0) on 5 of 260 price/demand variants of the 500M KRW example; without it, none
(``tests/solver/optimizer/test_driver.py::test_scip_agrees_with_highs_on_example_variants``)."""
TIE_BREAK_TCO_TOLERANCE = 1e-7
"""Relative TCO slack the tie-break stage may use (numerical noise, far below the solver gap)."""
MIN_TIE_BREAK_S = 0.05
TIE_BREAK_MIN_BUDGET_S = 0.5
LP_GUIDED_MIN_REPLICA_VARS = 2000
"""From this many replica variables the LP-guided search runs beside the full MIP (the 20-workload
benchmark portfolio has 3 366; the seed portfolios and golden scenarios have < 100)."""
SEARCH_MARGIN_S = 0.5
"""Seconds kept back from the full MIP when the search runs: SCIP overshoots its limit by up to
~0.3 s on the 200-workload model, and the chosen plan is read back afterwards."""

_HAS_PLAN = (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE)
_PROVEN = (pywraplp.Solver.OPTIMAL, pywraplp.Solver.INFEASIBLE)


def create_solver(backend: str) -> Any:
    """An empty OR-Tools solver of ``backend`` (a key of ``BACKENDS``)."""
    solver_id = BACKENDS.get(backend)
    if solver_id is None:
        msg = f"unknown backend {backend!r}; choose one of {sorted(BACKENDS)}"
        raise ValueError(msg)
    solver = pywraplp.Solver.CreateSolver(solver_id)
    if solver is None:  # pragma: no cover - ortools build without this backend
        msg = f"OR-Tools has no {solver_id} backend"
        raise RuntimeError(msg)
    return solver


def build_model(
    instance: FleetInstance, backend: str, relax: Relaxation = NO_RELAXATION, *, reduce: bool = True
) -> ModelBuilder:
    """The fleet MIP of ``instance`` built on a new ``backend`` solver (not solved)."""
    builder = ModelBuilder(instance, create_solver(backend), relax, reduce=reduce)
    builder.build()
    return builder


def relaxation_bound(instance: FleetInstance, time_limit_s: float) -> float | None:
    """The optimum of ``instance``'s LP relaxation (GLOP), in the request currency: a lower bound
    of its MIP. None when the LP is not solved within ``time_limit_s``."""
    builder = build_model(instance, DEFAULT_BACKEND)
    model = linear_solver_pb2.MPModelProto()
    builder.solver.ExportModelToProto(model)
    lp = pywraplp.Solver.CreateSolver("GLOP")
    if lp is None or lp.LoadModelFromProto(model):  # pragma: no cover - OR-Tools build issue
        return None
    lp.SuppressOutput()
    lp.SetTimeLimit(max(1, int(time_limit_s * 1000)))
    with interrupting(current_cancel(), lp.InterruptSolve):
        code = lp.Solve()
    checkpoint()
    if code != pywraplp.Solver.OPTIMAL:
        return None
    return float(lp.Objective().Value()) * builder.unit


@dataclass(frozen=True, slots=True)
class _Run:
    """What one run of the full MIP (and the search beside it) returned."""

    code: int
    restricted: RestrictedResult | None
    search_bound: float | None
    seconds: float
    solve_seconds: float


@dataclass(frozen=True, slots=True)
class _Outcome:
    """The returned plan's objective, bound and gap (request currency), None without a plan."""

    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    from_search: bool = False
    """The plan is the LP-guided search's, not the full MIP's."""


@polls_cancel
def solve_mip(
    instance: FleetInstance,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = DEFAULT_BACKEND,
    relative_gap: float = 1e-4,
    relax: Relaxation = NO_RELAXATION,
    threads: int = 1,
    exact_reductions: bool = True,
    lp_guided: bool = True,
    tie_break: bool = False,
    replica_hint: tuple[tuple[str, tuple[int, ...]], ...] = (),
    objective_cutoff: float | None = None,
    own_plans: OwnPlans | None = None,
) -> MipResult:
    """``solve_one`` (below); with shared pools (model constraint 13) in a cost-minimising solve,
    also the plan without them (every load on replicas of its own; side by side with the full
    model, or first with ``LARGE_WARM_START_SHARE`` of the time for large models), kept when the
    full solve ends with nothing better: pooling never returns a dearer plan
    than replicas of their own, even when the limit fires. ``own_plans`` keeps that first plan,
    once proven, for the next call on the same instance without pools (the next pool-timing
    round, or the last one, which drops the pools that keep missing)."""
    run = functools.partial(
        solve_one,
        cancel=cancel,
        backend=backend,
        relative_gap=relative_gap,
        relax=relax,
        threads=threads,
        exact_reductions=exact_reductions,
        lp_guided=lp_guided,
        objective_cutoff=objective_cutoff,
    )
    if replica_hint or not _warm_start_applies(instance, relax):
        kept = own_plans.get(instance) if own_plans is not None and not tie_break else None
        if kept is not None:
            return kept
        return run(instance, time_limit_s=time_limit_s, tie_break=tie_break, replica_hint=replica_hint)
    started = time.perf_counter()
    own = dataclasses.replace(instance, candidates=tuple(c for c in instance.candidates if not c.pool))
    large = len(own.candidates) * len(own.buckets) >= LP_GUIDED_MIN_REPLICA_VARS
    first = own_plans.get(own) if own_plans is not None else None
    if first is None and not large:
        # Neither solve uses the other's result: side by side, one per core.
        first, main = _side_by_side(
            functools.partial(run, own), functools.partial(run, instance, tie_break=tie_break), time_limit_s
        )
        if own_plans is not None:
            own_plans.put(own, first)
        return _better_plan(main, first, relative_gap)
    if first is None:
        first = run(own, time_limit_s=time_limit_s * LARGE_WARM_START_SHARE)
        if own_plans is not None:
            own_plans.put(own, first)
    # Not a hint for the full model: SCIP completing that partial start took 10-20 s on the 8×8
    # length-mix benchmark that solves in ~1 s without it (bench/pooling.py).
    left = max(MIN_TIE_BREAK_S, time_limit_s - (time.perf_counter() - started))
    main = run(instance, time_limit_s=left, tie_break=tie_break)
    return _better_plan(main, first, relative_gap)


def _side_by_side(
    own: Callable[..., MipResult], full: Callable[..., MipResult], time_limit_s: float
) -> tuple[MipResult, MipResult]:
    """The plan without pools and the full model solved at once (OR-Tools releases the GIL), each
    within ``time_limit_s``; a cancelled solve (or a bug) raises here."""
    deadline = time.monotonic() + time_limit_s
    jobs = [
        lambda until: own(time_limit_s=until - time.monotonic()),
        lambda until: full(time_limit_s=until - time.monotonic()),
    ]
    first, main = run_side_by_side(jobs, deadline=deadline)
    for outcome in (first, main):
        if isinstance(outcome, BaseException):
            raise outcome
    assert isinstance(first, MipResult) and isinstance(main, MipResult)
    return first, main


class OwnPlans:
    """The proven plan without shared pools of one ``solver.optimizer.api.solve`` call. Derating a
    pool (``solver.optimizer.pool_timing``) changes pooled candidates only, so each round's model
    without pools is the same model: solved once (SCIP's fixed seed gives the same plan again)."""

    def __init__(self) -> None:
        self._instance: FleetInstance | None = None
        self._result: MipResult | None = None

    def get(self, own: FleetInstance) -> MipResult | None:
        """The plan kept for ``own`` (an instance without pools), None when it is another one."""
        return self._result if self._instance is not None and self._instance == own else None

    def put(self, own: FleetInstance, result: MipResult) -> None:
        """Keep ``result`` as ``own``'s plan when it is proven (a time-limited one may differ)."""
        if result.stats.status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE):
            self._instance, self._result = own, result


LARGE_WARM_START_SHARE = 0.85
"""Share of the time limit the plan without shared pools may take before the full model, for
models the LP-guided search runs on (beside the full MIP: a thread already): the full model with
pools (2-3× the variables) found no plan in 6 s on the 20-workload benchmark portfolio, whose plan
without them takes ~4 s (load 8), so that one gets the time and pooling what is left. Smaller
models solve both side by side."""


def _warm_start_applies(instance: FleetInstance, relax: Relaxation) -> bool:
    pooled = {c.pool for c in instance.candidates if c.pool}
    shared = any(sum(1 for c in instance.candidates if c.pool == p) > 1 for p in pooled)
    return (
        shared
        and instance.fixed_fleet is None
        and relax.minimize is None
        and not relax.elastic_demand
        and not relax.maximize_demand_scale
        and not relax.fixed_replicas
    )


def _better_plan(main: MipResult, first: MipResult, relative_gap: float) -> MipResult:
    """``main``, unless it has no plan or a dearer one than ``first`` (a plan of the same model with
    every pool empty); the bound is always ``main``'s (the full model's)."""
    if first.values is None or first.stats.objective is None:
        return main
    if (
        main.values is not None
        and main.stats.objective is not None
        and main.stats.objective <= first.stats.objective * (1 + TIE_BREAK_TCO_TOLERANCE)
    ):
        return main
    objective = first.stats.objective
    bound = main.stats.best_bound
    gap = abs(objective - bound) / abs(objective) if bound is not None and objective else None
    proven = gap is not None and gap <= max(relative_gap, TIE_BREAK_TCO_TOLERANCE)
    status = SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
    stats = dataclasses.replace(main.stats, status=status, objective=objective, gap=gap)
    return MipResult(stats=stats, values=first.values)


def solve_one(
    instance: FleetInstance,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
    backend: str = DEFAULT_BACKEND,
    relative_gap: float = 1e-4,
    relax: Relaxation = NO_RELAXATION,
    threads: int = 1,
    exact_reductions: bool = True,
    lp_guided: bool = True,
    tie_break: bool = False,
    replica_hint: tuple[tuple[str, tuple[int, ...]], ...] = (),
    objective_cutoff: float | None = None,
) -> MipResult:
    """Build and solve the MIP; never prints (solver output suppressed, stats to structlog).

    Large models also run ``solver.optimizer.lp_guided`` on a second thread: its plans are plans
    of this model, and the bound always comes from this model, so the reported gap stays honest.
    ``lp_guided=False`` turns it off (benchmarks compare both).
    ``tie_break=True`` re-solves a proven optimum for fewest GPUs, then fewest GPU types, at the
    same TCO (``tie_break_stage``; the main plan only, not the what-if re-solves).
    ``exact_reductions=False`` builds the model without the replica bounds and option
    reductions (same optimum, slower; for tests that check the reductions are exact).
    ``replica_hint`` (candidate id, replicas per bucket) is a partial start for SCIP, which
    completes the fleet around it (local runner-ups: a first plan at once, measured 23 % faster).
    ``objective_cutoff`` (request currency) admits only plans whose TCO is at most it: INFEASIBLE
    then proves that no plan is that cheap (parametric sensitivity: today's fleet stays optimal).
    """
    if cancel is not None and cancel.cancelled:
        raise SolveCancelled("cancelled before the solve started")
    started = time.perf_counter()
    builder = build_model(instance, backend, relax, reduce=exact_reductions)
    if objective_cutoff is not None and not isinstance(builder.tco_expr, int):
        builder.solver.Add(builder.tco_expr <= objective_cutoff, "cutoff[tco]")
    _set_parameters(builder, backend, threads, replica_hint)
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, relative_gap)
    search = None
    if lp_guided and _lp_guided_applies(builder, backend, relax):
        search = lp_guided_search(builder, relative_gap)
    run = _run(
        builder.solver, params, search=search, cancel=cancel, started=started, time_limit_s=time_limit_s
    )
    cancelled = cancel is not None and cancel.cancelled
    outcome = _outcome(builder, run, relative_gap)
    status, limit = _status(run.code, outcome, relative_gap, cancelled)
    stats = SolverStats(
        backend=backend,
        status=status,
        objective=outcome.objective,
        best_bound=outcome.bound,
        gap=outcome.gap,
        seconds=run.seconds,
        limit_fired=limit,
        variables=builder.solver.NumVariables(),
        constraints=builder.solver.NumConstraints(),
        time_limit_s=time_limit_s,
        relative_gap_target=relative_gap,
    )
    _log_solved(stats, run, outcome)
    if status is SolveStatus.CANCELLED:
        raise SolveCancelled(f"solve cancelled after {run.seconds:.2f} s")
    values = _values(builder, run, outcome)
    if tie_break and _tie_break_applies(status, backend, relax):
        # At most as long as the main solve took (at least ``TIE_BREAK_MIN_BUDGET_S``), and at
        # most half of the time left: explanations come after it.
        left = time_limit_s - (time.perf_counter() - started)
        budget = min(left / 2, max(TIE_BREAK_MIN_BUDGET_S, run.seconds))
        values = tie_break_stage(builder, cancel, budget) or values
    return MipResult(stats=stats, values=values)


def _set_parameters(
    builder: ModelBuilder, backend: str, threads: int, replica_hint: tuple[tuple[str, tuple[int, ...]], ...]
) -> None:
    """Quiet output, threads, a fixed seed per backend; SCIP also takes the replica hint."""
    solver = builder.solver
    solver.SuppressOutput()
    solver.SetNumThreads(max(1, min(MAX_THREADS, threads)))
    if backend == "scip":
        solver.SetSolverSpecificParametersAsString(SCIP_PARAMETERS)
        _set_replica_hint(builder, replica_hint)
    elif backend == "highs":
        solver.SetSolverSpecificParametersAsString("output_flag=false\nlog_to_console=false\nrandom_seed=0\n")


def _lp_guided_applies(builder: ModelBuilder, backend: str, relax: Relaxation) -> bool:
    """The LP-guided search runs for large cost-minimising SCIP models (small ones are proven
    optimal by the full MIP alone, and stay bit-for-bit what they were)."""
    return (
        backend == "scip"
        and builder.inst.fixed_fleet is None
        and relax.minimize is None
        and not relax.elastic_demand
        and not relax.maximize_demand_scale
        and not relax.fixed_replicas
        and sum(len(vs) for vs in builder.r.values()) >= LP_GUIDED_MIN_REPLICA_VARS
    )


def lp_guided_search(builder: ModelBuilder, relative_gap: float) -> LpGuidedSearch:
    """The LP-guided search on an exported copy of the built model (same variable indices), each
    candidate with its cost alone (the order unused candidates join the restricted model in)."""
    model = linear_solver_pb2.MPModelProto()
    builder.solver.ExportModelToProto(model)
    instance = builder.inst
    per_gpu = cheapest_cost_per_gpu(instance)
    return LpGuidedSearch(
        model,
        [
            SearchCandidate(
                workload=c.workload,
                replica_indices=tuple(var.index() for var in builder.r[c.id]),
                cost_alone=cost_alone(c, builder.demand_of[c.workload], instance.buckets, per_gpu),
            )
            for c in builder.cands
        ],
        relative_gap=relative_gap,
        solver_parameters=SCIP_PARAMETERS,
    )


def _run(
    solver: Any,
    params: Any,
    *,
    search: LpGuidedSearch | None,
    cancel: CancelToken | None,
    started: float,
    time_limit_s: float,
) -> _Run:
    """Solve in the time left after building (with the search, less a margin to read its plan
    back), interruptible by ``cancel``."""
    margin = SEARCH_MARGIN_S if search is not None else 0.0
    remaining = max(0.01, time_limit_s - (time.perf_counter() - started) - margin)
    solver.SetTimeLimit(max(1, int(remaining * 1000)))
    solve_started = time.perf_counter()
    restricted: RestrictedResult | None = None
    with (
        interrupting(cancel, solver.InterruptSolve),
        interrupting(cancel, search.interrupt) if search is not None else nullcontext(),
    ):
        if cancel is not None and cancel.cancelled:
            # Cancelled while the model was built: stop before solving.
            raise SolveCancelled(f"solve cancelled after {time.perf_counter() - started:.2f} s")
        if search is None:
            code = solver.Solve(params)
        else:
            code, restricted = solve_beside_search(solver, params, search, remaining)
    return _Run(
        code=code,
        restricted=restricted,
        search_bound=search.lp_bound if search is not None else None,
        seconds=time.perf_counter() - started,
        solve_seconds=time.perf_counter() - solve_started,
    )


def _outcome(builder: ModelBuilder, run: _Run, relative_gap: float) -> _Outcome:
    """The plan to return and its bound. A proven full MIP keeps its own plan (the same request
    gives the same plan); otherwise the cheaper of the full MIP's and the search's plans."""
    objective_units = bound_units = None
    if run.code in _HAS_PLAN:
        objective_units = builder.solver.Objective().Value()
        bound_units = builder.solver.Objective().BestBound()
    if run.search_bound is not None and run.code != pywraplp.Solver.INFEASIBLE:
        bound_units = run.search_bound if bound_units is None else max(bound_units, run.search_bound)
    restricted = run.restricted
    from_search = (
        restricted is not None
        and run.code not in _PROVEN
        and (objective_units is None or restricted.objective < objective_units)
    )
    if from_search and restricted is not None:
        objective_units = restricted.objective
    if objective_units is None:
        return _Outcome()
    objective = objective_units * builder.unit
    if bound_units is None or not math.isfinite(bound_units):
        if run.code != pywraplp.Solver.OPTIMAL:
            # No bound proven (e.g. the limit fired before the root LP): the gap is unknown, not 0.
            return _Outcome(objective=objective, from_search=from_search)
        bound_units = objective_units
    bound = bound_units * builder.unit
    # The bound may pass the plan's objective by rounding only: clamp it on the right side.
    maximizing = builder.solver.Objective().maximization()
    bound = max(bound, objective) if maximizing else min(bound, objective)
    gap = abs(objective - bound) / abs(objective) if objective else 0.0
    if run.code == pywraplp.Solver.OPTIMAL and gap > relative_gap:
        gap = relative_gap  # proven within the requested gap; the bound is reported as given
    return _Outcome(objective=objective, bound=bound, gap=gap, from_search=from_search)


def _status(
    code: int, outcome: _Outcome, relative_gap: float, cancelled: bool
) -> tuple[SolveStatus, LimitFired]:
    """The solve's status and which limit stopped it."""
    has_plan = outcome.objective is not None
    if code == pywraplp.Solver.OPTIMAL or (
        has_plan and outcome.gap is not None and outcome.gap <= relative_gap
    ):
        status = SolveStatus.OPTIMAL
    elif has_plan:
        status = SolveStatus.FEASIBLE
    elif code == pywraplp.Solver.INFEASIBLE:
        status = SolveStatus.INFEASIBLE
    else:
        status = SolveStatus.NO_SOLUTION
    if cancelled and status is not SolveStatus.OPTIMAL:
        status = SolveStatus.CANCELLED
    if cancelled:
        return status, LimitFired.CANCEL
    if status in (SolveStatus.FEASIBLE, SolveStatus.NO_SOLUTION):
        return status, LimitFired.TIME
    return status, LimitFired.NONE


def _log_solved(stats: SolverStats, run: _Run, outcome: _Outcome) -> None:
    log.info(
        "fleet_mip_solved",
        backend=stats.backend,
        status=stats.status.value,
        objective=stats.objective,
        bound=stats.best_bound,
        gap=stats.gap,
        seconds=round(stats.seconds, 4),
        solve_seconds=round(run.solve_seconds, 4),
        variables=stats.variables,
        constraints=stats.constraints,
        limit=stats.limit_fired.value,
        plan_from="lp_guided" if outcome.from_search else "full_mip",
    )


def _values(builder: ModelBuilder, run: _Run, outcome: _Outcome) -> MipValues | None:
    """The returned plan's values: read from the search's solution or from the full MIP."""
    if outcome.from_search and run.restricted is not None:
        found = run.restricted.values
        return builder.values(lambda var: found[var.index()])
    if outcome.objective is not None:
        return builder.values()
    return None


def _tie_break_applies(status: SolveStatus, backend: str, relax: Relaxation) -> bool:
    return (
        status is SolveStatus.OPTIMAL
        and backend == "scip"
        and relax.minimize is None
        and not relax.elastic_demand
        and not relax.maximize_demand_scale
    )


def _set_replica_hint(builder: ModelBuilder, hint: tuple[tuple[str, tuple[int, ...]], ...]) -> None:
    variables: list[Any] = []
    values: list[float] = []
    for cid, replicas in hint:
        for var, count in zip(builder.r.get(cid, ()), replicas, strict=False):
            variables.append(var)
            values.append(float(min(count, var.ub())))
    if variables:
        builder.solver.SetHint(variables, values)


def tie_break_stage(
    builder: ModelBuilder, cancel: CancelToken | None, time_limit_s: float
) -> MipValues | None:
    """Among plans within ``TIE_BREAK_TCO_TOLERANCE`` of the proven optimum's TCO: fewest GPUs,
    then fewest GPU types (the issue's deterministic tie-break; an ε in the main objective is below
    the solver's gap). Warm-started from the optimum, so any plan it returns is at least as good
    on both counts; None when it cannot run (no time, or interrupted before a plan)."""
    if time_limit_s < MIN_TIE_BREAK_S or isinstance(builder.tco_expr, int):
        return None
    solver = builder.solver
    started = time.perf_counter()
    variables = solver.variables()
    hint = [float(v.solution_value()) for v in variables]
    tco = float(builder.tco_expr.solution_value())
    before = float(builder.gpu_count_expr.solution_value())
    used = builder.prefer_fewer_gpu_types(tco + TIE_BREAK_TCO_TOLERANCE * max(1.0, abs(tco)))
    index = {var.index(): value for var, value in zip(variables, hint, strict=True)}
    for g, flag in used.items():
        fleet = [
            var
            for o in builder.inst.options
            if o.gpu == g
            for var in ([builder.n[o.id]] if o.id in builder.n else builder.d.get(o.id, []))
        ]
        index[flag.index()] = 1.0 if any(index[var.index()] > 0.5 for var in fleet) else 0.0
    all_vars = solver.variables()
    solver.SetHint(all_vars, [index[var.index()] for var in all_vars])
    solver.SetTimeLimit(max(1, int(time_limit_s * 1000)))
    # The stage objective is ~1000 × GPUs: an absolute gap below 1 separates one GPU type.
    solver.SetSolverSpecificParametersAsString(SCIP_PARAMETERS + "limits/absgap = 0.5\n")
    params = pywraplp.MPSolverParameters()
    params.SetDoubleParam(pywraplp.MPSolverParameters.RELATIVE_MIP_GAP, 0.0)
    with interrupting(cancel, solver.InterruptSolve):
        code = solver.Solve(params)
    if code not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return None
    log.debug(
        "fleet_mip_tie_break",
        status="optimal" if code == pywraplp.Solver.OPTIMAL else "feasible",
        gpus_before=round(before, 3),
        gpus_after=round(float(builder.gpu_count_expr.solution_value()), 3),
        gpu_types_after=sum(round(flag.solution_value()) for flag in used.values()),
        seconds=round(time.perf_counter() - started, 4),
    )
    return builder.values()


def solve_beside_search(
    solver: Any, params: Any, search: LpGuidedSearch, time_limit_s: float
) -> tuple[int, RestrictedResult | None]:
    """The full MIP on a worker thread (OR-Tools releases the GIL) and the LP-guided search on
    this one; the search stops as soon as the full MIP is proven (optimal or infeasible)."""
    outcome: dict[str, Any] = {}

    def full() -> None:
        try:
            outcome["code"] = solver.Solve(params)
        except BaseException as exc:  # re-raised on the calling thread
            outcome["error"] = exc
        finally:
            proven = outcome.get("code") in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.INFEASIBLE)
            if proven or "error" in outcome:
                search.interrupt()

    worker = threading.Thread(target=full, name="fleet-mip-full", daemon=True)
    worker.start()
    try:
        restricted = search.run(time_limit_s)
    finally:
        worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return int(outcome["code"]), restricted
