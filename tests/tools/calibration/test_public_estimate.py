"""The public estimate (``fleetplan estimate --cases``, through the gRPC EstimatePerformance) of every
calibration point, given that point's stated settings, is the prediction the calibration report
makes for it — the report and the interface cannot drift apart (issue 16)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from clients import cli
from pricebook.loader import load_default
from solver.perf.calibration import load_calibration
from solver.perf.inference import ClosedLoop, OfflineMax, OpenLoop
from tools.calibration.points import CalibrationPoint, PointMode, Statistic, load_points, predict

# Which field of a result row answers which metric of a point.
INFERENCE_FIELD = {
    "output_tok_s_total": "output_tok_s_total",
    "total_tok_s": "total_tok_s",
    "req_s": "req_s",
    "tpot_ms": "tpot_ms",
}


def case_of(point: CalibrationPoint) -> dict[str, Any]:
    """The batch-file case that states the point's settings, nothing more."""
    case: dict[str, Any] = {
        "id": point.id, "gpu": point.gpu.id, "num_gpus": point.num_gpus, "precision": point.precision.value
    }
    model = point.model
    if model.family == "inline":
        case["model_spec"] = {"params_b": model.params_b, "active_params_b": model.active_params_b}
    else:
        case["model"] = point.model.id
    if point.mode is PointMode.TRAIN:
        return {**case, "mode": "train", "method": "full", "tokens": 1e9, "seq_len": point.seq_len}
    case.update(tp=point.tp, engine=point.engine.value, input_len=point.input_len)
    case["output_len"] = point.output_len
    replicas = point.num_gpus // point.tp
    if point.engine_version:
        case["engine_version"] = point.engine_version
    if point.kv_precision is not None:
        case["kv_precision"] = point.kv_precision.value
    if point.max_num_seqs is not None:
        case["max_num_seqs"] = point.max_num_seqs
    if point.num_scheduler_steps is not None:
        case["num_scheduler_steps"] = point.num_scheduler_steps
    load = point.load
    if isinstance(load, ClosedLoop):
        case.update(concurrency=load.concurrency * replicas, arrival=load.arrival.value)
    elif isinstance(load, OpenLoop):
        case["request_rate"] = load.request_rate_per_s * replicas
    else:
        assert isinstance(load, OfflineMax)
        case["concurrency"] = "max"
    return case


def public_value(point: CalibrationPoint, row: dict[str, Any]) -> float:
    metric = point.metric
    if metric in INFERENCE_FIELD:
        return float(row[INFERENCE_FIELD[metric]])
    if metric == "ttft_ms":
        return float(row["ttft_median_ms" if point.statistic is Statistic.MEDIAN else "ttft_mean_ms"])
    if metric == "duration_s":
        assert isinstance(point.load, ClosedLoop)
        return point.load.concurrency * (point.num_gpus // point.tp) / float(row["req_s"])
    if metric == "train_tok_s_per_gpu":
        return float(row["train_tok_s_per_gpu"])
    assert metric == "mfu"
    return float(row["mfu"]) * 100.0


@pytest.mark.slow
def test_the_public_estimate_of_every_calibration_point_is_the_reports_prediction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points, _ = load_points(load_default())
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(case_of(p)) + "\n" for p in points), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    assert cli.main(["estimate", "--cases", str(cases), "--output", str(output)], out=io.StringIO()) == 0
    capsys.readouterr()
    rows = {row["id"]: row for row in map(json.loads, output.read_text(encoding="utf-8").splitlines())}
    assert len(rows) == len(points)  # > 1000 cases: the CLI split them over several requests
    calibration = load_calibration()
    mismatches = []
    for point in points:
        row = rows[point.id]
        assert "error" not in row, (point.id, row.get("error"))
        expected = predict(point, calibration)[0]
        if public_value(point, row) != pytest.approx(expected, rel=1e-9):
            mismatches.append((point.id, point.metric, public_value(point, row), expected))
    assert not mismatches, mismatches[:10]
