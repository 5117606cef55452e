"""solver.perf.calibration: an estimate on a GPU family, or a precision on it, that the fit has
not measured says so and carries a wider throughput band (issue 29: never a silent
extrapolation)."""

from __future__ import annotations

import json

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from solver.domain import Precision
from solver.perf import Deployment, OfflineMax, WorkloadShape, estimate_inference
from solver.perf.calibration import CALIBRATION_PATH, calibration_from_dict, load_calibration
from solver.perf.replica import ASSUMED_CALIBRATION_WIDENING

BOOK = load_default()
STORED = json.loads(CALIBRATION_PATH.read_text())
MEASURED = {"hopper-hbm3": ["bf16", "fp8"], "cdna3-hbm3": ["fp8"]}
CAL = calibration_from_dict({**STORED, "measured": MEASURED})


def test_a_family_without_measurements_names_the_family_it_borrows_from() -> None:
    reason = CAL.assumed(catalog.gpu(BOOK, "mi325x"), Precision.FP8)
    assert "cdna3-hbm3e" in reason
    assert "multipliers of cdna3-hbm3 " in reason
    # CDNA4 has no fitted sibling at all: the base factors stand in
    assert "base factors" in CAL.assumed(catalog.gpu(BOOK, "mi355x"), Precision.FP8)


def test_a_precision_without_measurements_on_a_measured_family_is_named() -> None:
    h100 = catalog.gpu(BOOK, "h100-sxm")
    assert CAL.assumed(h100, Precision.FP8) == ""
    assert CAL.assumed(h100, Precision.FP16) == ""  # 16-bit formats run the same kernels
    assert "fp4" in CAL.assumed(h100, Precision.FP4)


def test_without_a_record_of_what_was_measured_nothing_is_flagged() -> None:
    bare = calibration_from_dict({k: v for k, v in STORED.items() if k != "measured"})
    assert bare.assumed(catalog.gpu(BOOK, "mi355x"), Precision.FP4) == ""


@pytest.mark.parametrize(("gpu", "assumed"), [("mi300x", False), ("mi325x", True)])
def test_the_estimate_carries_the_flag_and_a_band_wider_by_the_stated_factor(gpu: str, assumed: bool) -> None:
    model = catalog.model(BOOK, "meta-llama/Llama-3.1-8B-Instruct")
    est = estimate_inference(
        model, Deployment(catalog.gpu(BOOK, gpu), 1, Precision.FP8), WorkloadShape(1024, 256), OfflineMax(),
        calibration=CAL,
    )
    assert bool(est.assumed_calibration) is assumed
    widening = ASSUMED_CALIBRATION_WIDENING if assumed else 1.0
    assert est.output_tok_s_low == pytest.approx(est.output_tok_s * CAL.band_low / widening)
    assert est.output_tok_s_high == pytest.approx(est.output_tok_s * CAL.band_high * widening)


def test_the_shipped_calibration_records_what_it_measured() -> None:
    assert load_calibration().measured, "refit: calibration.json lacks the measured families"
