"""Scenario files: YAML with the shape of a request message (``PlanFleetRequest`` etc.).

YAML → dict → (friendly spellings normalised) → ``json_format.ParseDict``. Friendly spellings:
enum values may be written short and in any case (``precision: fp8``, ``mode: buy``,
``serving_kind: batch`` for ``PRECISION_FP8`` …), and money may be written ``"500000000 KRW"``,
bare (``300000000``: in the request's currency) or with Korean units (``"3억 5천만"``,
``clients.amounts``), each such reading said in the accepted form.
``length_mix`` may be written short or as a CSV of request lengths to bin (``clients.lengths``).
Any problem raises ``ScenarioError`` naming the file, the path inside it and the reason.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from api.fleetplan.v1 import performance_pb2
from clients.amounts import AmountError, canonical, parse_amount
from clients.lengths import LengthMixError, expand_length_mix

_M = TypeVar("_M", bound=Message)


class ScenarioError(ValueError):
    """A scenario file that cannot be used: ``file: path: reason``."""

    def __init__(self, file: str, path: str, reason: str) -> None:
        self.file = file
        self.path = path
        self.reason = reason
        where = f"{file}: {path}" if path else file
        super().__init__(f"{where}: {reason}")


def _join(path: str, name: str | int) -> str:
    if isinstance(name, int):
        return f"{path}[{name}]"
    return f"{path}.{name}" if path else name


def _enum_value(enum: EnumDescriptor, value: Any, file: str, path: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ScenarioError(file, path, f"expected one of {_enum_choices(enum)}, got {value!r}")
    if value in enum.values_by_name:
        return value
    prefix = _enum_prefix(enum)
    candidate = f"{prefix}{value.strip().upper().replace('-', '_').replace(' ', '_')}"
    if candidate in enum.values_by_name:
        return candidate
    raise ScenarioError(file, path, f"unknown value {value!r}; expected one of {_enum_choices(enum)}")


def _enum_prefix(enum: EnumDescriptor) -> str:
    unspecified = next((v.name for v in enum.values if v.number == 0), "")
    return unspecified.removesuffix("UNSPECIFIED")


def _enum_choices(enum: EnumDescriptor) -> str:
    prefix = _enum_prefix(enum)
    return ", ".join(v.name.removeprefix(prefix).lower() for v in enum.values if v.number != 0)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What reading one file needs besides the text: the request's currency (None when the
    message has no constraints), and where the readings of bare or Korean amounts are said."""

    currency: str | None = None
    notes: list[str] = field(default_factory=list)


def _money(value: Any, file: str, path: str, reading: _Reading) -> Any:
    if isinstance(value, Mapping):
        if "amount" in value and not isinstance(value["amount"], str):
            return {**value, "amount": str(value["amount"])}
        return value
    try:
        amount, currency, korean = parse_amount(value)
    except AmountError as exc:
        raise ScenarioError(file, path, str(exc)) from exc
    if currency is None:
        if reading.currency is None:
            raise ScenarioError(file, path, f"give the currency, e.g. '{value} KRW' or '{value} USD'")
        if korean and reading.currency != "KRW":
            raise ScenarioError(
                file,
                path,
                f"{value!r} in a {reading.currency} request: write '{value} KRW' or the amount in "
                f"{reading.currency}",
            )
        currency = reading.currency
    accepted = canonical(amount, currency)
    if korean or not isinstance(value, str) or value.replace(",", "").split() != accepted.split():
        reading.notes.append(f"{file}: {path}: read {value!r} as '{accepted}'")
    text, code = accepted.split()
    return {"amount": text, "currency_code": code}


def _request_currency(data: Any, descriptor: Descriptor) -> str | None:
    """The currency bare amounts are read in: the request's ``constraints.currency_code`` (empty =
    USD), or None for a message without constraints."""
    for f in descriptor.fields:
        if f.message_type is not None and f.message_type.full_name == "fleetplan.v1.Constraints":
            node = data.get(f.name) if isinstance(data, Mapping) else None
            code = node.get("currency_code") if isinstance(node, Mapping) else None
            return code.strip().upper() if isinstance(code, str) and code.strip() else "USD"
    return None


