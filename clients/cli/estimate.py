"""``fleetplan estimate``: one case from flags (a table), or a JSONL file of cases (JSONL results, one
line per case, each line's own errors in the batch file's field names)."""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import functools
import json
import math
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.internal import type_checkers
from google.protobuf.message import Message

from api.contract import MAX_PERFORMANCE_CASES
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import performance_pb2
from clients import render
from clients.cli.connection import connect
from clients.cli.exits import EXIT_OK
from clients.cli.measured import attach_measurements
from clients.cli.output import emit
from clients.client import FleetPlannerClient
from clients.scenario import DISAGGREGATED_CASE_KEYS, ScenarioError, case_from_json

CASE_FLAGS = (
    "gpu",
    "num_gpus",
    "tp",
    "model",
    "precision",
    "kv_precision",
    "engine",
    "engine_version",
    "arrival",
    "max_num_seqs",
    "max_batched_tokens",
    "input_len",
    "output_len",
    "request_rate",
    "prefix_hit_rate",
    "method",
    "tokens",
    "seq_len",
    "sla_ttft_p95_ms",
    "sla_tpot_p95_ms",
    "sla_min_per_user_tok_s",
    *DISAGGREGATED_CASE_KEYS,
)
"""Flags that are batch-file fields of the same name."""

_FILE_NAMES = {
    "gpu_id": "gpu",
    "model.model_id": "model",
    "model": "model",
    "request_rate_per_s": "request_rate",
    "max_concurrency": "concurrency",
    "sla.ttft_p95_ms": "sla_ttft_p95_ms",
    "sla.tpot_p95_ms": "sla_tpot_p95_ms",
    "sla.min_per_user_tok_s": "sla_min_per_user_tok_s",
}


def file_field(proto_path: str) -> str:
    """``cases[3].model.spec.layers`` → ``model_spec.layers`` (the batch file's own field names)."""
    field = (
        proto_path.split("].", 1)[1] if proto_path.startswith("cases[") and "]." in proto_path else proto_path
    )
    if field.startswith("model.spec."):
        return "model_spec." + field.removeprefix("model.spec.")
    return _FILE_NAMES.get(field, field)


def flag_name(proto_path: str) -> str:
    """``cases[0].input_len`` → ``--input-len`` (errors of a case given by flags)."""
    field = file_field(proto_path)
    if field.startswith("model_spec."):
        field = field.removeprefix("model_spec.")
    return "--" + field.replace("_", "-")


def case_from_flags(args: argparse.Namespace) -> performance_pb2.PerformanceCase:
    line: dict[str, Any] = {"mode": args.mode}
    for key in CASE_FLAGS:
        value = getattr(args, key)
        if value is not None:
            line[key] = value
    if args.concurrency is not None:
        line["concurrency"] = "max" if args.concurrency == "max" else int(args.concurrency)
    if args.params_b is not None:
        line.pop("model", None)
        line["model_spec"] = {
            "params_b": args.params_b,
            **({"active_params_b": args.active_params_b} if args.active_params_b else {}),
        }
    return case_from_json(line, "flags")


@dataclass(frozen=True)
class BatchLine:
    """One line of a batch file: its fields as read, and either a case to estimate or the output
    row that reports why it cannot be estimated."""

    source: dict[str, Any]
    case: performance_pb2.PerformanceCase | None
    error_row: dict[str, Any] | None


def read_batch_line(number: int, text: str, where: str) -> BatchLine:
    try:
        line = json.loads(text)
    except json.JSONDecodeError as exc:
        return BatchLine(
            {}, None, {"line": number, "error": {"field": "", "reason": f"not valid JSON: {exc.msg}"}}
        )
    if not isinstance(line, dict):
        error = {"field": "", "reason": "each line must be a JSON object"}
        return BatchLine({}, None, {"line": number, "error": error})
    try:
        return BatchLine(line, case_from_json(line, where), None)
    except ScenarioError as exc:
        return BatchLine(line, None, {**line, "error": {"field": file_field(exc.path), "reason": exc.reason}})


_FLOAT_TYPES = (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE)
_INT64_TYPES = (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64)


def _json_value(field: FieldDescriptor, value: Any) -> Any:
    """One field's value as ``json_format`` writes it (proto3 JSON: int64 as text, enums by name,
    non-finite numbers as "Infinity"/"NaN", 32-bit floats at their shortest)."""
    kind = field.cpp_type
    if kind == FieldDescriptor.CPPTYPE_MESSAGE:
        return message_fields(value)
    if kind in _FLOAT_TYPES:
        if math.isinf(value):
            return "-Infinity" if value < 0 else "Infinity"
        if math.isnan(value):
            return "NaN"
        if kind == FieldDescriptor.CPPTYPE_FLOAT:
            return type_checkers.ToShortestFloat(value)  # type: ignore[attr-defined]
        return value
    if kind in _INT64_TYPES:
        return str(value)
    if kind == FieldDescriptor.CPPTYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else value
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode("utf-8")
    return value


@functools.cache
def _unset_defaults(descriptor: Descriptor) -> tuple[tuple[str, Any], ...]:
    """(name, JSON value) of every field printed when unset: those without presence."""
    return tuple(
        (f.name, [] if f.is_repeated else _json_value(f, f.default_value))
        for f in descriptor.fields
        if not f.has_presence
    )


