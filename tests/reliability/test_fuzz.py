"""Fuzzing every RPC of the running server with hypothesis.

Requests are drawn from the message descriptors: every field may be set to a valid-but-extreme or
invalid value (0, −1, 2^31−1, 10^13, NaN, ±inf, 1e−300, empty and over-cap lists, unknown enum
numbers, catalogue ids and random text), on top of either an empty message or a valid one. Every
answer must be OK or a documented error code carrying an ``ErrorInfo`` — never INTERNAL, UNKNOWN or
an unexplained status — and the server must still be healthy afterwards. Raw garbage bytes too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import error_reason, small_plan

from api.fleetplan.v1 import catalog_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from service.request_limits import wire_ceiling_bytes
from service.server import ThreadedServer

SERVICE = "/fleetplan.v1.FleetPlanner/"
DOCUMENTED = {
    grpc.StatusCode.INVALID_ARGUMENT,  # bad input (BadRequest) and over-cap requests
    grpc.StatusCode.RESOURCE_EXHAUSTED,  # solve queue full (RetryInfo)
    grpc.StatusCode.DEADLINE_EXCEEDED,  # no verified plan before the deadline
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNIMPLEMENTED,
}
CALL_TIMEOUT_S = 20.0

INTS = [0, 1, -1, 2, 7, 24, 25, 100, 501, 10**6, 2**31 - 1, -(2**31)]
INT64S = [*INTS, 10**13, 10**15 + 1, 2**63 - 1, -(2**63)]
DOUBLES = [
    0.0,
    -0.0,
    1e-300,
    1e-9,
    0.01,
    0.5,
    1.0,
    2.0,
    24.0,
    1e3,
    1e10,
    1e13,
    1e300,
    -1.0,
    math.inf,
    -math.inf,
    math.nan,
]
TEXTS = [
    "",
    "h200-sxm",
    "h100-sxm",
    "rtx-pro-6000-ws",
    "rtx-5090",
    "Qwen/Qwen3-14B",
    "meta-llama/Llama-3.3-70B-Instruct",
    "USD",
    "KRW",
    "XXX",
    "500000000 KRW",
    "1e309 USD",
    "-5 USD",
    "NaN",
    "chat",
    "pue",
    "a" * 300,
    "é\u0000\ud7ff",
]


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    t = field.type
    if t in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
        return st.sampled_from(INTS) | st.integers(-(2**31), 2**31 - 1)
    if t in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64):
        return st.sampled_from(INT64S) | st.integers(-(2**63), 2**63 - 1)
    if t in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if t == FieldDescriptor.TYPE_DOUBLE:
        return st.sampled_from(DOUBLES) | st.floats(allow_nan=True, allow_infinity=True)
    if t == FieldDescriptor.TYPE_FLOAT:
        return st.floats(width=32, allow_nan=True, allow_infinity=True)
    if t == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if t == FieldDescriptor.TYPE_STRING:
        return st.sampled_from(TEXTS) | st.text(max_size=12)
    if t == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    if t == FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        return st.sampled_from(numbers) | st.integers(-3, 1000)  # unknown numbers too (open enums)
    raise AssertionError(f"unhandled field type {t}")


def _fill(draw: Callable[[st.SearchStrategy[Any]], Any], message: Message, depth: int) -> None:
    descriptor = message.DESCRIPTOR
    for field in descriptor.fields:
        if draw(st.integers(0, 3)) != 0:  # set about a quarter of the fields
            continue
        is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
        repeated = field.is_repeated
        if field.message_type is not None and depth >= 5:
            continue
        if is_map:
            target = getattr(message, field.name)
            value_field = field.message_type.fields_by_name["value"]
            for _ in range(draw(st.integers(0, 2))):
                key = draw(st.sampled_from(TEXTS))
                if value_field.message_type is not None:
                    _fill(draw, target[key], depth + 1)
                else:
                    target[key] = draw(_scalar(value_field))
        elif repeated:
            target = getattr(message, field.name)
            # Mostly short lists; sometimes long ones that cross the request caps.
            count = draw(
                st.sampled_from([0, 1, 2, 3, 25, 600])
                if field.message_type is None
                else st.sampled_from([0, 1, 2, 3])
            )
            if field.message_type is not None:
                for _ in range(count):
                    _fill(draw, target.add(), depth + 1)
            else:
                target.extend(
                    [draw(_scalar(field))] * count
                    if count > 3
                    else [draw(_scalar(field)) for _ in range(count)]
                )
        elif field.message_type is not None:
            _fill(draw, getattr(message, field.name), depth + 1)
        else:
            setattr(message, field.name, draw(_scalar(field)))


def requests(message_type: type[Message], bases: list[Message]) -> st.SearchStrategy[Message]:
    @st.composite
    def build(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Message:
        message = message_type()
        base = draw(st.sampled_from([None, *bases]))
        if base is not None:
            message.CopyFrom(base)
        _fill(draw, message, 0)
        return message

    return build()


def _check_answer(call: Callable[[], Any]) -> None:
    try:
        call()
    except grpc.RpcError as error:
        code = error.code()
        assert code in DOCUMENTED, f"undocumented status {code}: {error.details()}"
        if code == grpc.StatusCode.DEADLINE_EXCEEDED and rpc_status.from_call(error) is None:
            return  # the client's own deadline (a slow but valid request), not a server answer
        status = rpc_status.from_call(error)
        assert status is not None, f"{code} without rich details: {error.details()}"
        assert any(d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR) for d in status.details), status


def _assert_healthy(channel: grpc.Channel) -> None:
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

PLAN = small_plan(time_limit_s=2.0, compute_sensitivity=False)


def _unary(channel: grpc.Channel, method: str, message_type: type[Message]) -> Callable[[Message], Any]:
    call = channel.unary_unary(
        SERVICE + method, request_serializer=message_type.SerializeToString, response_deserializer=lambda b: b
    )
    return lambda request: call(request, timeout=CALL_TIMEOUT_S)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "message_type", "bases"),
    [
        ("PlanFleet", api.PlanFleetRequest, [PLAN]),
        (
            "EvaluateFleet",
            api.EvaluateFleetRequest,
            [api.EvaluateFleetRequest(workloads=PLAN.workloads, solver_options=PLAN.solver_options)],
        ),
        (
            "AnalyzeBreakEven",
            api.AnalyzeBreakEvenRequest,
            [api.AnalyzeBreakEvenRequest(workloads=PLAN.workloads)],
        ),
        ("EstimatePerformance", api.EstimatePerformanceRequest, []),
        ("ListCatalog", api.ListCatalogRequest, []),
    ],
)
def test_unary_rpcs_answer_ok_or_a_documented_error(
    server: ThreadedServer, method: str, message_type: type[Message], bases: list[Message]
) -> None:
    with grpc.insecure_channel(server.address) as channel:
        send = _unary(channel, method, message_type)

        @FUZZ
        @given(requests(message_type, bases))
        def fuzz(request: Message) -> None:
            _check_answer(lambda: send(request))

        fuzz()
        _assert_healthy(channel)


@pytest.mark.slow
def test_sweep_stream_answers_ok_or_a_documented_error(server: ThreadedServer) -> None:
    base = api.SweepPlansRequest(
        base=PLAN, dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER, values=[1.0, 2.0]
    )
    with grpc.insecure_channel(server.address) as channel:
        call = channel.unary_stream(
            SERVICE + "SweepPlans",
            request_serializer=api.SweepPlansRequest.SerializeToString,
            response_deserializer=lambda b: b,
        )

        @settings(FUZZ, max_examples=25)
        @given(requests(api.SweepPlansRequest, [base]))
        def fuzz(request: Message) -> None:
            _check_answer(lambda: list(call(request, timeout=CALL_TIMEOUT_S)))

        fuzz()
        _assert_healthy(channel)


METHODS = ["PlanFleet", "EvaluateFleet", "EstimatePerformance", "AnalyzeBreakEven", "ListCatalog"]


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    payload=st.binary(min_size=1, max_size=256)
    | st.sampled_from([b"\xff" * 10, b"\x0a\xff\xff\xff\xff\x0f", b"\x08" + b"\x80" * 20]),
    method=st.sampled_from([*METHODS, "SweepPlans"]),
)
def test_raw_garbage_bytes_are_refused_cleanly(channel: grpc.Channel, payload: bytes, method: str) -> None:
    if method == "SweepPlans":
        stream = channel.unary_stream(SERVICE + method)
        _check_answer(lambda: list(stream(payload, timeout=CALL_TIMEOUT_S)))
    else:
        _check_answer(lambda: channel.unary_unary(SERVICE + method)(payload, timeout=CALL_TIMEOUT_S))


def test_garbage_is_invalid_argument_naming_the_request(channel: grpc.Channel) -> None:
    with pytest.raises(grpc.RpcError) as info:
        channel.unary_unary(SERVICE + "PlanFleet")(b"\xff\xff\xff", timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(info.value)
    assert status is not None
    bad = error_details_pb2.BadRequest()
    assert any(d.Unpack(bad) for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR))
    assert bad.field_violations[0].field == "(request)"
    _assert_healthy(channel)


def test_oversized_message_is_refused_naming_the_limit_and_server_survives(channel: grpc.Channel) -> None:
    # 17 MiB: over the server's 16 MiB max_message_bytes. Refused before decoding, with the limit and
    # the setting that raises it (gRPC's own refusal would be a bare RESOURCE_EXHAUSTED).
    huge = api.ListCatalogRequest(kinds=[catalog_pb2.CATALOG_KIND_GPU] * (17 * 1024 * 1024))
    with pytest.raises(grpc.RpcError) as info:
        channel.unary_unary(
            SERVICE + "ListCatalog", request_serializer=api.ListCatalogRequest.SerializeToString
        )(huge, timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_reason(info.value) == "MESSAGE_TOO_LARGE"
    details = info.value.details() or ""
    assert f"at most {16 * 1024 * 1024:,}" in details
    assert "--max-message-bytes" in details and "FLEETPLAN_MAX_MESSAGE_BYTES" in details
    _assert_healthy(channel)


def test_message_over_the_wire_ceiling_is_refused_by_grpc(channel: grpc.Channel) -> None:
    # Past WIRE_CEILING_FACTOR × the limit the transport refuses it unread (memory stays bounded).
    huge = api.ListCatalogRequest(
        kinds=[catalog_pb2.CATALOG_KIND_GPU] * (wire_ceiling_bytes(16 * 1024 * 1024) + 1)
    )
    with pytest.raises(grpc.RpcError) as info:
        channel.unary_unary(
            SERVICE + "ListCatalog", request_serializer=api.ListCatalogRequest.SerializeToString
        )(huge, timeout=60)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    _assert_healthy(channel)