def normalize(
    data: Any, descriptor: Descriptor, file: str, path: str = "", reading: _Reading | None = None
) -> Any:
    """Check field names against the message and expand friendly spellings (see module doc)."""
    reading = reading if reading is not None else _Reading(_request_currency(data, descriptor))
    if descriptor.full_name == "fleetplan.v1.Money":
        data = _money(data, file, path, reading)
    if descriptor.full_name.startswith("google.protobuf."):
        return data
    if not isinstance(data, Mapping):
        raise ScenarioError(
            file, path, f"expected a mapping for {descriptor.name}, got {type(data).__name__}"
        )
    out: dict[str, Any] = {}
    for key, given in data.items():
        name = str(key)
        value = given
        field = descriptor.fields_by_name.get(name) or next(
            (f for f in descriptor.fields if f.json_name == name), None
        )
        here = _join(path, name)
        if field is None:
            known = ", ".join(f.name for f in descriptor.fields)
            raise ScenarioError(file, here, f"unknown field; {descriptor.name} has: {known}")
        if descriptor.full_name == "fleetplan.v1.InferenceWorkload" and field.name == "length_mix":
            try:
                value = expand_length_mix(value, file)
            except LengthMixError as exc:
                raise ScenarioError(file, here, str(exc)) from exc
        out[field.name] = _normalize_field(field, value, file, here, reading)
    return out


def _normalize_field(field: FieldDescriptor, value: Any, file: str, path: str, reading: _Reading) -> Any:
    if value is None:
        raise ScenarioError(file, path, "has no value (remove the line or give a value)")
    is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
    if field.is_repeated and not is_map:
        if not isinstance(value, list):
            raise ScenarioError(file, path, f"expected a list, got {type(value).__name__}")
        return [_normalize_single(field, item, file, _join(path, i), reading) for i, item in enumerate(value)]
    return _normalize_single(field, value, file, path, reading)


def _normalize_single(field: FieldDescriptor, value: Any, file: str, path: str, reading: _Reading) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        return _enum_value(field.enum_type, value, file, path)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry:
            return value
        return normalize(value, field.message_type, file, path, reading)
    return value


def parse_scenario(
    data: Any,
    message_type: type[_M],
    file: str,
    notes: list[str] | None = None,
    *,
    echo: TextIO | None = None,
) -> _M:
    """A dict (parsed YAML/JSON) → the request message, or ``ScenarioError``. How each bare or
    Korean amount was read (``'3억' as '300000000 KRW'``) is added to ``notes`` and said on
    ``echo``, one line each."""
    if data is None:
        raise ScenarioError(file, "", "the file is empty")
    descriptor: Descriptor = message_type.DESCRIPTOR  # type: ignore[assignment]
    reading = _Reading(_request_currency(data, descriptor))
    normalized = normalize(data, descriptor, file, reading=reading)
    if notes is not None:
        notes.extend(reading.notes)
    for note in reading.notes if echo is not None else ():
        print(note, file=echo)
    try:
        return json_format.ParseDict(normalized, message_type())
    except json_format.ParseError as exc:
        raise ScenarioError(file, "", str(exc).replace("..", ".")) from exc


def load_yaml(path: Path) -> Any:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(file, "", f"cannot read: {exc.strerror or exc}") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError(file, where, f"not valid YAML: {getattr(exc, 'problem', None) or exc}") from exc


def load_scenario(path: Path, message_type: type[_M], echo: TextIO | None = None) -> _M:
    """Read a YAML scenario file as ``message_type``; how each bare or Korean amount was read is
    said on ``echo`` (stderr when not given), one line each, so "3억" is answered with the
    accepted form."""
    return parse_scenario(
        load_yaml(path), message_type, str(path), echo=echo if echo is not None else sys.stderr
    )


# Batch-file keys (issue #4 contract) → PerformanceCase proto fields.
DISAGGREGATED_CASE_KEYS = tuple(
    f"{role}_{name}"
    for role in ("prefill", "decode")
    for name in ("gpu", "tp", "workers", "ep", "attention_dp")
)
"""Batch-file keys of a disaggregated case's two roles (also ``fleetplan estimate`` flags)."""
CASE_KEYS = {
    "mode",
    "gpu",
    "num_gpus",
    "tp",
    "model",
    "model_spec",
    "precision",
    "kv_precision",
    "engine",
    "input_len",
    "output_len",
    "concurrency",
    "request_rate",
    "prefix_hit_rate",
    "max_num_seqs",
    "max_batched_tokens",
    "method",
    "tokens",
    "seq_len",
    "arrival",
    "engine_version",
    "id",
    "label",
    "num_scheduler_steps",
    "sla_ttft_p95_ms",
    "sla_tpot_p95_ms",
    "sla_min_per_user_tok_s",
    *DISAGGREGATED_CASE_KEYS,
}


