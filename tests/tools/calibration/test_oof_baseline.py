"""A change to the model's structure or fit is kept only if the out-of-fold error does not get
worse (issue 29): the saved report's grouped cross-validation (``python -m tools.calibration.fit
--cv`` then ``python -m bench.calibration_report``) is of today's model, and its median absolute
percentage error per metric is at most the recorded baseline's (``tools/calibration/
oof_baseline.json``: the numbers before the change that lowered them last)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.calibration.cv import BASELINE_PATH, CV_PATH, model_fingerprint

REPORT = Path(__file__).resolve().parents[3] / "bench" / "results" / "calibration_report.json"
ROUNDING = 5e-5
"""The report rounds errors to 4 decimals."""


def _saved() -> dict[str, Any]:
    cross_validation: dict[str, Any] = json.loads(REPORT.read_text())["cross_validation"]
    return cross_validation


@pytest.mark.slow
def test_the_saved_cross_validation_is_of_todays_model_and_fit() -> None:
    stored = json.loads(CV_PATH.read_text())
    assert stored["model_fingerprint"] == model_fingerprint(), (
        "the model or the fit changed since the cross-validation: run python -m tools.calibration.fit "
        "--cv and python -m bench.calibration_report"
    )
    assert _saved()["model_fingerprint"] == stored["model_fingerprint"]
    assert _saved()["folds"] == stored["folds"]


@pytest.mark.parametrize("metric", ["throughput", "tpot", "ttft"])
def test_out_of_fold_error_is_not_worse_than_the_baseline(metric: str) -> None:
    baseline = json.loads(BASELINE_PATH.read_text())["metrics"][metric]
    current = _saved()["metrics"][metric]
    assert current["n"] == baseline["n"]  # the same points held out, not fewer
    assert current["median_ape"] <= baseline["median_ape"] + ROUNDING


def test_the_shipped_band_covers_the_out_of_fold_measurements() -> None:
    # the band is the central 90 % of the out-of-fold ratios per metric: it covers at least that
    assert _saved()["shipped_band_coverage"] >= 0.90
