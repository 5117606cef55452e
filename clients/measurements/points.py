"""Measured points from a file: format detection, ``--measured-as`` and the proto messages."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clients.measurements.proto import point_message
from clients.measurements.tools import READERS, FormatError, Point
from clients.scenario import ScenarioError

JSONL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "gpu": str,
    "model": str,
    "engine": str,
    "engine_version": str,
    "precision": str,
    "kv_precision": str,
    "tp": int,
    "num_gpus": int,
    "input_len": int,
    "output_len": int,
    "concurrency": int,
    "request_rate": (int, float),
    "arrival": str,
    "measured_ttft_ms": (int, float),
    "ttft_statistic": str,
    "measured_tpot_ms": (int, float),
    "measured_output_tok_s": (int, float),
    "label": str,
    "id": str,
}
"""fleetplan's JSONL of measured points: the estimate case fields plus the measurements."""

MEASURED_AS_FIELDS = (
    "gpu",
    "model",
    "tp",
    "num_gpus",
    "precision",
    "kv_precision",
    "engine",
    "engine_version",
)
"""What ``--measured-as key=value,...`` may say about the runs of a file."""

ENUMS = {
    "precision": ("bf16", "fp16", "fp8", "int8", "int4", "fp4"),
    "kv_precision": ("bf16", "fp16", "fp8", "int8", "int4", "fp4"),
    "engine": ("vllm", "sglang", "trtllm"),
    "arrival": ("steady", "burst"),
    "ttft_statistic": ("mean", "median", "p95"),
}
REQUIRED = ("gpu", "model", "input_len", "output_len")
METRICS = ("measured_ttft_ms", "measured_tpot_ms", "measured_output_tok_s")


class MeasurementFileError(ScenarioError):
    """A measurements file that cannot be used: ``file`` (or the flag), ``field`` in it, ``reason``."""

    def __init__(self, path: Path | str, field: str, reason: str) -> None:
        super().__init__(str(path), field, reason)

    @property
    def field(self) -> str:
        return self.path


def parse_measured_as(text: str | None) -> dict[str, Any]:
    """``gpu=h100-sxm,tp=2,precision=fp8,engine=vllm`` → a dict of point fields."""
    out: dict[str, Any] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in MEASURED_AS_FIELDS or not value:
            raise MeasurementFileError(
                "--measured-as",
                key or item,
                f"expected key=value with a key among {', '.join(MEASURED_AS_FIELDS)}",
            )
        if JSONL_FIELDS[key] is int:
            if not value.isdigit():
                raise MeasurementFileError("--measured-as", key, f"{value!r} is not a whole number")
            out[key] = int(value)
        else:
            out[key] = value
    return out


def _read_jsonl(path: Path, text: str) -> list[Point]:
    points = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MeasurementFileError(path, f"line {number}", f"not valid JSON ({exc.msg})") from exc
        if not isinstance(raw, dict):
            raise MeasurementFileError(path, f"line {number}", "each line must be a JSON object")
        for key, value in raw.items():
            kind = JSONL_FIELDS.get(key)
            if kind is None:
                raise MeasurementFileError(path, f"line {number}.{key}", "unknown field")
            if isinstance(value, bool) or not isinstance(value, kind):
                raise MeasurementFileError(path, f"line {number}.{key}", f"wrong type ({value!r})")
        raw.setdefault("label", raw.pop("id", "") or f"{path.name}:{number}")
        raw.pop("id", None)
        points.append(raw)
    if not points:
        raise MeasurementFileError(path, "", "no measured point in the file")
    return points


def _read_native(path: Path, data: Any) -> list[Point]:
    if not isinstance(data, Mapping):
        raise MeasurementFileError(path, "", "unknown format: not a JSON object of a known benchmark tool")
    for name, keys, reader in READERS:
        if all(k in data for k in keys):
            try:
                points = reader(data)
            except FormatError as exc:
                raise MeasurementFileError(path, exc.field, f"{exc.reason} ({name})") from exc
            many = len(points) > 1
            for i, point in enumerate(points):
                point["label"] = f"{path.name} ({name}{f' #{i}' if many else ''})"
            return points
    raise MeasurementFileError(
        path,
        "",
        "unknown format: expected fleetplan JSONL of measured points, a vLLM bench serve result, "
        "an AIPerf profile_export_aiperf.json or a GuideLLM benchmarks.json",
    )


def _merged(path: Path, index: int, point: Point, measured_as: Mapping[str, Any], many: bool) -> Point:
    where = f"point {index}." if many else ""
    for key, value in measured_as.items():
        if key in point and point[key] != value:
            raise MeasurementFileError(
                path, f"{where}{key}", f"the file says {point[key]!r}, --measured-as says {value!r}"
            )
    point = {**measured_as, **point}
    for key in REQUIRED:
        if key not in point:
            raise MeasurementFileError(path, f"{where}{key}", f"not in the file; give --measured-as {key}=…")
    for key, allowed in ENUMS.items():
        if key in point and point[key] not in allowed:
            raise MeasurementFileError(
                path, f"{where}{key}", f"{point[key]!r} is not one of {', '.join(allowed)}"
            )
    if ("concurrency" in point) == ("request_rate" in point):
        raise MeasurementFileError(
            path, f"{where}concurrency", "give exactly one of concurrency and request_rate"
        )
    if not any(k in point for k in METRICS):
        raise MeasurementFileError(path, f"{where}measured_tpot_ms", f"no measurement ({', '.join(METRICS)})")
    for key in (*METRICS, "input_len", "output_len", "tp", "num_gpus", "concurrency", "request_rate"):
        if key in point and not (math.isfinite(point[key]) and point[key] > 0):
            raise MeasurementFileError(
                path, f"{where}{key}", f"must be a positive number (got {point[key]!r})"
            )
    return point


def read_points(path: Path, measured_as: Mapping[str, Any] | None = None) -> list[Point]:
    """The file's points (fleetplan JSONL field names), completed by ``measured_as``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MeasurementFileError(path, "", f"cannot read it ({exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
        points = _read_jsonl(path, text)
    else:
        points = (
            _read_jsonl(path, text)
            if isinstance(data, Mapping) and any(k.startswith("measured_") for k in data)
            else _read_native(path, data)
        )
    return [_merged(path, i, p, measured_as or {}, len(points) > 1) for i, p in enumerate(points)]


def load_measurements(path: Path, measured_as: str | None = None) -> list[Any]:
    """``fleetplan.v1.MeasuredPoint`` messages of the file."""
    return [point_message(p) for p in read_points(path, parse_measured_as(measured_as))]