def case_from_json(line: dict[str, Any], where: str) -> performance_pb2.PerformanceCase:
    """A batch-file case (issue #4 field names) → the proto case."""
    data = case_fields(line, where)
    return _case_fast(data) or parse_scenario(data, performance_pb2.PerformanceCase, where)


def case_fields(line: dict[str, Any], where: str) -> dict[str, Any]:
    """A batch-file case's keys as PerformanceCase fields (JSON shape, before parsing)."""
    unknown = sorted(set(line) - CASE_KEYS)
    if unknown:
        raise ScenarioError(
            where, unknown[0], f"unknown field; expected some of {', '.join(sorted(CASE_KEYS))}"
        )
    data: dict[str, Any] = {}
    for key, value in line.items():
        if key == "gpu":
            data["gpu_id"] = value
        elif key == "model":
            data["model"] = {"model_id": value}
        elif key == "model_spec":
            data["model"] = {"spec": value}
        elif key == "concurrency":
            if value == "max":
                data["max_concurrency"] = True
            else:
                data["concurrency"] = value
        elif key == "request_rate":
            data["request_rate_per_s"] = value
        elif key == "label":
            if "id" in line:
                raise ScenarioError(
                    where, "label", "give id or label, not both (label is another name for id)"
                )
            data["id"] = value
        elif key.startswith("sla_"):
            data.setdefault("sla", {})[key.removeprefix("sla_")] = value
        else:
            data[key] = value
    return data


_CASE = performance_pb2.PerformanceCase.DESCRIPTOR
_INT_TYPES = frozenset(
    {
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    }
)
_REAL_TYPES = frozenset({FieldDescriptor.CPPTYPE_DOUBLE})


def _plain_value(field: FieldDescriptor, value: Any) -> Any:
    """``value`` as field ``field`` takes it when it has the field's plain JSON type (an enum by
    its name or short name); ``_NOT_PLAIN`` for anything else (the general parser decides)."""
    kind = field.cpp_type
    if kind == FieldDescriptor.CPPTYPE_STRING and field.type == FieldDescriptor.TYPE_STRING:
        return value if type(value) is str else _NOT_PLAIN
    if kind == FieldDescriptor.CPPTYPE_BOOL:
        return value if type(value) is bool else _NOT_PLAIN
    if kind in _INT_TYPES:
        return value if type(value) is int else _NOT_PLAIN
    if kind in _REAL_TYPES:
        return float(value) if type(value) in (int, float) and math.isfinite(value) else _NOT_PLAIN
    if kind == FieldDescriptor.CPPTYPE_ENUM and type(value) is str:
        try:
            return field.enum_type.values_by_name[_enum_value(field.enum_type, value, "", "")].number
        except ScenarioError:
            return _NOT_PLAIN
    return _NOT_PLAIN


_NOT_PLAIN = object()


def _set_plain(message: Message, data: Mapping[str, Any], descriptor: Descriptor) -> bool:
    """Set every field of ``data`` on ``message``; False when one is not plain (see above), a
    sub-message is not ``model.model_id`` or ``sla``, or two fields of one oneof are given."""
    oneofs: set[str] = set()
    for name, value in data.items():
        field = descriptor.fields_by_name.get(name)
        if field is None or field.is_repeated:
            return False
        if field.containing_oneof is not None and field.containing_oneof.name in oneofs:
            return False
        if field.containing_oneof is not None:
            oneofs.add(field.containing_oneof.name)
        if field.cpp_type == FieldDescriptor.CPPTYPE_MESSAGE:
            if not isinstance(value, Mapping) or not (name == "sla" or set(value) == {"model_id"}):
                return False
            if not _set_plain(getattr(message, name), value, field.message_type):
                return False
            getattr(message, name).SetInParent()
            continue
        plain = _plain_value(field, value)
        if plain is _NOT_PLAIN:
            return False
        try:
            setattr(message, name, plain)
        except (TypeError, ValueError):  # out of range: the general parser says so
            return False
    return True


def _case_fast(data: Mapping[str, Any]) -> performance_pb2.PerformanceCase | None:
    """The case built field by field when each value has its field's plain type (the usual batch
    line: 100,000 of them in a file), without ``json_format``'s per-field overhead; None otherwise,
    and the general parser builds it, or says what is wrong. Both give the same message
    (``tests/clients/test_scenario_cases.py``)."""
    case = performance_pb2.PerformanceCase()
    return case if _set_plain(case, data, _CASE) else None
