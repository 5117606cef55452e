"""The calibration file is what the fitting script produces from the data in the repo."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from pricebook.schema import ScaleUpLink
from solver.perf.calibration import CALIBRATION_PATH, load_calibration
from solver.perf.physics import ALLREDUCE_LATENCY_PRIOR_S
from tools.calibration.cv import read_predictions
from tools.calibration.fit import (
    FitBudget,
    _allreduce_latency_params,
    _band,
    _share_params,
    data_provenance,
    fit_calibration,
    fit_values,
)
from tools.calibration.points import (
    load_points,
)

FITTED_SECTIONS = ("base", "engine", "generation", "architecture", "precision", "training")


@pytest.mark.slow
def test_checked_in_calibration_is_what_the_fit_produces() -> None:
    """The whole fit takes minutes (its cross-validation an hour), so this checks what it writes in
    three bounded steps: the inputs are the ones it read (data and spec hashes), the band and
    everything else follow exactly from the stored fitted values and out-of-fold predictions, and
    the stored values are where the least squares stops on this data (one more trust-region step
    from them moves no parameter by more than 5%)."""
    stored = json.loads(CALIBRATION_PATH.read_text())
    points, skipped = load_points(load_default())
    assert stored["provenance"] == data_provenance(points)
    fitted = {k: stored[k] for k in FITTED_SECTIONS}
    _, held = read_predictions(points)
    rebuilt = fit_calibration(
        points, fit_date=stored["fit_date"], provenance=stored["provenance"], held_out=held, fitted=fitted
    )
    rebuilt["skipped_rows"] = [{"id": s.id, "reason": s.reason} for s in skipped]
    assert json.loads(json.dumps(rebuilt, sort_keys=True)) == stored
    again = fit_values(points, start=fitted, budget=FitBudget(restarts=1, max_nfev=1))
    moved = {
        ".".join(path): (value, old)
        for path, value, old in _leaves(again, fitted)
        if not math.isclose(value, old, rel_tol=0.05)
    }
    assert not moved


Leaf = tuple[tuple[str, ...], float, float]


def _leaves(new: dict[str, Any], old: dict[str, Any], path: tuple[str, ...] = ()) -> list[Leaf]:
    out: list[Leaf] = []
    for key, value in new.items():
        if isinstance(value, dict):
            out.extend(_leaves(value, old.get(key, {}), (*path, key)))
        elif isinstance(value, int | float) and key in old:
            out.append(((*path, key), float(value), float(old[key])))
    return out


def test_prefill_share_is_the_documented_centre_without_vllm_latency_data() -> None:
    points, _ = load_points(load_default())
    # The budget itself is per vLLM release now (2048 / 8192); the scheduler fills between half of
    # it and all of it with prompt chunks, so the share spans 0.5 to 1, centre sqrt(0.5 × 1).
    low, high = 0.5, 1.0
    without_seed000 = [p for p in points if p.source != "seed000" and p.engine.value != "vllm"]
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