def message_fields(message: Message) -> dict[str, Any]:
    """``json_format.MessageToDict(message, preserving_proto_field_name=True,
    always_print_fields_with_no_presence=True)`` for the estimate messages (no maps, Any or
    well-known types), the same keys in the same order, without its per-field overhead: a batch of
    100,000 cases writes 100,000 of them (``tests/clients/cli/test_estimate_rows.py`` compares)."""
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        out[field.name] = (
            [_json_value(field, v) for v in value] if field.is_repeated else _json_value(field, value)
        )
    for name, default in _unset_defaults(message.DESCRIPTOR):
        if name not in out:
            out[name] = list(default) if isinstance(default, list) else default
    return out


def result_row(result: performance_pb2.PerformanceResult, source: dict[str, Any]) -> dict[str, Any]:
    """One output line of the batch file: the case's fields plus the estimate (issue #4 names)."""
    row = dict(source)
    outcome = result.WhichOneof("outcome")
    if outcome is None or outcome == "error":
        row["error"] = {"field": file_field(result.error.field), "reason": result.error.reason}
        return row
    row.update(message_fields(getattr(result, outcome)))
    if result.architecture_assumed:
        row["architecture_assumed"] = True
    if result.warnings:
        row["warnings"] = list(result.warnings)
    return row


def cmd_estimate(args: argparse.Namespace, out: TextIO) -> int:
    if not args.cases:
        request = api.EstimatePerformanceRequest(cases=[case_from_flags(args)])
        attach_measurements(args, request.measurements)
        with connect(args) as one:
            response = one.estimate_performance(request)
        emit(args, response, render.render_estimates(response, markdown=args.markdown), out)
        return EXIT_OK
    path = Path(args.cases)
    with contextlib.ExitStack() as stack:
        sink: TextIO = (
            stack.enter_context(Path(args.output).open("w", encoding="utf-8")) if args.output else out
        )
        lines = stack.enter_context(path.open(encoding="utf-8"))
        batch = _Batch(
            stack, args, estimate_workers=not args.target and _line_count(path) >= WORKER_BATCH_CASES
        )
        pending: collections.deque[tuple[list[BatchLine], Future[list[performance_pb2.PerformanceResult]]]]
        pending = collections.deque()
        for chunk in _chunks(lines, path, CASES_PER_REQUEST):
            pending.append((chunk, batch.send(chunk)))
            if len(pending) >= REQUESTS_IN_FLIGHT:
                _write_rows(sink, *pending.popleft())
        while pending:
            _write_rows(sink, *pending.popleft())
    return EXIT_OK


REQUESTS_IN_FLIGHT = 2
"""Requests of a batch file on the way at once: the server estimates one while the client reads
the next from the file and writes the rows of the one before (rows keep the file's order)."""
WORKER_BATCH_CASES = 10_000
"""From this many lines on, the in-process server estimates in worker processes (one per core):
their start-up (seconds of imports) pays only on a batch this long. bench/estimate_speed.py."""


def _line_count(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for line in lines if line.strip())


class _Batch:
    """Sends a batch file's requests over one client (started with the first case to estimate),
    ``REQUESTS_IN_FLIGHT`` at a time."""

    def __init__(
        self, stack: contextlib.ExitStack, args: argparse.Namespace, *, estimate_workers: bool
    ) -> None:
        self._stack = stack
        self._args = args
        self._estimate_workers = estimate_workers
        self._client: FleetPlannerClient | None = None
        self._measurements: list[performance_pb2.MeasuredPoint] = []
        attach_measurements(args, self._measurements)
        self._senders = stack.enter_context(
            ThreadPoolExecutor(max_workers=REQUESTS_IN_FLIGHT, thread_name_prefix="cli-estimate")
        )

    def send(self, chunk: list[BatchLine]) -> Future[list[performance_pb2.PerformanceResult]]:
        valid = [line.case for line in chunk if line.case is not None]
        if valid and self._client is None:  # the server starts only once there is a case to estimate
            self._client = self._stack.enter_context(
                connect(self._args, estimate_workers=self._estimate_workers)
            )
        client = self._client

        measurements = self._measurements

        def call() -> list[performance_pb2.PerformanceResult]:
            if not valid or client is None:
                return []
            request = api.EstimatePerformanceRequest(
                cases=valid, allow_partial_failure=True, measurements=measurements
            )
            return list(client.estimate_performance(request).results)

        return self._senders.submit(call)


def _write_rows(
    sink: TextIO, chunk: list[BatchLine], answer: Future[list[performance_pb2.PerformanceResult]]
) -> None:
    estimated = iter(answer.result())
    rows = [
        line.error_row if line.case is None else result_row(next(estimated), line.source) for line in chunk
    ]
    sink.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


CASES_PER_REQUEST = MAX_PERFORMANCE_CASES
"""A batch file of any length is sent in requests of the server's per-request cap, and its rows
are written as each request returns (so memory stays bounded by one request)."""


def _chunks(lines: Iterable[str], path: Path, size: int) -> Iterator[list[BatchLine]]:
    chunk: list[BatchLine] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        chunk.append(read_batch_line(number, text, f"{path}:{number}"))
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
