"""The FleetPlanner servicer: convert → call the domain → convert back. Nothing else.

Every handler is wrapped by ``service.errors.grpc_errors`` (the one place domain errors become
statuses). Solves run in worker threads (``asyncio.to_thread``; OR-Tools releases the GIL) behind
``SolveGate``: a semaphore sized from the cores plus a bounded wait queue. When the call is
cancelled or its deadline passes, the solve's ``CancelToken`` fires so the MIP stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import structlog

from clients._pb.fleetplan.v1 import fleet_planner_pb2 as api
from clients._pb.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from pricebook.schema import Pricebook
from service import converters, domain_calls
from service.calls import current_call
from service.errors import ResourceExhausted, grpc_errors
from service.settings import ServerSettings
from solver import planner
from solver.optimizer.cancel import CancelToken

log = structlog.get_logger("fleetplan.service")
_T = TypeVar("_T")

SERVER_VERSION = "0.1.0"


class SolveGate:
    """At most ``slots`` solves at once and ``max_waiting`` waiting; beyond that RESOURCE_EXHAUSTED."""

    def __init__(self, slots: int, max_waiting: int) -> None:
        self._semaphore = asyncio.Semaphore(slots)
        self._slots = slots
        self._max_waiting = max_waiting
        self._waiting = 0
        self._running = 0

    @property
    def running(self) -> int:
        return self._running

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._running >= self._slots and self._waiting >= self._max_waiting:
            raise ResourceExhausted(
                f"{self._running} solves running and {self._waiting} waiting; retry shortly", retry_after_s=1.0
            )
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            self._semaphore.release()

    async def run(self, fn: Callable[[CancelToken], _T]) -> _T:
        """Run ``fn(cancel)`` in a worker thread; a cancelled call fires ``cancel`` to stop the solve."""
        async with self.slot():
            cancel = CancelToken()
            try:
                return await asyncio.to_thread(fn, cancel)
            except asyncio.CancelledError:
                # Client went away or its deadline passed: stop the MIP; the thread ends promptly.
                cancel.cancel()
                raise

    async def stream(self, fn: Callable[[CancelToken], Iterator[_T]]) -> AsyncIterator[_T]:
        """Iterate ``fn(cancel)`` in a worker thread, yielding each item as it is produced."""
        async with self.slot():
            cancel = CancelToken()
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

            def pump() -> None:
                try:
                    for item in fn(cancel):
                        loop.call_soon_threadsafe(queue.put_nowait, ("item", item))
                except BaseException as exc:  # noqa: BLE001 - handed to the event loop
                    loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
                finally:
                    loop.call_soon_threadsafe(queue.put_nowait, ("done", None))

            worker = asyncio.ensure_future(asyncio.to_thread(pump))
            try:
                while True:
                    kind, value = await queue.get()
                    if kind == "done":
                        break
                    if kind == "error":
                        raise value
                    yield value
            finally:
                if not worker.done():
                    cancel.cancel()


@dataclass(frozen=True, slots=True)
class ServiceState:
    book: Pricebook
    settings: ServerSettings


def _time_budget_s(context: grpc.aio.ServicerContext, settings: ServerSettings) -> float:
    """Seconds a solve may use: the caller's remaining deadline minus a margin (or the default)."""
    remaining = context.time_remaining()
    if remaining is None:
        return settings.default_deadline_s
    return max(0.05, min(settings.default_deadline_s, remaining - settings.deadline_margin_s))


def _record_solver(stats: dict[str, Any]) -> None:
    call = current_call()
    if call is not None and stats:
        call.solver = stats


