"""Each domain error becomes exactly one documented status with AIP-193 details."""

from __future__ import annotations

import pydantic
import pytest
from google.rpc import code_pb2, error_details_pb2, status_pb2

from pricebook.errors import UnknownEntryError
from service.errors import ERROR_DOMAIN, ResourceExhausted, status_for
from solver import domain
from solver.errors import (
    DeadlineExceeded,
    FieldViolation,
    InvalidRequest,
    PlanVerificationError,
    SolveCancelled,
)


def details(status: status_pb2.Status) -> dict[str, object]:
    found: dict[str, object] = {}
    for packed in status.details:
        for kind in (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest, error_details_pb2.RetryInfo):
            if packed.Is(kind.DESCRIPTOR):
                message = kind()
                packed.Unpack(message)
                assert kind.DESCRIPTOR.name not in found, "each detail type at most once (AIP-193)"
                found[kind.DESCRIPTOR.name] = message
    return found


def test_invalid_request_is_invalid_argument_with_one_violation_per_field() -> None:
    status = status_for(
        InvalidRequest(
            [
                FieldViolation("workloads[0].name", "must not be empty"),
                FieldViolation("constraints.horizon_months", "must be at most 120"),
            ]
        )
    )
    assert status.code == code_pb2.INVALID_ARGUMENT
    found = details(status)
    info = found["ErrorInfo"]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert (info.reason, info.domain) == ("INVALID_REQUEST", ERROR_DOMAIN)
    bad = found["BadRequest"]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("workloads[0].name", "must not be empty"),
        ("constraints.horizon_months", "must be at most 120"),
    ]


def test_pydantic_validation_error_is_invalid_argument() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        domain.Sla(ttft_p95_ms=-1)
    status = status_for(info.value)
    assert status.code == code_pb2.INVALID_ARGUMENT
    bad = details(status)["BadRequest"]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert [v.field for v in bad.field_violations] == ["ttft_p95_ms"]


def test_unknown_entry_is_invalid_argument_naming_the_entry() -> None:
    status = status_for(UnknownEntryError("gpu", "h999", ("h100-sxm",)))
    assert status.code == code_pb2.INVALID_ARGUMENT
    found = details(status)
    bad = found["BadRequest"]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert "h999" in bad.field_violations[0].description
    assert "h100-sxm" in bad.field_violations[0].description


@pytest.mark.parametrize(
    ("error", "code", "reason"),
    [
        (SolveCancelled("stop"), code_pb2.CANCELLED, "SOLVE_CANCELLED"),
        (DeadlineExceeded("late"), code_pb2.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"),
        (ResourceExhausted("busy", retry_after_s=1.5), code_pb2.RESOURCE_EXHAUSTED, "SERVER_BUSY"),
        (NotImplementedError("later"), code_pb2.UNIMPLEMENTED, "NOT_IMPLEMENTED"),
        (PlanVerificationError("bug"), code_pb2.INTERNAL, "INTERNAL"),
        (ZeroDivisionError("secret detail"), code_pb2.INTERNAL, "INTERNAL"),
    ],
)
def test_other_errors_map_to_their_codes(error: Exception, code: int, reason: str) -> None:
    status = status_for(error)
    assert status.code == code
    info = details(status)["ErrorInfo"]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert info.reason == reason
    assert len(info.reason) <= 63 and info.reason.isupper()


def test_internal_errors_do_not_leak_the_exception_text() -> None:
    status = status_for(ZeroDivisionError("secret detail"))
    assert "secret" not in status.message
    assert "ZeroDivisionError" not in status.message


def test_resource_exhausted_carries_a_retry_hint() -> None:
    retry = details(status_for(ResourceExhausted("busy", retry_after_s=1.5)))["RetryInfo"]
    assert isinstance(retry, error_details_pb2.RetryInfo)
    assert (retry.retry_delay.seconds, retry.retry_delay.nanos) == (1, 500_000_000)
