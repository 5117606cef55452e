"""Typed convenience client for ``fleetplan.v1.FleetPlanner``.

    from clients import FleetPlannerClient
    with FleetPlannerClient("127.0.0.1:50051") as client:
        response = client.plan_fleet(plan_request)        # a solver.domain.PlanRequest or the proto
        print(response.plan.summary)

Every call has a deadline (``timeout_s``, per call or the client default). Errors are raised as
``FleetPlanError`` carrying the status code, the ``ErrorInfo`` reason and every BadRequest
field violation, decoded from the rich status the server sends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from pydantic import BaseModel

from api.fleetplan.v1 import catalog_pb2, performance_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from clients.scenario import CASE_KEYS, case_from_json
from service.convert.encode import fleet_to_proto, plan_request_to_proto
from solver import domain

DEFAULT_TIMEOUT_S = 120.0
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


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
    if isinstance(case, BaseModel):  # an EstimateCase: its contract fields (not derived/computed ones)
        data = {k: v for k, v in case.model_dump(mode="json", exclude_none=True).items() if k in CASE_KEYS}
    else:
        data = dict(case)
    return case_from_json(data, f"cases[{index}]")


def _plan_proto(request: domain.PlanRequest | api.PlanFleetRequest) -> api.PlanFleetRequest:
    if isinstance(request, api.PlanFleetRequest):
        return request
    return plan_request_to_proto(request)


def _channel_options(extra: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Message-size limits matching the server's, then the caller's own channel options."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        *extra,
    ]


class FleetPlannerClient:
    """Synchronous client; safe to share between threads."""

    def __init__(
        self,
        target: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        bearer_token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        channel_options = _channel_options(options)
        if credentials is not None:
            self._channel = grpc.secure_channel(target, credentials, options=channel_options)
        else:
            self._channel = grpc.insecure_channel(target, options=channel_options)
        self._stub = rpc.FleetPlannerStub(self._channel)
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

    def _call(self, method: Any, request: Any, timeout_s: float | None, request_id: str | None) -> Any:
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        try:
            return method(request, timeout=timeout_s or self.timeout_s, metadata=metadata or None)
        except grpc.RpcError as error:
            raise FleetPlanError.from_rpc_error(error) from None

    # -- RPCs ----------------------------------------------------------------------------------

    def plan_fleet(
        self,
        request: domain.PlanRequest | api.PlanFleetRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.PlanFleetResponse:
        return self._call(self._stub.PlanFleet, _plan_proto(request), timeout_s, request_id)  # type: ignore[no-any-return]

    def export_plan(
        self,
        request: api.ExportPlanRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ExportPlanResponse:
        """A quote of a plan as one document (HTML, PDF or XLSX): its bytes, media type, file name."""
        return self._call(self._stub.ExportPlan, request, timeout_s, request_id)  # type: ignore[no-any-return]

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
                fleet=fleet_to_proto(fleet),
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
        target: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        bearer_token: str | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        channel_options = _channel_options(options)
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(target, credentials, options=channel_options)
        else:
            self._channel = grpc.aio.insecure_channel(target, options=channel_options)
        self._stub = rpc.FleetPlannerStub(self._channel)
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

    async def _call(self, method: Any, request: Any, timeout_s: float | None, request_id: str | None) -> Any:
        metadata = self._metadata + ((("x-request-id", request_id),) if request_id else ())
        try:
            return await method(request, timeout=timeout_s or self.timeout_s, metadata=metadata or None)
        except grpc.RpcError as error:
            raise FleetPlanError.from_rpc_error(error) from None

    async def plan_fleet(
        self,
        request: domain.PlanRequest | api.PlanFleetRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.PlanFleetResponse:
        return await self._call(self._stub.PlanFleet, _plan_proto(request), timeout_s, request_id)  # type: ignore[no-any-return]

    async def export_plan(
        self,
        request: api.ExportPlanRequest,
        *,
        timeout_s: float | None = None,
        request_id: str | None = None,
    ) -> api.ExportPlanResponse:
        return await self._call(self._stub.ExportPlan, request, timeout_s, request_id)  # type: ignore[no-any-return]

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
