"""The batch CLI's own message → dict conversion (``clients.cli.estimate.message_fields``) is
``json_format.MessageToDict`` with proto field names and unset fields printed: same keys, same
order, same values — for messages of every estimate type filled at random (non-finite numbers,
unset sub-messages, enums, repeated fields and the cases' int64 lengths included)."""

from __future__ import annotations

import json
import math

from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from api.fleetplan.v1 import performance_pb2
from clients.cli.estimate import message_fields

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-300, 1.5, math.inf, -math.inf, math.nan]),
)


def _expected(message: Message) -> str:
    reference = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return json.dumps(reference)


def _fill(message: Message, draw: st.DrawFn) -> None:
    for field in message.DESCRIPTOR.fields:
        if draw(st.booleans()):
            continue  # left unset
        kind = field.cpp_type
        if kind == field.CPPTYPE_MESSAGE:
            if not field.is_repeated:
                _fill(getattr(message, field.name), draw)
            continue
        if kind in (field.CPPTYPE_DOUBLE, field.CPPTYPE_FLOAT):
            value: object = draw(NUMBERS)
        elif kind == field.CPPTYPE_BOOL:
            value = draw(st.booleans())
        elif kind == field.CPPTYPE_ENUM:
            value = draw(st.sampled_from([v.number for v in field.enum_type.values]))
        elif kind == field.CPPTYPE_STRING:
            value = draw(st.text(max_size=8))
        elif kind in (field.CPPTYPE_INT64, field.CPPTYPE_UINT64):
            value = draw(st.integers(min_value=0, max_value=2**40))
        else:
            value = draw(st.integers(min_value=0, max_value=2**20))
        if field.is_repeated:
            getattr(message, field.name).extend([value, value])
        else:
            setattr(message, field.name, value)


@st.composite
def _messages(draw: st.DrawFn) -> Message:
    kind = draw(
        st.sampled_from(
            [
                performance_pb2.InferenceEstimate,
                performance_pb2.TrainingEstimate,
                performance_pb2.PerformanceResult,
                performance_pb2.PerformanceCase,
            ]
        )
    )
    message: Message = kind()
    _fill(message, draw)
    return message


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_message_fields_is_message_to_dict(message: Message) -> None:
    assert json.dumps(message_fields(message)) == _expected(message)


def test_an_empty_estimate_prints_every_field_without_presence() -> None:
    empty = performance_pb2.InferenceEstimate()
    assert json.dumps(message_fields(empty)) == _expected(empty)
    assert "memory" not in message_fields(empty)  # a sub-message has presence: unset, not printed
