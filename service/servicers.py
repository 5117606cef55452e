"""The FleetPlanner servicer: convert → call the domain → convert back. Nothing else.

Every handler is wrapped by ``service.errors.grpc_errors`` (the one place domain errors become
statuses). Solves run in worker threads (``asyncio.to_thread``; OR-Tools releases the GIL) behind
``SolveGate``: a semaphore sized from the cores plus a bounded wait queue. When the call is
cancelled or its deadline passes, the solve's ``CancelToken`` fires so the MIP stops.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
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

    async def run(self, fn: Callable[[CancelToken], _T], context: grpc.aio.ServicerContext) -> _T:
        if self._running >= self._slots and self._waiting >= self._max_waiting:
            raise ResourceExhausted(
                f"{self._running} solves running and {self._waiting} waiting; retry shortly", retry_after_s=1.0
            )
        cancel = CancelToken()
        self._waiting += 1
        try:
            await self._semaphore.acquire()
        finally:
            self._waiting -= 1
        self._running += 1
        try:
            return await asyncio.to_thread(fn, cancel)
        except asyncio.CancelledError:
            # Client went away or its deadline passed: stop the MIP, then let the thread finish.
            cancel.cancel()
            raise
        finally:
            self._running -= 1
            self._semaphore.release()


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

    @property
    def gate(self) -> SolveGate:
        return self._gate

    def _provenance_kwargs(self) -> dict[str, Any]:
        return {"performance_model_version": domain_calls.performance_model_version(),
                "server_version": SERVER_VERSION}

    @grpc_errors
    async def PlanFleet(self, request: api.PlanFleetRequest, context: grpc.aio.ServicerContext) -> api.PlanFleetResponse:
        book = self._state.book
        plan_request = converters.plan_request_from_proto(request, book)
        budget = _time_budget_s(context, self._state.settings)
        outcome = await self._gate.run(lambda cancel: domain_calls.plan(plan_request, book, budget, cancel), context)
        _record_solver(outcome.log_stats)
        return api.PlanFleetResponse(
            plan=converters.plan_outcome_to_proto(outcome),
            provenance=converters.provenance_to_proto(outcome.book, overrides_applied=outcome.overrides_applied,
                                                      **self._provenance_kwargs()),
        )

    @grpc_errors
    async def EvaluateFleet(
        self, request: api.EvaluateFleetRequest, context: grpc.aio.ServicerContext
    ) -> api.EvaluateFleetResponse:
        book = self._state.book
        fleet, plan_request = converters.evaluate_request_from_proto(request, book)
        budget = _time_budget_s(context, self._state.settings)
        outcome = await self._gate.run(
            lambda cancel: domain_calls.evaluate(fleet, plan_request, book, budget, cancel,
                                                 compare_with_optimal=request.compare_with_optimal),
            context,
        )
        _record_solver(outcome.log_stats)
        response = converters.evaluation_to_proto(outcome)
        response.provenance.CopyFrom(converters.provenance_to_proto(
            outcome.book, overrides_applied=outcome.overrides_applied, **self._provenance_kwargs()))
        return response

    @grpc_errors
    async def EstimatePerformance(
        self, request: api.EstimatePerformanceRequest, context: grpc.aio.ServicerContext
    ) -> api.EstimatePerformanceResponse:
        book = self._state.book
        cases = converters.performance_cases_from_proto(request, book)
        results = await asyncio.to_thread(domain_calls.estimate_cases, cases, book)
        response = converters.performance_results_to_proto(request, cases, results)
        response.provenance.CopyFrom(converters.provenance_to_proto(book, **self._provenance_kwargs()))
        return response

    @grpc_errors
    async def AnalyzeBreakEven(
        self, request: api.AnalyzeBreakEvenRequest, context: grpc.aio.ServicerContext
    ) -> api.AnalyzeBreakEvenResponse:
        book = self._state.book
        query = converters.break_even_request_from_proto(request, book)
        budget = _time_budget_s(context, self._state.settings)
        outcome = await self._gate.run(lambda cancel: domain_calls.break_even(query, book, budget, cancel), context)
        _record_solver(outcome.log_stats)
        response = converters.break_even_to_proto(outcome)
        response.provenance.CopyFrom(converters.provenance_to_proto(
            outcome.book, overrides_applied=outcome.overrides_applied, **self._provenance_kwargs()))
        return response

    @grpc_errors
    async def ListCatalog(self, request: api.ListCatalogRequest, context: grpc.aio.ServicerContext) -> api.ListCatalogResponse:
        kinds = converters.catalog_kinds_from_proto(request)
        response = converters.catalog_to_proto(self._state.book, kinds)
        response.provenance.CopyFrom(converters.provenance_to_proto(self._state.book, **self._provenance_kwargs()))
        return response

    @grpc_errors
    async def SweepPlans(
        self, request: api.SweepPlansRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[api.SweepPlansResponse]:
        book = self._state.book
        sweep = converters.sweep_request_from_proto(request, book)
        started = time.perf_counter()
        total_budget = _time_budget_s(context, self._state.settings)
        outcomes: list[domain_calls.SweepPointOutcome] = []
        yield api.SweepPlansResponse(progress=api.SweepProgress(points_done=0, points_total=len(sweep.points)))
        for index, point in enumerate(sweep.points):
            remaining = total_budget - (time.perf_counter() - started)
            if remaining <= 0:
                break
            per_point = remaining / (len(sweep.points) - index)
            outcome = await self._gate.run(
                lambda cancel, p=point: domain_calls.sweep_point(p, book, per_point, cancel), context
            )
            outcomes.append(outcome)
            yield api.SweepPlansResponse(point=converters.sweep_point_to_proto(outcome))
            yield api.SweepPlansResponse(
                progress=api.SweepProgress(points_done=index + 1, points_total=len(sweep.points))
            )
        _record_solver({"points": len(outcomes), "seconds": round(time.perf_counter() - started, 3)})
        frontier = converters.frontier_to_proto(outcomes)
        yield api.SweepPlansResponse(
            frontier=frontier,
            provenance=converters.provenance_to_proto(book, **self._provenance_kwargs()),
        )
