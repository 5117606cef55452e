"""Typed convenience client for ``fleetplan.v1.FleetPlanner``.

    from clients import FleetPlannerClient
    with FleetPlannerClient("127.0.0.1:50051") as client:
        response = client.plan_fleet(plan_request)        # a solver.domain.PlanRequest or the proto
        print(response.plan.summary)

Every call has a deadline (``timeout_s``, per call or the client default). Errors are raised as
``FleetPlanError`` carrying the status code, the ``ErrorInfo`` reason and every BadRequest
field violation, decoded from the rich status the server sends.

Several replicas: give several addresses (``["10.0.0.1:50051", "10.0.0.2:50051"]`` or one string
``"10.0.0.1:50051,10.0.0.2:50051"``) or a DNS name that resolves to all of them
(``"dns:///fleetplan-headless:50051"``). The channel balances calls over them with gRPC's own
``round_robin`` policy and retries a call that failed with UNAVAILABLE before the server began
answering it (a replica that is down or draining) on another one: ``SERVICE_CONFIG``; the client
itself retries a call a stopping replica dropped after it had begun (``retry_elsewhere``). A saving
PlanFleet call without a request id gets one, so no retry can ever save the plan twice.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from api.contract import ERROR_DOMAIN
from api.fleetplan.v1 import catalog_pb2, performance_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from api.fleetplan.v1 import plan_store_pb2 as store_api
from api.fleetplan.v1 import plan_store_pb2_grpc as store_rpc
from clients.scenario import CASE_KEYS, case_from_json

if TYPE_CHECKING:  # a client that sends proto messages never imports pydantic or the solver
    from pydantic import BaseModel

    from solver import domain

DEFAULT_TIMEOUT_S = 120.0
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
RETRY_ATTEMPTS = 5
"""Attempts of one call (the first and four retries) when replicas answer UNAVAILABLE."""

SERVICE_CONFIG: dict[str, Any] = {
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [
        {
            "name": [{"service": "fleetplan.v1.FleetPlanner"}, {"service": "fleetplan.v1.PlanStore"}],
            "retryPolicy": {
                "maxAttempts": RETRY_ATTEMPTS,
                "initialBackoff": "0.1s",
                "maxBackoff": "2s",
                "backoffMultiplier": 2,
                # Only UNAVAILABLE (AIP-194): never DEADLINE_EXCEEDED, CANCELLED or INTERNAL.
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ],
}
"""gRPC service config of every channel: round-robin over the resolved addresses, retries of
UNAVAILABLE. gRPC retries only calls the server has not begun answering (no response headers yet)."""


def channel_target(target: str | Sequence[str]) -> str:
    """The gRPC target for one address, a resolver URI (``dns:///…``), or several ``host:port``
    addresses (IP literals: ``ipv4:``/``ipv6:`` lists, which ``round_robin`` spreads calls over)."""
    addresses = [a.strip() for a in target.split(",")] if isinstance(target, str) else [*target]
    addresses = [a for a in addresses if a]
    if not addresses:
        msg = "no server address given"
        raise ValueError(msg)
    if len(addresses) == 1:
        return addresses[0]
    families = set()
    for address in addresses:
        host = address.rsplit(":", 1)[0].strip("[]")
        try:
            families.add(ipaddress.ip_address(host).version)
        except ValueError:
            msg = (
                f"several addresses must be IP literals (got {address!r}); for host names use one "
                "DNS name that resolves to every replica, e.g. dns:///fleetplan-headless:50051"
            )
            raise ValueError(msg) from None
    if len(families) > 1:
        msg = "several addresses must all be IPv4 or all IPv6"
        raise ValueError(msg)
    return f"ipv{families.pop()}:" + ",".join(addresses)


@dataclass(frozen=True, slots=True)
class Violation:
    field: str
    """Proto field path, e.g. ``workloads[2].inference.sla.ttft_p95_ms``."""
    description: str


class FleetPlanError(Exception):
    """A failed RPC with its decoded rich status."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        domain_name: str = "",
        violations: Sequence[Violation] = (),
        retry_after_s: float | None = None,
    ) -> None:
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain_name
        self.violations = tuple(violations)
        self.retry_after_s = retry_after_s
        lines = [f"{code.name}: {message}"]
        lines += [f"  {v.field}: {v.description}" for v in self.violations]
        super().__init__("\n".join(lines))

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> FleetPlanError:
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        message = error.details() if hasattr(error, "details") else str(error)
        reason = domain_name = ""
        violations: list[Violation] = []
        retry: float | None = None
        status = _rich_status(error)
        if status is not None:
            message = status.message or message
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason, domain_name = info.reason, info.domain
                elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    violations += [Violation(v.field, v.description) for v in bad.field_violations]
                elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                    info_retry = error_details_pb2.RetryInfo()
                    detail.Unpack(info_retry)
                    retry = info_retry.retry_delay.seconds + info_retry.retry_delay.nanos / 1e9
        return cls(
            code,
            message or "",
            reason=reason,
            domain_name=domain_name,
            violations=violations,
            retry_after_s=retry,
        )


