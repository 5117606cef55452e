"""Request size caps: every request message is checked on the decoded protobuf *before*
conversion, so a 10^9-point sweep range or a million workloads is refused in microseconds.

- ``RequestLimits`` / ``check_request``: caps on list lengths and ranges. Each violation names the
  field and the limit, e.g. ``workloads: at most 500 workloads per request (limit max_workloads),
  got 501``; the service answers INVALID_ARGUMENT with a BadRequest.
- ``LimitsInterceptor`` applies them to every RPC, and answers undecodable bytes on the wire
  (``MALFORMED_REQUEST``) and requests over ``max_message_bytes`` (``MESSAGE_TOO_LARGE``)
  INVALID_ARGUMENT too, not UNKNOWN or a bare RESOURCE_EXHAUSTED.

The solve gate, deadlines and shutdown of running solves are ``service.limits``'.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message
from grpc_status import rpc_status

from api.contract import MAX_PERFORMANCE_CASES
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from service.errors import bad_request_status
from service.guards import guarded_handler
from solver import domain
from solver.errors import FieldViolation
from solver.units import HOURS_PER_DAY


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """Caps per request. The domain caps (workloads, horizon) come from ``solver.domain``."""

    max_workloads: int = domain.MAX_WORKLOADS
    max_horizon_months: int = domain.MAX_HORIZON_MONTHS
    hour_buckets: int = HOURS_PER_DAY
    """An hourly profile has exactly one weight per hour of the day."""
    max_sweep_points: int = 100
    max_performance_cases: int = MAX_PERFORMANCE_CASES
    max_fleet_items: int = 1000
    max_list_items: int = 1000
    """allowed GPUs, owned GPUs, count bounds, offer overrides, site assumptions, catalogue kinds."""
    max_name_chars: int = domain.MAX_NAME_CHARS


def _too_many(field: str, what: str, limit_name: str, limit: int, got: int) -> FieldViolation:
    return FieldViolation(field, f"at most {limit} {what} per request (limit {limit_name}), got {got}")


def _list_cap(
    out: list[FieldViolation], field: str, items: Sequence[Any], what: str, limits: RequestLimits
) -> None:
    if len(items) > limits.max_list_items:
        out.append(_too_many(field, what, "max_list_items", limits.max_list_items, len(items)))


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _check_workloads(
    out: list[FieldViolation], prefix: str, workloads: Sequence[scenario_pb2.Workload], limits: RequestLimits
) -> None:
    field = _join(prefix, "workloads")
    if len(workloads) > limits.max_workloads:
        out.append(_too_many(field, "workloads", "max_workloads", limits.max_workloads, len(workloads)))
        return  # do not walk a huge list
    for i, workload in enumerate(workloads):
        if len(workload.name) > limits.max_name_chars:
            out.append(
                FieldViolation(
                    f"{field}[{i}].name", f"at most {limits.max_name_chars} characters (limit max_name_chars)"
                )
            )
        if workload.WhichOneof("kind") == "inference":
            profile = workload.inference.hourly_profile
            if profile and len(profile) != limits.hour_buckets:
                out.append(
                    FieldViolation(
                        f"{field}[{i}].inference.hourly_profile",
                        f"exactly {limits.hour_buckets} hour buckets (limit hour_buckets), "
                        f"got {len(profile)}",
                    )
                )


def _check_constraints(
    out: list[FieldViolation], prefix: str, msg: scenario_pb2.Constraints, limits: RequestLimits
) -> None:
    field = _join(prefix, "constraints")
    if msg.HasField("horizon_months") and not 0 < msg.horizon_months <= limits.max_horizon_months:
        out.append(
            FieldViolation(
                f"{field}.horizon_months",
                f"must be 1…{limits.max_horizon_months} months (limit max_horizon_months), "
                f"got {msg.horizon_months}",
            )
        )
    _list_cap(out, f"{field}.allowed_gpu_ids", msg.allowed_gpu_ids, "allowed GPUs", limits)
    _list_cap(out, f"{field}.allowed_modes", msg.allowed_modes, "acquisition modes", limits)
    _list_cap(out, f"{field}.owned_gpus", msg.owned_gpus, "owned GPU lines", limits)
    _list_cap(out, f"{field}.count_bounds", msg.count_bounds, "count bounds", limits)


def _check_overrides(
    out: list[FieldViolation], prefix: str, msg: scenario_pb2.PricebookOverrides, limits: RequestLimits
) -> None:
    field = _join(prefix, "pricebook_overrides")
    _list_cap(out, f"{field}.offers", msg.offers, "offer overrides", limits)
    _list_cap(out, f"{field}.site_assumptions", list(msg.site_assumptions.fields), "site assumptions", limits)


def _check_scenario(out: list[FieldViolation], prefix: str, message: Any, limits: RequestLimits) -> None:
    _check_workloads(out, prefix, message.workloads, limits)
    _check_constraints(out, prefix, message.constraints, limits)
    _check_overrides(out, prefix, message.pricebook_overrides, limits)


def _check_fleet(out: list[FieldViolation], msg: scenario_pb2.Fleet, limits: RequestLimits) -> None:
    if len(msg.items) > limits.max_fleet_items:
        out.append(
            _too_many("fleet.items", "fleet lines", "max_fleet_items", limits.max_fleet_items, len(msg.items))
        )


def check_request(message: Message, limits: RequestLimits = RequestLimits()) -> list[FieldViolation]:
    """Every cap ``message`` exceeds (empty = within limits)."""
    out: list[FieldViolation] = []
    if isinstance(message, api.PlanFleetRequest):
        _check_scenario(out, "", message, limits)
    elif isinstance(message, (api.EvaluateFleetRequest, api.AnalyzeBreakEvenRequest)):
        _check_scenario(out, "", message, limits)
        _check_fleet(out, message.fleet, limits)
    elif isinstance(message, api.EstimatePerformanceRequest):
        if len(message.cases) > limits.max_performance_cases:
            out.append(
                _too_many(
                    "cases",
                    "performance cases",
                    "max_performance_cases",
                    limits.max_performance_cases,
                    len(message.cases),
                )
            )
    elif isinstance(message, api.ListCatalogRequest):
        _list_cap(out, "kinds", message.kinds, "catalogue kinds", limits)
    elif isinstance(message, api.SweepPlansRequest):
        _check_scenario(out, "base", message.base, limits)
        if len(message.values) > limits.max_sweep_points:
            out.append(
                _too_many(
                    "values", "sweep points", "max_sweep_points", limits.max_sweep_points, len(message.values)
                )
            )
        if message.HasField("range") and message.range.points > limits.max_sweep_points:
            out.append(
                _too_many(
                    "range.points",
                    "sweep points",
                    "max_sweep_points",
                    limits.max_sweep_points,
                    message.range.points,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class _Undecodable:
    """A request whose bytes are not a valid message (garbage on the wire)."""

    reason: str


@dataclass(frozen=True, slots=True)
class _TooLarge:
    """A request over ``max_message_bytes`` (never decoded)."""

    size: int
    limit: int


WIRE_CEILING_FACTOR = 4
"""gRPC itself accepts requests up to this many times ``max_message_bytes`` (at most 1 GiB), so that
fleetplan can refuse those over the limit with an error naming the limit and its setting; beyond
the ceiling gRPC refuses them with its own bare RESOURCE_EXHAUSTED."""
MAX_WIRE_CEILING_BYTES = 1024 * 1024 * 1024


def wire_ceiling_bytes(max_message_bytes: int) -> int:
    return min(MAX_WIRE_CEILING_BYTES, WIRE_CEILING_FACTOR * max_message_bytes)


def _lenient(
    deserialize: Callable[[bytes], Any] | None, max_message_bytes: int | None
) -> Callable[[bytes], Any] | None:
    """``deserialize`` that returns ``_Undecodable`` instead of raising (gRPC would answer UNKNOWN),
    and ``_TooLarge`` for a request over ``max_message_bytes`` without decoding it."""
    if deserialize is None:
        return None

    def decode(data: bytes) -> Any:
        if max_message_bytes is not None and len(data) > max_message_bytes:
            return _TooLarge(len(data), max_message_bytes)
        try:
            return deserialize(data)
        except Exception as exc:
            return _Undecodable(f"{type(exc).__name__}: {exc}"[:300])

    return decode


def violations_of(request: Any, limits: RequestLimits) -> list[FieldViolation]:
    """Why ``request`` (decoded, or not) cannot be served; empty = go ahead."""
    if isinstance(request, _Undecodable):
        return [
            FieldViolation("(request)", f"not a valid protobuf message of this method ({request.reason})")
        ]
    if isinstance(request, _TooLarge):
        return [
            FieldViolation(
                "(request)",
                f"the request is {request.size:,} bytes; at most {request.limit:,} are accepted (limit "
                "max_message_bytes: fleetplan serve --max-message-bytes or FLEETPLAN_MAX_MESSAGE_BYTES)",
            )
        ]
    return check_request(request, limits)


def _refusal_reason(request: Any) -> str:
    if isinstance(request, _TooLarge):
        return "MESSAGE_TOO_LARGE"
    return "MALFORMED_REQUEST" if isinstance(request, _Undecodable) else "LIMIT_EXCEEDED"


class LimitsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuses undecodable requests, requests over ``max_message_bytes`` and requests over
    ``RequestLimits`` with INVALID_ARGUMENT, before any handler work."""

    def __init__(self, limits: RequestLimits = RequestLimits(), max_message_bytes: int | None = None) -> None:
        self._limits = limits
        self._max_message_bytes = max_message_bytes

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        limits = self._limits

        async def check(request: Any, context: grpc.aio.ServicerContext) -> None:
            violations = violations_of(request, limits)
            if violations:
                status = bad_request_status(violations, _refusal_reason(request))
                await context.abort_with_status(rpc_status.to_status(status))

        return guarded_handler(
            handler, check, _lenient(handler.request_deserializer, self._max_message_bytes)
        )


__all__ = ["LimitsInterceptor", "RequestLimits", "check_request", "violations_of", "wire_ceiling_bytes"]
