"""The calibration file is what the fitting script produces from the data in the repo."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from pricebook.schema import ScaleUpLink
from solver.perf.calibration import CALIBRATION_PATH, load_calibration
from solver.perf.physics import ALLREDUCE_LATENCY_PRIOR_S
from tools.calibration.fit import _allreduce_latency_params, _band, _share_params, run
from tools.calibration.points import (
    load_points,
)


@pytest.mark.slow
def test_checked_in_calibration_is_what_the_fit_produces() -> None:
    stored = json.loads(CALIBRATION_PATH.read_text())
    produced = run(fit_date=stored["fit_date"])
    assert json.loads(json.dumps(produced, sort_keys=True)) == stored


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


def test_allreduce_latency_is_fitted_only_for_links_that_measured_tp_steps_ran_over() -> None:
    points, _ = load_points(load_default())
    params, fixed = _allreduce_latency_params(points)
    fitted = {p.path[-1] for p in params}
    # H100 SXM TP 4 (hb164, TRT-LLM tables) runs over NVSwitch: the fit decides that value
    assert "allreduce_latency_nvlink_s" in fitted
    # no measured TP step bounces through host memory: the prior stays, as written in physics.py
    assert fixed["base"]["allreduce_latency_pcie_host_s"] == ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.PCIE_HOST]
    # single-GPU points alone fit no link at all
    single = [p for p in points if p.tp == 1]
    params, fixed = _allreduce_latency_params(single)
    assert params == ()
    assert fixed["base"]["allreduce_latency_nvlink_s"] == ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.NVLINK]
    # the shipped value is one global number, between the fit bounds around the prior
    nvlink = load_calibration().base.allreduce_latency_nvlink_s
    prior = ALLREDUCE_LATENCY_PRIOR_S[ScaleUpLink.NVLINK]
    assert prior / 10 <= nvlink <= prior * 8


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=80), st.sampled_from([0.8, 0.9]))
def test_band_from_ratios_covers_at_least_its_share_of_them(ratios: list[float], coverage: float) -> None:
    band = _band({"throughput": ratios}, coverage)
    inside = [band["throughput_low"] <= r <= band["throughput_high"] for r in ratios]
    assert sum(inside) / len(inside) >= coverage
