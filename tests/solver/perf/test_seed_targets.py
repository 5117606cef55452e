"""The seeds' measurements (issue #4 targets), expected values read from the calibration CSV."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pricebook import catalog
from pricebook.loader import load_default
from solver.domain import Arrival, Precision
from solver.perf import ClosedLoop, Deployment, WorkloadShape, estimate_inference

SEEDS_CSV = Path(__file__).parents[3] / "solver/perf/calibration_data/seed_measurements.csv"


def _measured() -> dict[str, dict[str, str]]:
    with SEEDS_CSV.open() as handle:
        return {r["id"]: r for r in csv.DictReader(handle)}


ROWS = _measured()
BOOK = load_default()


def _seed000(gpu_row: str) -> tuple[dict[str, float], object]:
    row = ROWS[gpu_row]
    gpu = catalog.gpu(BOOK, row["gpu"])
    model = catalog.model(BOOK, row["model"])
    # vLLM's default kv_cache_dtype "auto" keeps KV in bf16 for an FP8 checkpoint.
    deployment = Deployment(gpu, int(row["tp"]), Precision(row["precision"]), Precision.BF16)
    shape = WorkloadShape(int(row["input_len"]), int(row["output_len"]))
    est = estimate_inference(model, deployment, shape, ClosedLoop(int(row["concurrency"]), Arrival.BURST))
    measured = {
        r["metric"]: float(r["value"])
        for r in ROWS.values()
        if r["seed"] == "000" and r["kind"] == "measured" and r["gpu"] == row["gpu"]
    }
    return measured, est


SEED000_H100_MISS = pytest.mark.xfail(
    strict=True,
    reason="issue 16 open: the fit dominated by AIConfigurator's runs puts seed 000's H100 TPOT at "
    "+18.5% and TTFT at +20.7% (bench/results/calibration_report.json), outside ±15%",
)


@pytest.mark.parametrize(
    "first_row",
    [pytest.param("s000-01", marks=SEED000_H100_MISS), "s000-07"],
    ids=["h100", "rtx-pro-6000-ws"],
)
def test_seed000_throughput_and_latencies_within_15_percent(first_row: str) -> None:
    measured, est = _seed000(first_row)
    assert est.output_tok_s == pytest.approx(measured["output_tok_s_total"], rel=0.15)  # type: ignore[attr-defined]
    assert est.tpot_ms == pytest.approx(measured["tpot_ms"], rel=0.15)  # type: ignore[attr-defined]
    assert est.ttft_ms == pytest.approx(measured["ttft_ms"], rel=0.15)  # type: ignore[attr-defined]


def test_seed000_h100_over_rtx_ratio_within_10_percent() -> None:
    h100_measured, h100 = _seed000("s000-01")
    rtx_measured, rtx = _seed000("s000-07")
    measured_ratio = h100_measured["output_tok_s_total"] / rtx_measured["output_tok_s_total"]
    assert measured_ratio == pytest.approx(1.90, abs=0.005)  # the article's 1113.74 / 586.37
    predicted_ratio = h100.output_tok_s / rtx.output_tok_s  # type: ignore[attr-defined]
    assert predicted_ratio == pytest.approx(measured_ratio, rel=0.10)


def test_seed003_gemma31b_ttft_rises_10_to_60x_from_1_to_16_users() -> None:
    one, sixteen = float(ROWS["s003-03"]["value"]), float(ROWS["s003-04"]["value"])
    assert 10 <= sixteen / one <= 60  # the seed itself: 130 ms → 4159 ms
    gemma = catalog.model(BOOK, "google/gemma-4-31B-it")
    h100 = Deployment(catalog.gpu(BOOK, "h100-sxm"), 1, Precision.BF16)
    # Lengths are not published; vLLM benchmark_serving's random dataset defaults: 1024 in, 128 out.
    shape = WorkloadShape(1024, 128)
    ttft_1 = estimate_inference(gemma, h100, shape, ClosedLoop(1, Arrival.BURST)).ttft_ms
    ttft_16 = estimate_inference(gemma, h100, shape, ClosedLoop(16, Arrival.BURST)).ttft_ms
    assert 10 <= ttft_16 / ttft_1 <= 60