class FleetPlannerServicer(rpc.FleetPlannerServicer):
    def __init__(self, state: ServiceState) -> None:
        self._state = state
        self._gate = SolveGate(state.settings.solve_slots, state.settings.max_queued_solves)
        self._model_version = domain_calls.performance_model_version()

    @property
    def gate(self) -> SolveGate:
        return self._gate

    def _versions(self) -> dict[str, str]:
        return {"performance_model_version": self._model_version, "server_version": SERVER_VERSION}

    @grpc_errors
    async def PlanFleet(self, request: api.PlanFleetRequest, context: grpc.aio.ServicerContext) -> api.PlanFleetResponse:
        book = self._state.book
        plan_request = converters.plan_request_from_proto(request, book)
        limit = _time_budget_s(context, self._state.settings)
        result = await self._gate.run(lambda cancel: domain_calls.plan(plan_request, book, limit, cancel))
        _record_solver(domain_calls.log_stats(result.solution))
        return api.PlanFleetResponse(plan=converters.plan_to_proto(result, book),
                                     provenance=converters.plan_provenance(result, **self._versions()))

    @grpc_errors
    async def EvaluateFleet(
        self, request: api.EvaluateFleetRequest, context: grpc.aio.ServicerContext
    ) -> api.EvaluateFleetResponse:
        book = self._state.book
        fleet, plan_request = converters.evaluate_request_from_proto(request, book)
        limit = _time_budget_s(context, self._state.settings)
        result = await self._gate.run(lambda cancel: domain_calls.evaluate(
            fleet, plan_request, book, limit, cancel, compare_with_optimal=request.compare_with_optimal))
        _record_solver(domain_calls.log_stats(result.plan.solution))
        response = converters.evaluation_to_proto(result, book)
        response.provenance.CopyFrom(converters.plan_provenance(result.plan, **self._versions()))
        return response

    @grpc_errors
    async def EstimatePerformance(
        self, request: api.EstimatePerformanceRequest, context: grpc.aio.ServicerContext
    ) -> api.EstimatePerformanceResponse:
        book = self._state.book
        cases = converters.performance_cases_from_proto(request, book)
        valid = [c for c in cases if isinstance(c, dict)]
        results = await asyncio.to_thread(domain_calls.estimate_cases, valid, book) if valid else []
        response = converters.performance_results_to_proto(request, cases, results)
        response.provenance.CopyFrom(converters.provenance_to_proto(book, **self._versions()))
        return response

    @grpc_errors
    async def AnalyzeBreakEven(
        self, request: api.AnalyzeBreakEvenRequest, context: grpc.aio.ServicerContext
    ) -> api.AnalyzeBreakEvenResponse:
        book = self._state.book
        query = converters.break_even_request_from_proto(request, book)
        limit = _time_budget_s(context, self._state.settings)
        result = await self._gate.run(lambda cancel: domain_calls.break_even(
            query.request, book, limit, cancel, gpu=query.gpu, fleet=query.fleet, utilization=query.utilization))
        _record_solver(domain_calls.log_stats(result.plan.solution))
        response = converters.break_even_analysis_to_proto(result, book)
        response.provenance.CopyFrom(converters.plan_provenance(result.plan, **self._versions()))
        return response

    @grpc_errors
    async def ListCatalog(self, request: api.ListCatalogRequest, context: grpc.aio.ServicerContext) -> api.ListCatalogResponse:
        kinds = converters.catalog_kinds_from_proto(request)
        response = converters.catalog_to_proto(self._state.book, kinds)
        response.provenance.CopyFrom(converters.provenance_to_proto(self._state.book, **self._versions()))
        return response

    @grpc_errors
    async def SweepPlans(
        self, request: api.SweepPlansRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[api.SweepPlansResponse]:
        book = self._state.book
        sweep = converters.sweep_request_from_proto(request, book)
        total = len(sweep.values)
        limit = _time_budget_s(context, self._state.settings)
        # Points run two at a time; each gets its share of the caller's time limit.
        per_point = max(0.5, min(sweep.request.options.time_limit_s, 2.0 * limit / max(1, total)))
        started = time.perf_counter()
        yield api.SweepPlansResponse(progress=api.SweepProgress(points_done=0, points_total=total))
        points = 0
        async for item in self._gate.stream(lambda cancel: domain_calls.sweep(
                sweep.request, book, sweep.axis, sweep.values, cancel, workload=sweep.workload,
                time_limit_s_per_point=per_point)):
            if isinstance(item, planner.SweepPoint):
                points += 1
                yield converters.sweep_point_to_proto(item)
                yield api.SweepPlansResponse(progress=api.SweepProgress(points_done=item.points_done,
                                                                        points_total=item.points_total))
            else:
                _record_solver({"points": points, "seconds": round(time.perf_counter() - started, 3)})
                yield api.SweepPlansResponse(
                    frontier=converters.frontier_to_proto(item),
                    provenance=converters.provenance_to_proto(book, **self._versions()),
                )
