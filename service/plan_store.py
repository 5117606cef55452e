"""The PlanStore servicer: saved plans read, listed, deleted, compared and re-priced. Thin: the
ids and filters are converted by ``service.convert.plan_store``, the differences computed by
``service.convert.plan_diff``, re-pricing runs the EvaluateFleet handler itself (today's pricebook
and model, the same solve slots), and the store is reached through ``service.plan_archive``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from api.fleetplan.v1 import plan_store_pb2_grpc as store_rpc
from pricebook.schema import Pricebook
from service.convert.plan import notice_to_proto
from service.convert.plan_diff import compare, reprice
from service.convert.plan_store import (
    list_query,
    plan_id_from,
    reprice_request,
    saved_plan_to_proto,
    saved_response,
)
from service.errors import grpc_errors
from service.plan_archive import PlanArchive
from solver.planner.notices import offers_withdrawn

Evaluate = Callable[
    [api.EvaluateFleetRequest, grpc.aio.ServicerContext], Awaitable[api.EvaluateFleetResponse]
]
"""The EvaluateFleet handler (re-pricing goes through it)."""


class PlanStoreServicer(store_rpc.PlanStoreServicer):
    def __init__(self, archive: PlanArchive, evaluate: Evaluate, book: Callable[[], Pricebook]) -> None:
        self._archive = archive
        self._evaluate = evaluate
        self._book = book
        """Today's pricebook (the one EvaluateFleet prices with)."""

    @grpc_errors
    async def GetPlan(
        self, request: store_api.GetPlanRequest, context: grpc.aio.ServicerContext
    ) -> store_api.GetPlanResponse:
        stored = await self._archive.get(plan_id_from("plan_id", request.plan_id))
        return store_api.GetPlanResponse(plan=saved_plan_to_proto(stored, with_bodies=True))

    @grpc_errors
    async def ListPlans(
        self, request: store_api.ListPlansRequest, context: grpc.aio.ServicerContext
    ) -> store_api.ListPlansResponse:
        where, page_size = list_query(request)
        page = await self._archive.list(where, page_size, request.page_token)
        return store_api.ListPlansResponse(
            plans=[saved_plan_to_proto(p, with_bodies=False) for p in page.plans],
            next_page_token=page.next_page_token,
        )

    @grpc_errors
    async def DeletePlan(
        self, request: store_api.DeletePlanRequest, context: grpc.aio.ServicerContext
    ) -> store_api.DeletePlanResponse:
        await self._archive.delete(plan_id_from("plan_id", request.plan_id))
        return store_api.DeletePlanResponse()

    @grpc_errors
    async def ComparePlans(
        self, request: store_api.ComparePlansRequest, context: grpc.aio.ServicerContext
    ) -> store_api.ComparePlansResponse:
        base_id = plan_id_from("base_plan_id", request.base_plan_id)
        other_id = plan_id_from("other_plan_id", request.other_plan_id)
        base, other = await self._archive.get(base_id), await self._archive.get(other_id)
        response = compare(saved_response(base), saved_response(other))
        response.base.CopyFrom(saved_plan_to_proto(base, with_bodies=False))
        response.other.CopyFrom(saved_plan_to_proto(other, with_bodies=False))
        return response

    @grpc_errors
    async def RepricePlan(
        self, request: store_api.RepricePlanRequest, context: grpc.aio.ServicerContext
    ) -> store_api.RepricePlanResponse:
        stored = await self._archive.get(plan_id_from("plan_id", request.plan_id))
        call = reprice_request(stored, self._book())
        evaluation = await self._evaluate(call.request, context)
        response = reprice(saved_response(stored), evaluation)
        for notice in offers_withdrawn(call.withdrawn_offers, call.repriced_gpus):
            response.notices.append(notice_to_proto(notice))
            response.reasons.append(notice.text())
        response.saved.CopyFrom(saved_plan_to_proto(stored, with_bodies=False))
        return response
