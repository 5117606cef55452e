"""The FleetPlanner servicer: convert → call the domain → convert back. Nothing else.

Every handler is wrapped by ``service.errors.grpc_errors`` (the one place domain errors become
statuses). Solves (PlanFleet, EvaluateFleet, SweepPlans, AnalyzeBreakEven, a scenario's ExportPlan)
run in worker processes (``service.worker_pool``) behind ``service.limits.SolveGate``: slots sized
from the cores plus a bounded wait queue, and admission by each request's estimated solve time
(``service.solve_time``; RESOURCE_EXHAUSTED + RetryInfo when it would not fit its deadline). At the
caller's deadline the solve is wrapped up (best verified plan, else DEADLINE_EXCEEDED); when the call
is cancelled the solve's ``CancelToken`` fires — in the worker too — so the MIP stops.

Cheap RPCs never wait for a solve's interpreter lock: estimates run on their own small executor
(``CHEAP_THREADS``), the catalogue (the same answer for the same kinds while the pricebook is
loaded) is built once per set of kinds, and plan answers are turned into protobuf off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib.metadata
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import structlog

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from pricebook.schema import Pricebook
from service import domain_calls
from service.calls import current_call
from service.convert.break_even import break_even_analysis_to_proto, break_even_request_from_proto
from service.convert.catalog import catalog_kinds_from_proto, catalog_to_proto
from service.convert.evaluate import evaluate_request_from_proto, evaluation_to_proto
from service.convert.export import (
    ExportQuery,
    documents_to_proto,
    export_request_from_proto,
    request_json,
    saved_quote,
)
from service.convert.paths import PathMap, domain_violations_to_proto, path_map
from service.convert.performance import performance_cases_from_proto, performance_results_to_proto
from service.convert.plan import plan_to_proto
from service.convert.plan_store import planning_part, saved_response
from service.convert.provenance import plan_provenance, provenance_to_proto
from service.convert.scenario import scenario_request
from service.convert.sweep import frontier_to_proto, sweep_point_to_proto, sweep_request_from_proto
from service.errors import grpc_errors
from service.estimate_pool import EstimatePool
from service.limits import SolveGate, SolveToken, require_plan_within_deadline, solve_budget_s
from service.plan_archive import PlanArchive
from service.plan_cache import PlanCache, request_key
from service.settings import ServerSettings
from service.solve_time import default_model, solve_size
from service.worker_pool import WorkerPool
from solver import planner
from solver.errors import InvalidRequest
from solver.resolve import ResolvedRequest
from store.records import PlanRepository

log = structlog.get_logger("fleetplan.service")
_T = TypeVar("_T")

CHEAP_THREADS = 2
"""Threads for cheap RPCs (performance estimates), apart from the solve slots and the event loop."""


def _package_version() -> str:
    try:
        return importlib.metadata.version("fleetplan")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree without install
        return "unknown"


SERVER_VERSION = _package_version()
"""Version of the installed ``fleetplan`` package, echoed in every answer's provenance."""


@dataclass(frozen=True, slots=True)
class ServiceState:
    book: Pricebook
    settings: ServerSettings
    store: PlanRepository | None = None
    """Saved plans (None = no store: saving and the PlanStore RPCs answer FAILED_PRECONDITION)."""


def _time_budget_s(context: grpc.aio.ServicerContext, settings: ServerSettings) -> float:
    """Seconds a solve may use: the caller's remaining deadline minus a margin (or the default)."""
    return solve_budget_s(
        context.time_remaining(), default_s=settings.default_deadline_s, margin_s=settings.deadline_margin_s
    )


@contextlib.contextmanager
def _proto_paths(paths: PathMap) -> Iterator[None]:
    """Bad input the domain finds only while solving is still reported with proto field paths."""
    try:
        yield
    except InvalidRequest as exc:
        raise domain_violations_to_proto(exc, paths) from exc


def _record_solver(stats: dict[str, Any]) -> None:
    call = current_call()
    if call is not None and stats:
        call.solver = stats


