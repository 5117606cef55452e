"""The service's handle on the plan store: saving PlanFleet answers (idempotently) and reading
saved plans back. Store calls block, so they run in worker threads; the store's own errors
(``store.errors``) become statuses in ``service.errors``.

The idempotency key is the request's ``request_id`` field, else the caller's ``x-request-id``
metadata (never the id the server makes up for its log when the caller sent none).
"""

from __future__ import annotations

import asyncio

import grpc

from api.fleetplan.v1 import fleet_planner_pb2 as api
from service.convert.plan_store import save_options, saved_response
from service.interceptors import REQUEST_ID_KEY
from service.security import named_tokens, requester_name
from service.settings import ServerSettings
from store.errors import IdempotencyConflict, StoreDisabled, StoreReadOnly
from store.records import NewPlan, PlanFilter, PlanPage, PlanRepository, StoredPlan
from store.ulid import new_ulid


def _metadata_request_id(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_KEY:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def _request_bytes(request: api.PlanFleetRequest) -> bytes:
    return request.SerializeToString(deterministic=True)


class PlanArchive:
    def __init__(self, store: PlanRepository | None, settings: ServerSettings) -> None:
        self._store = store
        self._tokens = named_tokens(settings)

    def _require(self, *, write: bool) -> PlanRepository:
        if self._store is None:
            raise StoreDisabled()
        if write and not self._store.writable:
            raise StoreReadOnly()
        return self._store

    async def earlier_answer(
        self, request: api.PlanFleetRequest, context: grpc.aio.ServicerContext
    ) -> api.PlanFleetResponse | None:
        """Checks the save fields before any solving; the answer saved under the request's
        idempotency key when this is a retried call, else None."""
        options = save_options(request, _metadata_request_id(context))
        if not request.save:
            return None
        store = self._require(write=True)
        if options.idempotency_key is None:
            return None
        earlier = await asyncio.to_thread(store.find_by_key, options.idempotency_key)
        if earlier is None:
            return None
        if earlier.request != _request_bytes(request):
            raise IdempotencyConflict("request_id", options.idempotency_key)
        return saved_response(earlier)

    async def save(
        self,
        request: api.PlanFleetRequest,
        response: api.PlanFleetResponse,
        context: grpc.aio.ServicerContext,
        *,
        calibration_date: str,
        document: str | None = None,
    ) -> api.PlanFleetResponse:
        """``response`` saved with a new plan id (or the plan a concurrent retry saved first), with
        ``document`` (opaque JSON: the plan's quote) beside it."""
        options = save_options(request, _metadata_request_id(context))
        store = self._require(write=True)
        response.plan_id = new_ulid()
        plan = NewPlan(
            plan_id=response.plan_id,
            request=_request_bytes(request),
            response=response.SerializeToString(deterministic=True),
            label=options.label,
            tags=options.tags,
            pricebook_version=response.provenance.pricebook_version,
            pricebook_hash=response.provenance.pricebook_content_hash,
            calibration_date=calibration_date,
            fleetplan_version=response.provenance.server_version,
            requester=requester_name(context.invocation_metadata(), self._tokens),
            idempotency_key=options.idempotency_key,
            document=document,
        )
        outcome = await asyncio.to_thread(store.save, plan)
        return saved_response(outcome.plan)

    async def get(self, plan_id: str) -> StoredPlan:
        return await asyncio.to_thread(self._require(write=False).get, plan_id)

    async def list(self, where: PlanFilter, page_size: int, page_token: str) -> PlanPage:
        return await asyncio.to_thread(self._require(write=False).list, where, page_size, page_token)

    async def delete(self, plan_id: str) -> None:
        await asyncio.to_thread(self._require(write=True).delete, plan_id)

    async def set_document(self, plan_id: str, document: str | None) -> None:
        """Attach opaque JSON to a saved plan (e.g. a report's data)."""
        await asyncio.to_thread(self._require(write=True).set_document, plan_id, document)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
