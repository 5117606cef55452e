"""PlanStore messages ↔ the store's records (``store.records``), and what PlanFleet's ``save``
fields ask for. The store keeps the request and the response as serialized bytes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from google.protobuf import timestamp_pb2

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from api.fleetplan.v1 import scenario_pb2
from service.convert.violations import raise_if
from solver.errors import FieldViolation
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


def reprice_request(stored: StoredPlan) -> api.EvaluateFleetRequest:
    """The saved plan's fleet and scenario as an EvaluateFleet request (INVALID_ARGUMENT on
    ``plan_id`` when the saved plan has no fleet to reprice)."""
    request = api.PlanFleetRequest.FromString(stored.request)
    plan = saved_response(stored).plan
    if not plan.fleet:
        raise_if(
            [FieldViolation("plan_id", "the saved plan has no fleet (no plan was found); nothing to reprice")]
        )
    fleet = scenario_pb2.Fleet(
        items=[
            scenario_pb2.FleetItem(
                gpu_id=line.gpu_id,
                mode=line.mode,
                count=line.gpu_count,
                owned=line.owned,
                server_id=line.server_id,
            )
            for line in plan.fleet
        ]
    )
    return api.EvaluateFleetRequest(
        fleet=fleet,
        workloads=request.workloads,
        constraints=request.constraints,
        pricebook_overrides=request.pricebook_overrides,
        solver_options=request.solver_options,
        compare_with_optimal=False,
    )
