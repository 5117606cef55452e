"""tools.calibration.points: which rows become fit targets, and how the points' predictions behave."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from pricebook.loader import load_default
from solver.perf.calibration import load_calibration
from solver.perf.inference import OpenLoop
from tools.calibration.points import (
    CalibrationPoint,
    evaluate,
    load_points,
    predict,
)


def test_only_measured_rows_are_fit_targets() -> None:
    points, skipped = load_points(load_default())
    assert points
    assert all(p.kind == "measured" for p in points if p.fit_target)
    skipped_ids = {s.id for s in skipped}
    # the seed's claims and the roofline arithmetic are never targets
    assert {"s000-13", "s000-14", "s000-15", "s000-16", "s004-01"} <= skipped_ids


def test_band_covers_at_least_80_percent_of_measured_values() -> None:
    results = evaluate(load_points(load_default())[0], load_calibration())
    measured = [r for r in results if r.point.kind == "measured" and r.point.metric != "mfu"]
    assert sum(r.inside_band for r in measured) / len(measured) >= 0.80


def test_rows_with_an_estimated_input_length_fit_tpot_only() -> None:
    points, skipped = load_points(load_default())
    online = {p.id: p for p in points if p.assumed}
    # the SGLang-vs-vLLM ShareGPT online rows (rps=4, medians) of public_calibration.csv
    assert set(online) == {"hb158", "hb159", "hb160", "hb163", "hb164", "hb165"}
    for p in online.values():
        # TPOT (hb159, hb164) is fitted; TTFT, which is the prefill of the guessed prompt, is not
        assert p.fit_target == (p.metric == "tpot_ms")
        assert p.statistic == "median"
        assert p.load == OpenLoop(4.0)
        assert p.assumed.startswith("ESTIMATE")
    assert {p.id for p in online.values() if p.fit_target} == {"hb159", "hb164"}
    # vLLM 0.6 ran with --num-scheduler-steps 10; SGLang has no such flag
    assert online["hb160"].num_scheduler_steps == 10
    assert online["hb158"].num_scheduler_steps is None
    assert not {"hb158", "hb165"} & {s.id for s in skipped}


@pytest.mark.xfail(
    strict=True,
    reason="issue 16 open: with SGLang's fitted request cost (from AIConfigurator's SGLang TTFTs) hb159's "
    "TPOT elasticity is 0.21 (> 0.15) and SGLang's online TTFT hardly moves with the prompt (0.03-0.04)",
)
def test_tpot_barely_depends_on_the_estimated_prompt_length_and_sglang_ttft_does() -> None:
    points, _ = load_points(load_default())
    cal = load_calibration()

    def elasticity(p: CalibrationPoint) -> float:
        """d log(prediction) / d log(prompt length), between 0.75× and 1.25× the assumed length."""
        short, long = (predict(replace(p, input_len=round(p.input_len * k)), cal)[0] for k in (0.75, 1.25))
        return math.log(long / short) / math.log(1.25 / 0.75)

    online = [p for p in points if p.assumed]
    tpot = [elasticity(p) for p in online if p.metric == "tpot_ms"]
    # a 20% error in the assumed mean prompt moves TPOT by < 3%
    assert len(tpot) == 2
    assert all(0 <= e < 0.15 for e in tpot)
    # SGLang's TTFT is the prefill of that very prompt: at least twice as sensitive, so it stays out
    # (vLLM's TTFT here is mostly the wait for a 10-step block, which the lengths hardly move)
    sglang_ttft = [elasticity(p) for p in online if p.metric == "ttft_ms" and p.engine.value == "sglang"]
    assert len(sglang_ttft) == 2
    assert min(sglang_ttft) > 2 * max(tpot)
