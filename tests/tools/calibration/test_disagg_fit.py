"""The disaggregated calibration: its report states the medians of the stored out-of-fold predictions,
every (GPU, model) pair is one fold, and its fit leaves the aggregated calibration alone."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from pricebook.loader import load_default
from solver.perf.calibration import CALIBRATION_PATH
from solver.perf.disagg import DISAGG_CALIBRATION_PATH
from tools.calibration import disagg_fit
from tools.calibration.disagg_fit import DISAGG_CV_PATH, METRICS
from tools.calibration.disagg_points import load_disagg_points

REPORT = Path(__file__).resolve().parents[3] / "bench" / "results" / "disagg_report.json"


def test_the_report_states_the_medians_of_the_stored_out_of_fold_predictions() -> None:
    rows = json.loads(DISAGG_CV_PATH.read_text())["predictions"]
    report = json.loads(REPORT.read_text())["out_of_fold"]["all"]
    assert report["n"] == len(rows)
    for metric in METRICS:
        errors = [abs(r[f"{metric}_predicted"] / r[f"{metric}_measured"] - 1) for r in rows]
        assert report[metric]["median_ape"] == pytest.approx(statistics.median(errors), abs=1e-4)


def test_every_point_is_predicted_once_by_the_fold_of_its_pair() -> None:
    points, _ = load_disagg_points(load_default())
    rows = json.loads(DISAGG_CV_PATH.read_text())["predictions"]
    assert sorted(r["id"] for r in rows) == sorted(p.id for p in points)
    group = {p.id: p.group for p in points}
    assert all(r["group"] == group[r["id"]] for r in rows)
    assert json.loads(DISAGG_CV_PATH.read_text())["folds"] == len(set(group.values()))


def test_the_disaggregated_fit_writes_its_own_file() -> None:
    assert DISAGG_CALIBRATION_PATH != CALIBRATION_PATH
    source = Path(disagg_fit.__file__).read_text()
    assert "CALIBRATION_PATH.write" not in source.replace("DISAGG_CALIBRATION_PATH", "")