class FleetPlannerServicer(rpc.FleetPlannerServicer):
    def __init__(self, state: ServiceState) -> None:
        self._state = state
        self._gate = SolveGate(
            state.settings.solve_slots,
            state.settings.max_queued_solves,
            margin_s=state.settings.deadline_margin_s,
            niceness=state.settings.solve_niceness,
        )
        self._model_version = domain_calls.performance_model_version()
        self._plan_cache: PlanCache[planner.PlanResult] = PlanCache(state.settings.plan_cache_entries)
        self._cheap = ThreadPoolExecutor(max_workers=CHEAP_THREADS, thread_name_prefix="fleetplan-cheap")
        self._catalogs: dict[tuple[str, ...], api.ListCatalogResponse] = {}
        """Catalogue answers by set of kinds (at most 2^kinds entries)."""
        self._archive = PlanArchive(state.store, state.settings)
        self._estimates = EstimatePool(
            state.book, state.settings.pricebook_dir, state.settings.estimate_processes, self._cheap_call
        )
        self._solves = WorkerPool(
            state.book,
            state.settings.pricebook_dir,
            state.settings.solve_processes,
            name="solves",
            niceness=state.settings.solve_niceness,
            log_json=state.settings.log_json,
        )
        self._solves.start()  # solves run in the server's threads until the workers are up
        self._solve_time = default_model()

    async def _cheap_call(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` on the cheap executor (the call's context goes along: its log record)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._cheap, contextvars.copy_context().run, fn)

    @property
    def gate(self) -> SolveGate:
        return self._gate

    @property
    def archive(self) -> PlanArchive:
        return self._archive

    def close(self) -> None:
        """Stop the worker processes (the server has stopped)."""
        self._estimates.close()
        self._solves.close()

    def wait_for_workers(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) until the solve workers are up (False: they are not)."""
        return self._solves.wait_ready(timeout_s)

    def _estimate_s(self, message: Any, solves: float = 1.0) -> float:
        """Seconds the fitted model expects ``solves`` solves of ``message``'s size to take."""
        return solves * self._solve_time.estimate_s(solve_size(message, self._state.book))

    def _in_worker(self, job: Callable[[SolveToken], _T]) -> Callable[[SolveToken], _T]:
        """``job`` (picklable: a module function, partially applied) to run in a solve worker."""
        return functools.partial(self._solves.call, job)

    def _versions(self) -> dict[str, str]:
        return {"performance_model_version": self._model_version, "server_version": SERVER_VERSION}

    @grpc_errors
    async def PlanFleet(
        self, request: api.PlanFleetRequest, context: grpc.aio.ServicerContext
    ) -> api.PlanFleetResponse:
        book = self._state.book
        earlier = await self._archive.earlier_answer(request, context)
        if earlier is not None:  # a retried save: the answer saved the first time
            return earlier
        key = request_key(planning_part(request), book.content_hash)
        estimate_s = self._estimate_s(request)
        if not self._plan_cache.answers(key):
            self._gate.admit(context, estimate_s)  # a busy server refuses before converting the request
        resolved = scenario_request(request, book)

        async def solve() -> planner.PlanResult:
            limit = _time_budget_s(context, self._state.settings)
            job = self._in_worker(functools.partial(domain_calls.plan, resolved, limit))
            with _proto_paths(path_map(request.workloads)):
                return await self._gate.run(job, context, estimate_s)

        result, reused = await self._plan_cache.get_or_compute(key, solve, reusable=lambda r: r.complete)
        _record_solver({**domain_calls.log_stats(result.solution), "reused": reused})
        require_plan_within_deadline(
            result.solution,
            resolved.request.options.time_limit_s,
            has_deadline=context.time_remaining() is not None,
            deadline_limited=result.deadline_limited,
        )
        provenance = plan_provenance(result, **self._versions())
        provenance.reused_identical_request = reused
        # A 100-workload plan takes tens of milliseconds to convert: not on the event loop.
        plan = await asyncio.to_thread(plan_to_proto, result, book)
        response = api.PlanFleetResponse(plan=plan, provenance=provenance)
        if request.save:
            document = await self._quote_to_save(request, resolved, result, context)
            return await self._archive.save(
                request,
                response,
                context,
                calibration_date=domain_calls.calibration_fit_date(),
                document=document,
            )
        return response

    async def _quote_to_save(
        self,
        request: api.PlanFleetRequest,
        resolved: ResolvedRequest,
        result: planner.PlanResult,
        context: grpc.aio.ServicerContext,
    ) -> str:
        """The quote of a plan to save (``QuoteData`` JSON): ExportPlan renders it by plan id."""
        limit = _time_budget_s(context, self._state.settings) * domain_calls.SAVED_QUOTE_RENT_SHARE
        scenario_json = request_json(planning_part(request))
        with _proto_paths(path_map(request.workloads)):
            return await self._gate.run(
                lambda cancel: domain_calls.quote_data(
                    result,
                    resolved,
                    limit,
                    cancel,
                    title=request.label,
                    request_json=scenario_json,
                    fleetplan_version=SERVER_VERSION,
                ).model_dump_json(),
                context,
            )

    @grpc_errors
    async def EvaluateFleet(
        self, request: api.EvaluateFleetRequest, context: grpc.aio.ServicerContext
    ) -> api.EvaluateFleetResponse:
        book = self._state.book
        # Evaluating a fixed fleet is quick; comparing it with the optimal plan is a plan's solve.
        estimate_s = self._estimate_s(request) if request.compare_with_optimal else None
        self._gate.admit(context, estimate_s)  # a busy server refuses before converting the request
        fleet, resolved = evaluate_request_from_proto(request, book)
        limit = _time_budget_s(context, self._state.settings)
        with _proto_paths(path_map(request.workloads)):
            job = functools.partial(
                domain_calls.evaluate,
                fleet,
                resolved,
                limit,
                compare_with_optimal=request.compare_with_optimal,
            )
            result = await self._gate.run(self._in_worker(job), context, estimate_s)
        _record_solver(domain_calls.log_stats(result.plan.solution))
        response = evaluation_to_proto(result, book)
        response.provenance.CopyFrom(plan_provenance(result.plan, **self._versions()))
        return response

    @grpc_errors
    async def EstimatePerformance(
        self, request: api.EstimatePerformanceRequest, context: grpc.aio.ServicerContext
    ) -> api.EstimatePerformanceResponse:
        book = self._state.book
        cases = performance_cases_from_proto(request, book)
        valid = [c for c in cases if isinstance(c, dict)]
        results = await self._estimates.estimate(valid) if valid else []
        response = performance_results_to_proto(request, cases, results)
        response.provenance.CopyFrom(provenance_to_proto(book, **self._versions()))
        return response

    @grpc_errors
    async def AnalyzeBreakEven(
        self, request: api.AnalyzeBreakEvenRequest, context: grpc.aio.ServicerContext
    ) -> api.AnalyzeBreakEvenResponse:
        book = self._state.book
        estimate_s = self._estimate_s(request)
        self._gate.admit(context, estimate_s)  # a busy server refuses before converting the request
        query = break_even_request_from_proto(request, book)
        limit = _time_budget_s(context, self._state.settings)
        with _proto_paths(path_map(request.workloads)):
            job = functools.partial(
                domain_calls.break_even,
                query.request,
                limit,
                gpu=query.gpu,
                fleet=query.fleet,
                utilization=query.utilization,
            )
            result = await self._gate.run(self._in_worker(job), context, estimate_s)
        _record_solver(domain_calls.log_stats(result.plan.solution))
        response = break_even_analysis_to_proto(result, book)
        response.provenance.CopyFrom(plan_provenance(result.plan, **self._versions()))
        return response

    @grpc_errors
    async def ListCatalog(
        self, request: api.ListCatalogRequest, context: grpc.aio.ServicerContext
    ) -> api.ListCatalogResponse:
        kinds = catalog_kinds_from_proto(request)
        key = tuple(sorted(set(kinds)))  # the answer depends on the set of kinds only
        cached = self._catalogs.get(key)
        if cached is None:  # ~12 ms to build; the same answer until the pricebook changes (a restart)
            cached = catalog_to_proto(self._state.book, kinds)
            cached.provenance.CopyFrom(provenance_to_proto(self._state.book, **self._versions()))
            self._catalogs[key] = cached
        return cached

    @grpc_errors
    async def SweepPlans(
        self, request: api.SweepPlansRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[api.SweepPlansResponse]:
        book = self._state.book
        sweep = sweep_request_from_proto(request, book)
        total = len(sweep.values)
        limit = _time_budget_s(context, self._state.settings)
        # Points run two at a time; each gets its share of the caller's time limit.
        per_point = max(0.5, min(sweep.base.request.options.time_limit_s, 2.0 * limit / max(1, total)))
        started = time.perf_counter()
        yield api.SweepPlansResponse(progress=api.SweepProgress(points_done=0, points_total=total))
        points = 0
        provenance = provenance_to_proto(book, **self._versions())
        with _proto_paths(path_map(request.base.workloads, prefix="base")):
            job = functools.partial(domain_calls.sweep, sweep, time_limit_s_per_point=per_point)
            in_worker = functools.partial(self._solves.stream, job)
            # Points run two at a time.
            estimate_s = self._estimate_s(request.base, solves=total / 2)
            async for item in self._gate.stream(in_worker, context, estimate_s):
                if isinstance(item, planner.SweepPoint):
                    points += 1
                    # The points' pricebook: the request's overrides applied (same for every point).
                    provenance = plan_provenance(item.plan, **self._versions())
                    yield sweep_point_to_proto(item)
                    yield api.SweepPlansResponse(
                        progress=api.SweepProgress(
                            points_done=item.points_done, points_total=item.points_total
                        )
                    )
                else:
                    _record_solver({"points": points, "seconds": round(time.perf_counter() - started, 3)})
                    yield api.SweepPlansResponse(
                        frontier=frontier_to_proto(item),
                        provenance=provenance,
                    )

    @grpc_errors
    async def ExportPlan(
        self, request: api.ExportPlanRequest, context: grpc.aio.ServicerContext
    ) -> api.ExportPlanResponse:
        query = export_request_from_proto(request, self._state.book)
        if query.plan_id is not None:
            return await self._export_saved(query, query.plan_id, context)
        assert query.scenario is not None  # a validated query has one source
        scenario = query.scenario
        limit = _time_budget_s(context, self._state.settings)
        with _proto_paths(path_map(request.request.workloads, prefix="request")):
            job = functools.partial(
                domain_calls.quote,
                scenario.resolved,
                limit,
                formats=query.formats,
                language=query.language,
                title=query.title,
                request_json=scenario.request_json,
                fleetplan_version=SERVER_VERSION,
                present=query.present,
            )
            # In a worker: the plan, and rendering (a PDF takes seconds of Python).
            documents, result = await self._gate.run(self._in_worker(job), context)
        _record_solver(domain_calls.log_stats(result.solution))
        return documents_to_proto(documents, plan_provenance(result, **self._versions()))

    async def _export_saved(
        self, query: ExportQuery, plan_id: str, context: grpc.aio.ServicerContext
    ) -> api.ExportPlanResponse:
        """A saved plan's quote, rendered from the quote saved with it (not planned again): its
        numbers and its provenance (pricebook version and hash) are the saved plan's."""
        stored = await self._archive.get(plan_id)
        data = query.present(saved_quote(stored, query.title))
        # Rendering takes seconds for a PDF: in a solve slot, like a scenario's quote.
        documents = await self._gate.run(
            lambda _cancel: domain_calls.render_quote(data, formats=query.formats, language=query.language),
            context,
        )
        return documents_to_proto(documents, saved_response(stored).provenance)