def _rich_status(error: grpc.RpcError) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` in the ``grpc-status-details-bin`` trailer (sync and aio errors)."""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == rpc_status.GRPC_DETAILS_METADATA_KEY and isinstance(value, bytes):
            return status_pb2.Status.FromString(value)
    return None


def _case_proto(
    case: performance_pb2.PerformanceCase | Mapping[str, Any] | BaseModel, index: int
) -> performance_pb2.PerformanceCase:
    if isinstance(case, performance_pb2.PerformanceCase):
        return case
    if isinstance(case, Mapping):
        data = dict(case)
    else:  # an EstimateCase: its contract fields (not derived/computed ones)
        data = {k: v for k, v in case.model_dump(mode="json", exclude_none=True).items() if k in CASE_KEYS}
    return case_from_json(data, f"cases[{index}]")


# The domain → proto conversion is imported by the calls given solver.domain objects (whose caller
# has imported the solver already), so that a client sending proto messages starts without it.


def _plan_proto(request: domain.PlanRequest | api.PlanFleetRequest) -> api.PlanFleetRequest:
    if isinstance(request, api.PlanFleetRequest):
        return request
    from service.convert.encode import plan_request_to_proto  # noqa: PLC0415 - see above

    return plan_request_to_proto(request)


def _fleet_proto(fleet: domain.Fleet) -> scenario_pb2.Fleet:
    from service.convert.encode import fleet_to_proto  # noqa: PLC0415 - see above

    return fleet_to_proto(fleet)


def _channel_options(extra: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Message-size limits matching the server's, then the caller's own channel options."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.enable_retries", 1),
        ("grpc.service_config", json.dumps(SERVICE_CONFIG)),
        # A DNS TXT record must not replace the policy above (grpcio would take it when present).
        ("grpc.service_config_disable_resolution", 1),
        *extra,
    ]


RETRY_PAUSES_S = (0.05, 0.2, 0.5)
"""Pauses before the client's own retries of a call a stopping replica dropped (``retry_elsewhere``)."""


def retry_elsewhere(error: FleetPlanError) -> bool:
    """Whether a replica dropped the call while stopping, after it had begun answering (so gRPC's
    retry policy no longer applies): UNAVAILABLE ``SHUTTING_DOWN``, or CANCELLED without an
    ErrorInfo (the transport of a stopping server cancels calls that race its GOAWAY; a solve
    fleetplan cancels says ``SOLVE_CANCELLED``, and a sync caller cannot cancel a unary call).
    Safe to call again elsewhere: every call is a read or a plan, and saves carry a request id."""
    if error.code == grpc.StatusCode.UNAVAILABLE:
        return error.reason == "SHUTTING_DOWN"
    return error.code == grpc.StatusCode.CANCELLED and not error.reason


def _retry_pause(pause: float | None, deadline: float, failure: FleetPlanError) -> float | None:
    """The pause before the next attempt, or None to give up and raise ``failure``."""
    if pause is None or time.monotonic() + pause >= deadline or not retry_elsewhere(failure):
        return None
    return pause


def _save_request_id(request: api.PlanFleetRequest, request_id: str | None) -> str | None:
    """A request id for a saving call that has none, so a retried call saves one plan."""
    if request.save and not request.request_id and not request_id:
        return str(uuid.uuid4())
    return request_id


def _export_proto(
    request: api.ExportPlanRequest | None,
    plan_id: str | None,
    report_format: api.ReportFormat.ValueType,
    language: api.ReportLanguage.ValueType,
    title: str,
) -> api.ExportPlanRequest:
    """The ExportPlan request: ``request`` (a scenario, or nothing but the options) with
    ``plan_id`` and the given options set on a copy. A scenario *and* a plan id is refused here,
    as the server would refuse it: the ``source`` oneof holds one of them (on the wire the last
    one set wins, so the server cannot see both)."""
    message = api.ExportPlanRequest()
    if request is not None:
        message.CopyFrom(request)
    if plan_id is not None:
        if message.WhichOneof("source") == "request":
            raise FleetPlanError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "invalid request: plan_id: give a scenario (request) or a saved plan's id, not both",
                reason="INVALID_REQUEST",
                domain_name=ERROR_DOMAIN,
                violations=[Violation("plan_id", "give a scenario (request) or a saved plan's id, not both")],
            )
        message.plan_id = plan_id
    if report_format:
        message.format = report_format
    if language:
        message.language = language
    if title:
        message.title = title
    return message


class FleetPlannerClient:
    """Synchronous client; safe to share between threads."""

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        bearer_token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        channel_options = _channel_options(options)
        address = channel_target(target)
        if credentials is not None:
            self._channel = grpc.secure_channel(address, credentials, options=channel_options)
        else:
            self._channel = grpc.insecure_channel(address, options=channel_options)
        self._stub = rpc.FleetPlannerStub(self._channel)
        self._plans = store_rpc.PlanStoreStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self.timeout_s = timeout_s
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {bearer_token}"),) if bearer_token else ()
        )

    # -- plumbing ------------------------------------------------------------------------------

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> FleetPlannerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(
        self,
        method: Any,
        request: Any,
        timeout_s: float | None,
        request_id: str | None,
        *,
        retry: bool = True,
    ) -> Any:
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        for pause in (*RETRY_PAUSES_S, None):
            try:
                remaining = max(0.001, deadline - time.monotonic())
                return method(request, timeout=remaining, metadata=metadata or None)
            except grpc.RpcError as error:
                failure = FleetPlanError.from_rpc_error(error)
            wait = _retry_pause(pause if retry else None, deadline, failure)
            if wait is None:
                raise failure from None
            time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    # -- RPCs ----------------------------------------------------------------------------------

    def plan_fleet(
        self,
        request: domain.PlanRequest | api.PlanFleetRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.PlanFleetResponse:
        message = _plan_proto(request)
        request_id = _save_request_id(message, request_id)
        return self._call(self._stub.PlanFleet, message, timeout_s, request_id)  # type: ignore[no-any-return]

    # -- saved plans (the PlanStore service) ------------------------------------------------------

    def get_plan(self, plan_id: str, *, timeout_s: float | None = None) -> store_api.SavedPlan:
        """A saved plan with its request and full response."""
        response = self._call(self._plans.GetPlan, store_api.GetPlanRequest(plan_id=plan_id), timeout_s, None)
        return response.plan  # type: ignore[no-any-return]

    def list_plans(
        self, request: store_api.ListPlansRequest | None = None, *, timeout_s: float | None = None
    ) -> store_api.ListPlansResponse:
        """One page of saved plans, newest first (pass ``next_page_token`` back for the next)."""
        message = request or store_api.ListPlansRequest()
        return self._call(self._plans.ListPlans, message, timeout_s, None)  # type: ignore[no-any-return]

    def delete_plan(self, plan_id: str, *, timeout_s: float | None = None) -> None:
        # Not retried by the client: a repeated delete of a deleted plan would say NOT_FOUND.
        request = store_api.DeletePlanRequest(plan_id=plan_id)
        self._call(self._plans.DeletePlan, request, timeout_s, None, retry=False)

    def compare_plans(
        self, base_plan_id: str, other_plan_id: str, *, timeout_s: float | None = None
    ) -> store_api.ComparePlansResponse:
        request = store_api.ComparePlansRequest(base_plan_id=base_plan_id, other_plan_id=other_plan_id)
        return self._call(self._plans.ComparePlans, request, timeout_s, None)  # type: ignore[no-any-return]

    def reprice_plan(self, plan_id: str, *, timeout_s: float | None = None) -> store_api.RepricePlanResponse:
        request = store_api.RepricePlanRequest(plan_id=plan_id)
        return self._call(self._plans.RepricePlan, request, timeout_s, None)  # type: ignore[no-any-return]

    def export_plan(
        self,
        request: api.ExportPlanRequest | None = None,
        *,
        plan_id: str | None = None,
        report_format: api.ReportFormat.ValueType = api.REPORT_FORMAT_UNSPECIFIED,
        language: api.ReportLanguage.ValueType = api.REPORT_LANGUAGE_UNSPECIFIED,
        title: str = "",
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ExportPlanResponse:
        """A quote as one document (HTML, PDF or XLSX): its bytes, media type, file name. The
        quote of a scenario (``request.request``, planned now) or of a saved plan (``plan_id``:
        its quote as saved, not planned again); ``report_format``, ``language`` and ``title``
        set those fields of the request."""
        message = _export_proto(request, plan_id, report_format, language, title)
        return self._call(self._stub.ExportPlan, message, timeout_s, request_id)  # type: ignore[no-any-return]

    def evaluate_fleet(
        self,
        request: api.EvaluateFleetRequest | domain.PlanRequest,
        fleet: domain.Fleet | None = None,
        *,
        compare_with_optimal: bool = True,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.EvaluateFleetResponse:
        if not isinstance(request, api.EvaluateFleetRequest):
            if fleet is None:
                msg = "evaluate_fleet needs a fleet with a domain request"
                raise TypeError(msg)
            plan = _plan_proto(request)
            request = api.EvaluateFleetRequest(
                fleet=_fleet_proto(fleet),
                workloads=plan.workloads,
                constraints=plan.constraints,
                pricebook_overrides=plan.pricebook_overrides,
                solver_options=plan.solver_options,
                compare_with_optimal=compare_with_optimal,
            )
        return self._call(self._stub.EvaluateFleet, request, timeout_s, request_id)  # type: ignore[no-any-return]

    def estimate_performance(
        self,
        request: api.EstimatePerformanceRequest
        | Iterable[performance_pb2.PerformanceCase | Mapping[str, Any] | BaseModel],
        *,
        allow_partial_failure: bool = False,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.EstimatePerformanceResponse:
        """Cases as proto messages, batch-file dicts (issue #4 field names) or
        ``solver.perf.cases.EstimateCase`` objects."""
        if not isinstance(request, api.EstimatePerformanceRequest):
            cases = [_case_proto(case, i) for i, case in enumerate(request)]
            request = api.EstimatePerformanceRequest(cases=cases, allow_partial_failure=allow_partial_failure)
        return self._call(self._stub.EstimatePerformance, request, timeout_s, request_id)  # type: ignore[no-any-return]

    def analyze_break_even(
        self,
        request: api.AnalyzeBreakEvenRequest | domain.PlanRequest,
        *,
        gpu_id: str = "",
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.AnalyzeBreakEvenResponse:
        if not isinstance(request, api.AnalyzeBreakEvenRequest):
            plan = _plan_proto(request)
            request = api.AnalyzeBreakEvenRequest(
                workloads=plan.workloads,
                constraints=plan.constraints,
                pricebook_overrides=plan.pricebook_overrides,
                gpu_id=gpu_id,
            )
        return self._call(self._stub.AnalyzeBreakEven, request, timeout_s, request_id)  # type: ignore[no-any-return]

    def list_catalog(
        self,
        kinds: Sequence[catalog_pb2.CatalogKind.ValueType] | api.ListCatalogRequest = (),
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ListCatalogResponse:
        request = (
            kinds if isinstance(kinds, api.ListCatalogRequest) else api.ListCatalogRequest(kinds=list(kinds))
        )
        return self._call(self._stub.ListCatalog, request, timeout_s, request_id)  # type: ignore[no-any-return]

    def sweep_plans(
        self,
        request: api.SweepPlansRequest | domain.PlanRequest | api.PlanFleetRequest,
        *,
        dimension: api.SweepDimension.ValueType = api.SWEEP_DIMENSION_UNSPECIFIED,
        values: Sequence[float] = (),
        workload_name: str = "",
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> Iterator[api.SweepPlansResponse]:
        """Stream of progress, points and the final frontier; closing the iterator cancels the sweep.

        Give a ``SweepPlansRequest``, or a plan request plus ``dimension`` and ``values``."""
        if not isinstance(request, api.SweepPlansRequest):
            request = api.SweepPlansRequest(
                base=_plan_proto(request),
                dimension=dimension,
                values=list(values),
                workload_name=workload_name,
            )
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        stream = self._stub.SweepPlans(
            request, timeout=timeout_s or self.timeout_s, metadata=metadata or None
        )
        try:
            yield from stream
        except grpc.RpcError as error:
            raise FleetPlanError.from_rpc_error(error) from None
        finally:
            stream.cancel()

    def health(self, service: str = "fleetplan.v1.FleetPlanner", *, timeout_s: float = 5.0) -> str:
        """``SERVING`` / ``NOT_SERVING`` / … of the service (``""`` = the whole server)."""
        try:
            response = self._health.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout_s)
        except grpc.RpcError as error:
            raise FleetPlanError.from_rpc_error(error) from None
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


class AsyncFleetPlannerClient:
    """The same client on ``grpc.aio`` for asyncio applications (``async with``, ``await``)."""

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        bearer_token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        channel_options = _channel_options(options)
        address = channel_target(target)
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(address, credentials, options=channel_options)
        else:
            self._channel = grpc.aio.insecure_channel(address, options=channel_options)
        self._stub = rpc.FleetPlannerStub(self._channel)
        self._plans = store_rpc.PlanStoreStub(self._channel)
        self.timeout_s = timeout_s
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {bearer_token}"),) if bearer_token else ()
        )

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncFleetPlannerClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(
        self,
        method: Any,
        request: Any,
        timeout_s: float | None,
        request_id: str | None,
        *,
        retry: bool = True,
    ) -> Any:
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        for pause in (*RETRY_PAUSES_S, None):
            try:
                remaining = max(0.001, deadline - time.monotonic())
                return await method(request, timeout=remaining, metadata=metadata or None)
            except grpc.RpcError as error:
                failure = FleetPlanError.from_rpc_error(error)
            wait = _retry_pause(pause if retry else None, deadline, failure)
            if wait is None:
                raise failure from None
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def plan_fleet(
        self,
        request: domain.PlanRequest | api.PlanFleetRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.PlanFleetResponse:
        message = _plan_proto(request)
        request_id = _save_request_id(message, request_id)
        return await self._call(self._stub.PlanFleet, message, timeout_s, request_id)  # type: ignore[no-any-return]

    async def get_plan(self, plan_id: str, *, timeout_s: float | None = None) -> store_api.SavedPlan:
        request = store_api.GetPlanRequest(plan_id=plan_id)
        response = await self._call(self._plans.GetPlan, request, timeout_s, None)
        return response.plan  # type: ignore[no-any-return]

    async def list_plans(
        self, request: store_api.ListPlansRequest | None = None, *, timeout_s: float | None = None
    ) -> store_api.ListPlansResponse:
        message = request or store_api.ListPlansRequest()
        return await self._call(self._plans.ListPlans, message, timeout_s, None)  # type: ignore[no-any-return]

    async def delete_plan(self, plan_id: str, *, timeout_s: float | None = None) -> None:
        request = store_api.DeletePlanRequest(plan_id=plan_id)
        await self._call(self._plans.DeletePlan, request, timeout_s, None, retry=False)

    async def compare_plans(
        self, base_plan_id: str, other_plan_id: str, *, timeout_s: float | None = None
    ) -> store_api.ComparePlansResponse:
        request = store_api.ComparePlansRequest(base_plan_id=base_plan_id, other_plan_id=other_plan_id)
        return await self._call(self._plans.ComparePlans, request, timeout_s, None)  # type: ignore[no-any-return]

    async def reprice_plan(
        self, plan_id: str, *, timeout_s: float | None = None
    ) -> store_api.RepricePlanResponse:
        request = store_api.RepricePlanRequest(plan_id=plan_id)
        return await self._call(self._plans.RepricePlan, request, timeout_s, None)  # type: ignore[no-any-return]

    async def export_plan(
        self,
        request: api.ExportPlanRequest | None = None,
        *,
        plan_id: str | None = None,
        report_format: api.ReportFormat.ValueType = api.REPORT_FORMAT_UNSPECIFIED,
        language: api.ReportLanguage.ValueType = api.REPORT_LANGUAGE_UNSPECIFIED,
        title: str = "",
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ExportPlanResponse:
        message = _export_proto(request, plan_id, report_format, language, title)
        return await self._call(self._stub.ExportPlan, message, timeout_s, request_id)  # type: ignore[no-any-return]

    async def evaluate_fleet(
        self,
        request: api.EvaluateFleetRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.EvaluateFleetResponse:
        return await self._call(self._stub.EvaluateFleet, request, timeout_s, request_id)  # type: ignore[no-any-return]

    async def estimate_performance(
        self,
        request: api.EstimatePerformanceRequest
        | Iterable[performance_pb2.PerformanceCase | Mapping[str, Any] | BaseModel],
        *,
        allow_partial_failure: bool = False,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.EstimatePerformanceResponse:
        if not isinstance(request, api.EstimatePerformanceRequest):
            cases = [_case_proto(case, i) for i, case in enumerate(request)]
            request = api.EstimatePerformanceRequest(cases=cases, allow_partial_failure=allow_partial_failure)
        return await self._call(self._stub.EstimatePerformance, request, timeout_s, request_id)  # type: ignore[no-any-return]

    async def analyze_break_even(
        self,
        request: api.AnalyzeBreakEvenRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.AnalyzeBreakEvenResponse:
        return await self._call(self._stub.AnalyzeBreakEven, request, timeout_s, request_id)  # type: ignore[no-any-return]

    async def list_catalog(
        self,
        kinds: Sequence[catalog_pb2.CatalogKind.ValueType] | api.ListCatalogRequest = (),
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ListCatalogResponse:
        request = (
            kinds if isinstance(kinds, api.ListCatalogRequest) else api.ListCatalogRequest(kinds=list(kinds))
        )
        return await self._call(self._stub.ListCatalog, request, timeout_s, request_id)  # type: ignore[no-any-return]

    async def sweep_plans(
        self, request: api.SweepPlansRequest, *, timeout_s: float | None = None, request_id: str | None = None
    ) -> AsyncIterator[api.SweepPlansResponse]:
        """Progress, points and the frontier as they arrive; leaving the loop cancels the sweep."""
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        call = self._stub.SweepPlans(request, timeout=timeout_s or self.timeout_s, metadata=metadata or None)
        try:
            async for message in call:
                yield message
        except grpc.RpcError as error:
            raise FleetPlanError.from_rpc_error(error) from None
        finally:
            call.cancel()
