"""The calibration file is what the fitting script produces from the data in the repo."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from solver.perf.calibration import CALIBRATION_PATH, load_calibration
from solver.perf.fit import _band, _share_params, evaluate, load_points, run
from solver.perf.inference import OpenLoop


def test_only_measured_rows_are_fit_targets() -> None:
    points, skipped = load_points(load_default())
    assert points
    assert all(p.kind == "measured" for p in points if p.fit_target)
    skipped_ids = {s.id for s in skipped}
    # the seed's claims and the roofline arithmetic are never targets
    assert {"s000-13", "s000-14", "s000-15", "s000-16", "s004-01"} <= skipped_ids


@pytest.mark.slow
def test_checked_in_calibration_is_what_the_fit_produces() -> None:
    stored = json.loads(CALIBRATION_PATH.read_text())
    produced = run(fit_date=stored["fit_date"])
    assert json.loads(json.dumps(produced, sort_keys=True)) == stored


def test_band_covers_at_least_80_percent_of_measured_values() -> None:
    results = evaluate(load_points(load_default())[0], load_calibration())
    measured = [r for r in results if r.point.kind == "measured" and r.point.metric != "mfu"]
    assert sum(r.inside_band for r in measured) / len(measured) >= 0.80


def test_prefill_share_is_the_documented_centre_without_vllm_latency_data() -> None:
    points, _ = load_points(load_default())
    # vLLM's documented iteration budgets are 2048 and 8192 tokens; the model's budget is 8192,
    # so the share spans 2048/8192 = 0.25 to 1, and its geometric centre is sqrt(0.25 × 1) = 0.5.
    low, high = 2048 / 8192, 8192 / 8192
    without_seed000 = [p for p in points if p.source != "seed000"]
    params, fixed = _share_params(without_seed000)
    assert all(p.path[1] != "vllm" for p in params)
    assert fixed["engine"]["vllm"]["prefill_budget_share"] == pytest.approx(math.sqrt(low * high))
    # with seed 000's vLLM TTFT/TPOT in the fit the share is fitted, but only inside that range
    params, fixed = _share_params(points)
    (vllm,) = [p for p in params if p.path[1] == "vllm"]
    assert (vllm.lower, vllm.upper) == pytest.approx((low, high))
    assert "vllm" not in fixed["engine"]
    # the shipped calibration respects it
    assert low <= load_calibration().engine["vllm"]["prefill_budget_share"] <= high


def test_rows_with_an_estimated_input_length_are_evaluated_never_fitted() -> None:
    points, skipped = load_points(load_default())
    online = {p.id: p for p in points if p.assumed}
    # the SGLang-vs-vLLM ShareGPT online rows (rps=4, medians) of public_calibration.csv
    assert set(online) == {"hb158", "hb159", "hb160", "hb163", "hb164", "hb165"}
    for p in online.values():
        assert not p.fit_target
        assert p.statistic == "median"
        assert p.load == OpenLoop(4.0)
        assert p.assumed.startswith("ESTIMATE")
    # vLLM 0.6 ran with --num-scheduler-steps 10; SGLang has no such flag
    assert online["hb160"].num_scheduler_steps == 10
    assert online["hb158"].num_scheduler_steps is None
    assert not {"hb158", "hb165"} & {s.id for s in skipped}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=80), st.sampled_from([0.8, 0.9]))
def test_band_from_ratios_covers_at_least_its_share_of_them(ratios: list[float], coverage: float) -> None:
    band = _band({"throughput": ratios}, coverage)
    inside = [band["throughput_low"] <= r <= band["throughput_high"] for r in ratios]
    assert sum(inside) / len(inside) >= coverage
