"""solver.perf.inference: open-loop serving (median vs mean TTFT, the wait multi-step scheduling adds in
vLLM 0.6), the replica's KV bytes per sequence and its throughput band."""

from __future__ import annotations

import math

import pytest

from solver.domain import Engine, ModelSpec, Precision
from solver.perf import ClosedLoop, Deployment, OpenLoop, WorkloadShape, estimate_inference
from solver.perf.inference import ASSUMED_ARCHITECTURE_WIDENING, build_replica
from solver.perf.models import model_from_spec

from .conftest import make_gpu, make_model

SHAPE = WorkloadShape(215, 194)


@pytest.mark.parametrize("rate", [0.5, 4.0, 20.0])
def test_median_ttft_never_above_the_mean_under_poisson_arrivals(rate: float) -> None:
    # The queue wait is 0 with probability 1 − u and exponential otherwise: a right-skewed
    # distribution, so its median is at most its mean.
    est = estimate_inference(make_model(), Deployment(make_gpu()), SHAPE, OpenLoop(rate))
    assert est.fits
    assert est.ttft_median_ms <= est.ttft_ms
    assert est.ttft_median_ms > 0


def test_burst_median_is_reported_as_the_mean() -> None:
    est = estimate_inference(make_model(), Deployment(make_gpu()), SHAPE, ClosedLoop(8))
    assert est.ttft_median_ms == est.ttft_ms


def test_multi_step_scheduling_adds_half_a_block_of_decode_iterations_to_ttft() -> None:
    model, gpu = make_model(), make_gpu()
    single = estimate_inference(model, Deployment(gpu, engine=Engine.VLLM), SHAPE, OpenLoop(4.0))
    multi = estimate_inference(
        model, Deployment(gpu, engine=Engine.VLLM, num_scheduler_steps=10), SHAPE, OpenLoop(4.0)
    )
    # An arrival waits for the running scheduler pass to end: uniform over one decode iteration
    # (t/2 on average) with single-step scheduling, over 10 of them (10·t/2) with multi-step.
    # Decode itself is unchanged, so the difference is (10 − 1)/2 decode iterations.
    assert multi.decode_step_ms == pytest.approx(single.decode_step_ms)
    assert multi.tpot_ms == pytest.approx(single.tpot_ms)
    expected = (10 - 1) / 2 * single.decode_step_ms
    assert multi.ttft_ms - single.ttft_ms == pytest.approx(expected, rel=1e-6)
    assert multi.ttft_median_ms - single.ttft_median_ms == pytest.approx(expected, rel=1e-6)
    # the p95 waits for the whole block: 10 − 1 more iterations
    assert multi.ttft_p95_ms - single.ttft_p95_ms == pytest.approx(9 * single.decode_step_ms, rel=1e-6)


def test_a_deployment_that_does_not_fit_has_no_finite_median() -> None:
    tiny = make_gpu(memory_gb=8)
    est = estimate_inference(make_model(), Deployment(tiny, precision=Precision.BF16), SHAPE, OpenLoop(1.0))
    assert not est.fits
    assert math.isinf(est.ttft_median_ms)


def test_sliding_window_layers_stop_growing_at_the_window() -> None:
    gemma_like = make_model(layers=6, full_attention_layers=1, sliding_window=1024, kv_heads=4, head_dim=256)
    replica = build_replica(gemma_like, Deployment(make_gpu(), 1, Precision.BF16), None)
    per_layer = 2 * 4 * 256 * 2  # bytes per token per layer at bf16
    at_8k = replica.kv_bytes_of_sequence(8192)
    assert at_8k == per_layer * (1 * 8192 + 5 * 1024)


def test_an_assumed_architecture_widens_the_throughput_band_by_the_constant() -> None:
    known = build_replica(make_model(), Deployment(make_gpu()), None)
    assumed_model = model_from_spec(ModelSpec(params_b=8.0))
    assert assumed_model.assumed
    assumed = build_replica(assumed_model, Deployment(make_gpu()), None)
    low, high, _, _ = assumed.band
    assert known.throughput_band == known.band[:2]
    assert assumed.throughput_band == pytest.approx(
        (low / ASSUMED_ARCHITECTURE_WIDENING, high * ASSUMED_ARCHITECTURE_WIDENING)
    )
