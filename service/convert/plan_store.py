"""PlanStore messages ↔ the store's records (``store.records``), and what PlanFleet's ``save``
fields ask for. The store keeps the request and the response as serialized bytes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from google.protobuf import timestamp_pb2

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from pricebook.schema import Offer, Pricebook
from service.convert.enums import MODE_FROM_PROTO
from service.convert.scenario import scenario_request
from service.convert.violations import raise_if
from solver.errors import FieldViolation
from solver.pricing.costs import offer_mode
from store import ulid
from store.records import (
    DEFAULT_PAGE_SIZE,
    MAX_KEY_CHARS,
    MAX_LABEL_CHARS,
    MAX_PAGE_SIZE,
    MAX_TAG_CHARS,
    MAX_TAGS,
    PlanFilter,
    StoredPlan,
)

SAVE_FIELDS = ("save", "label", "tags", "request_id")
"""PlanFleetRequest fields that say what to do with the answer, not what to plan."""


@dataclass(frozen=True, slots=True)
class SaveOptions:
    label: str
    tags: tuple[str, ...]
    idempotency_key: str | None


def planning_part(request: api.PlanFleetRequest) -> api.PlanFleetRequest:
    """``request`` without its save fields: two requests that plan the same share one answer."""
    if not (request.save or request.label or request.tags or request.request_id):
        return request
    copy = api.PlanFleetRequest()
    copy.CopyFrom(request)
    for name in SAVE_FIELDS:
        copy.ClearField(name)  # type: ignore[arg-type]
    return copy


def _text_violation(field: str, text: str, limit: int) -> FieldViolation | None:
    if len(text) > limit:
        return FieldViolation(field, f"must be at most {limit} characters (got {len(text)})")
    if text != text.strip() or any(not c.isprintable() for c in text):
        return FieldViolation(field, "must not have leading/trailing spaces or control characters")
    return None


def save_options(request: api.PlanFleetRequest, metadata_request_id: str | None) -> SaveOptions:
    """The label, tags and idempotency key (the ``request_id`` field, else ``x-request-id``)."""
    violations: list[FieldViolation] = []
    if not request.save and (request.label or request.tags or request.request_id):
        violations.append(FieldViolation("save", "label, tags and request_id need save: true"))
    checks = [("label", request.label, MAX_LABEL_CHARS), ("request_id", request.request_id, MAX_KEY_CHARS)]
    checks += [(f"tags[{i}]", tag, MAX_TAG_CHARS) for i, tag in enumerate(request.tags)]
    for field, text, limit in checks:
        problem = _text_violation(field, text, limit)
        if problem is not None:
            violations.append(problem)
    violations += [
        FieldViolation(f"tags[{i}]", "must not be empty") for i, t in enumerate(request.tags) if not t
    ]
    if len(request.tags) > MAX_TAGS:
        violations.append(FieldViolation("tags", f"allows at most {MAX_TAGS} tags (got {len(request.tags)})"))
    raise_if(violations)
    key = request.request_id or (metadata_request_id or "")[:MAX_KEY_CHARS] or None
    return SaveOptions(label=request.label, tags=tuple(request.tags), idempotency_key=key)


def plan_id_from(field: str, text: str) -> str:
    """A plan id given by the caller (INVALID_ARGUMENT unless it is a ULID)."""
    if not text:
        raise_if([FieldViolation(field, "is required (a plan id from PlanFleet with save: true)")])
    if not ulid.is_ulid(text):
        raise_if([FieldViolation(field, f"{text[:40]!r} is not a plan id (26 characters, ULID)")])
    return text.upper()


def _moment(message: timestamp_pb2.Timestamp) -> datetime:
    return message.ToDatetime(tzinfo=UTC)


def list_query(request: store_api.ListPlansRequest) -> tuple[PlanFilter, int]:
    """The filter and page size (0 = the default; above the maximum = the maximum, AIP-158)."""
    violations: list[FieldViolation] = []
    if request.page_size < 0:
        violations.append(FieldViolation("page_size", f"must not be negative (got {request.page_size})"))
    after = _moment(request.created_after) if request.HasField("created_after") else None
    before = _moment(request.created_before) if request.HasField("created_before") else None
    if after is not None and before is not None and after >= before:
        violations.append(FieldViolation("created_before", "must be later than created_after"))
    raise_if(violations)
    size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    where = PlanFilter(
        label=request.label or None, tag=request.tag or None, created_after=after, created_before=before
    )
    return where, size


def saved_plan_to_proto(stored: StoredPlan, *, with_bodies: bool) -> store_api.SavedPlan:
    """The record as a SavedPlan; the summary, status and TCO come from the stored response."""
    created = timestamp_pb2.Timestamp()
    created.FromDatetime(stored.created_at)
    message = store_api.SavedPlan(
        plan_id=stored.plan_id,
        create_time=created,
        label=stored.label,
        tags=list(stored.tags),
        pricebook_version=stored.pricebook_version,
        pricebook_content_hash=stored.pricebook_hash,
        calibration_date=stored.calibration_date,
        fleetplan_version=stored.fleetplan_version,
        requester=stored.requester,
        request_id=stored.idempotency_key or "",
    )
    if stored.response:
        response = api.PlanFleetResponse.FromString(stored.response)
        message.summary = response.plan.summary
        message.status = response.plan.status
        if response.plan.cost.HasField("horizon_tco"):
            message.horizon_tco.CopyFrom(response.plan.cost.horizon_tco)
        if with_bodies:
            message.response.CopyFrom(response)
    if with_bodies and stored.request:
        message.request.CopyFrom(api.PlanFleetRequest.FromString(stored.request))
    return message


def saved_response(stored: StoredPlan) -> api.PlanFleetResponse:
    return api.PlanFleetResponse.FromString(stored.response)


@dataclass(frozen=True, slots=True)
class RepriceCall:
    """The EvaluateFleet request of a re-pricing, and the saved offers today's pricebook no longer
    has (their lines are priced at today's cheapest valid mix)."""

    request: api.EvaluateFleetRequest
    withdrawn_offers: tuple[str, ...]
    repriced_gpus: tuple[str, ...]
    """GPU types whose lines lost their offer."""


def reprice_request(stored: StoredPlan, book: Pricebook) -> RepriceCall:
    """The saved plan's fleet and scenario as an EvaluateFleet request, each line on the offer it
    was saved with (INVALID_ARGUMENT on ``plan_id`` when the saved plan has no fleet to reprice).

    A line keeps its offer when today's pricebook (``book`` with the saved request's overrides)
    still has it for the line's GPU and mode. Otherwise every line of that GPU type and mode goes
    without an offer (EvaluateFleet takes offers on all lines of a type and mode or on none), so
    they are priced with today's cheapest valid mix, and the offer is reported as withdrawn."""
    request = api.PlanFleetRequest.FromString(stored.request)
    plan = saved_response(stored).plan
    if not plan.fleet:
        raise_if(
            [FieldViolation("plan_id", "the saved plan has no fleet (no plan was found); nothing to reprice")]
        )
    today = {o.id: o for o in scenario_request(request, book).book.offers}
    withdrawn = sorted(
        {
            line.offer_id
            for line in plan.fleet
            if line.offer_id and not _offered_today(line.offer_id, line.gpu_id, line.mode, today)
        }
    )
    unpinned = {(line.gpu_id, line.mode) for line in plan.fleet if line.offer_id in withdrawn}
    fleet = scenario_pb2.Fleet(
        items=[
            scenario_pb2.FleetItem(
                gpu_id=line.gpu_id,
                mode=line.mode,
                count=line.gpu_count,
                owned=line.owned,
                server_id=line.server_id,
                offer_id="" if (line.gpu_id, line.mode) in unpinned else line.offer_id,
            )
            for line in plan.fleet
        ]
    )
    evaluate = api.EvaluateFleetRequest(
        fleet=fleet,
        workloads=request.workloads,
        constraints=request.constraints,
        pricebook_overrides=request.pricebook_overrides,
        solver_options=request.solver_options,
        compare_with_optimal=False,
    )
    return RepriceCall(evaluate, tuple(withdrawn), tuple(sorted({gpu for gpu, _ in unpinned})))


def _offered_today(
    offer_id: str, gpu_id: str, mode: common_pb2.AcquisitionMode.ValueType, today: dict[str, Offer]
) -> bool:
    offer = today.get(offer_id)
    return offer is not None and offer.gpu == gpu_id and offer_mode(offer) is MODE_FROM_PROTO.get(mode)
