"""``fleetplan estimate``: one case from flags (a table), or a JSONL file of cases (JSONL results, one
line per case, each line's own errors in the batch file's field names)."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from google.protobuf import json_format

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import performance_pb2
from clients import render
from clients.cli.connection import connect
from clients.cli.exits import EXIT_OK
from clients.cli.output import emit
from clients.client import FleetPlannerClient
from clients.scenario import ScenarioError, case_from_json
from service.limits import RequestLimits

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


def result_row(result: performance_pb2.PerformanceResult, source: dict[str, Any]) -> dict[str, Any]:
    """One output line of the batch file: the case's fields plus the estimate (issue #4 names)."""
    row = dict(source)
    outcome = result.WhichOneof("outcome")
    if outcome is None or outcome == "error":
        row["error"] = {"field": file_field(result.error.field), "reason": result.error.reason}
        return row
    fields = json_format.MessageToDict(
        getattr(result, outcome), preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    row.update(fields)
    if result.architecture_assumed:
        row["architecture_assumed"] = True
    if result.warnings:
        row["warnings"] = list(result.warnings)
    return row


def cmd_estimate(args: argparse.Namespace, out: TextIO) -> int:
    if not args.cases:
        request = api.EstimatePerformanceRequest(cases=[case_from_flags(args)])
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
        client: FleetPlannerClient | None = None
        for chunk in _chunks(lines, path, CASES_PER_REQUEST):
            valid = [line.case for line in chunk if line.case is not None]
            results: list[performance_pb2.PerformanceResult] = []
            if valid:
                if client is None:  # the server starts only once there is a case to estimate
                    client = stack.enter_context(connect(args))
                results = list(client.estimate_performance(valid, allow_partial_failure=True).results)
            estimated = iter(results)
            rows = [
                line.error_row if line.case is None else result_row(next(estimated), line.source)
                for line in chunk
            ]
            sink.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return EXIT_OK


CASES_PER_REQUEST = RequestLimits().max_performance_cases
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
