"""Measurement files → measured points (``clients.measurements``): the recorded outputs of the real
clients against a server of known timing (``recorded/README.md``), fleetplan's JSONL, and refusals
that name the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.fleetplan.v1 import common_pb2, performance_pb2
from clients.measurements import MeasurementFileError, load_measurements, parse_measured_as
from clients.measurements.points import read_points

RECORDED = Path(__file__).parent / "recorded"
AS = "gpu=h100-sxm,tp=1,precision=fp8,engine=vllm"
# The stand-in's timing for the recorded runs: 200 ms to the first token, 20 ms per next one, and
# 4 users each finishing 32 tokens every 0.2 + 31 × 0.02 s.
TTFT_MS, TPOT_MS, TOK_S = 200.0, 20.0, 4 * 32 / (0.2 + 31 * 0.02)


@pytest.mark.parametrize(
    "name", ["aiperf_profile_export_aiperf.json", "guidellm_benchmarks.json", "vllm_bench_serve.json"]
)
def test_native_outputs_read_as_the_server_timed_them(name: str) -> None:
    (point,) = read_points(RECORDED / name, parse_measured_as(AS))
    assert (point["model"], point["concurrency"], point["input_len"], point["output_len"]) == (
        "standin-model",
        4,
        200,
        32,
    )
    assert point["measured_ttft_ms"] == pytest.approx(TTFT_MS, rel=0.1)  # + the client's own overhead
    assert point["measured_tpot_ms"] == pytest.approx(TPOT_MS, rel=0.05)
    assert point["measured_output_tok_s"] == pytest.approx(TOK_S, rel=0.05)
    assert name in point["label"] and point["gpu"] == "h100-sxm"


def test_messages_copy_the_fields() -> None:
    (msg,) = load_measurements(RECORDED / "aiperf_profile_export_aiperf.json", AS)
    assert isinstance(msg, performance_pb2.MeasuredPoint)
    assert (msg.gpu_id, msg.model_id, msg.tp, msg.precision, msg.engine) == (
        "h100-sxm",
        "standin-model",
        1,
        common_pb2.PRECISION_FP8,
        common_pb2.ENGINE_VLLM,
    )
    assert msg.WhichOneof("load") == "concurrency" and msg.concurrency == 4


def _jsonl(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "points.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROW = {
    "gpu": "h100-sxm",
    "model": "meta-llama/Llama-3.1-8B",
    "precision": "fp8",
    "input_len": 1000,
    "output_len": 200,
    "concurrency": 16,
    "measured_tpot_ms": 9.5,
    "measured_output_tok_s": 1500.0,
}


def test_fleetplan_jsonl(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, ROW, ROW | {"concurrency": 32, "id": "c32", "measured_ttft_ms": 120.0})
    first, second = load_measurements(path)
    assert first.label == "points.jsonl:1" and second.label == "c32"
    assert second.measured_ttft_ms == 120.0 and not first.HasField("measured_ttft_ms")
    rate = load_measurements(
        _jsonl(tmp_path, {k: v for k, v in ROW.items() if k != "concurrency"} | {"request_rate": 2.5})
    )
    assert rate[0].request_rate_per_s == 2.5


@pytest.mark.parametrize(
    ("rows", "field", "words"),
    [
        ([ROW | {"gpus": 2}], "line 1.gpus", "unknown field"),
        ([ROW | {"tp": "two"}], "line 1.tp", "wrong type"),
        ([ROW | {"request_rate": 1.0}], "point 0.concurrency", "exactly one"),
        ([{k: v for k, v in ROW.items() if k != "gpu"}], "gpu", "--measured-as gpu="),
        ([ROW | {"precision": "fp7"}], "precision", "not one of"),
        ([ROW | {"measured_tpot_ms": -1}], "measured_tpot_ms", "positive"),
    ],
)
def test_bad_jsonl_names_file_and_field(
    tmp_path: Path, rows: list[dict[str, object]], field: str, words: str
) -> None:
    if field.startswith("point 0.") and len(rows) == 1:
        field = field.removeprefix("point 0.")
    path = _jsonl(tmp_path, *rows)
    with pytest.raises(MeasurementFileError) as caught:
        load_measurements(path)
    assert caught.value.file == str(path) and caught.value.field == field and words in caught.value.reason


def test_measured_as_conflicting_with_the_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MeasurementFileError, match="the file says 'h100-sxm', --measured-as says 'h200-sxm'"):
        load_measurements(_jsonl(tmp_path, ROW), "gpu=h200-sxm")
    with pytest.raises(MeasurementFileError, match="key among"):
        parse_measured_as("gpu=h100-sxm,colour=red")


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"results": [1, 2]}))
    with pytest.raises(MeasurementFileError, match="unknown format") as caught:
        load_measurements(path, AS)
    assert caught.value.file == str(path)


def test_native_file_missing_a_metric_names_it(tmp_path: Path) -> None:
    data = json.loads((RECORDED / "vllm_bench_serve.json").read_text())
    del data["total_output_tokens"]
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(data))
    with pytest.raises(MeasurementFileError) as caught:
        load_measurements(path, AS)
    assert caught.value.field == "total_output_tokens"
