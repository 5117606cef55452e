"""Hypothesis properties of the physics (issue #4, "Done when")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.schema import ScaleUpLink
from solver.domain import Arrival, Engine, Precision
from solver.perf import (
    Bottleneck,
    ClosedLoop,
    Deployment,
    OfflineMax,
    OpenLoop,
    WorkloadShape,
    estimate_inference,
)
from solver.perf.engines import engine_limits
from solver.perf.physics import ModelPhysics

from .conftest import make_gpu, make_model

SETTINGS = settings(max_examples=40, deadline=None)

shapes = st.builds(
    WorkloadShape,
    input_tokens=st.integers(16, 8000),
    output_tokens=st.integers(2, 2000),
    prefix_cache_hit_rate=st.sampled_from([0.0, 0.3, 0.7]),
)
precisions = st.sampled_from([Precision.BF16, Precision.FP8, Precision.INT4])


arrivals = st.sampled_from([Arrival.BURST, Arrival.STEADY])


@SETTINGS
@given(
    shape=shapes,
    users=st.integers(1, 128),
    bandwidth=st.floats(300, 8000),
    extra=st.floats(1.01, 4.0),
    precision=precisions,
    arrival=arrivals,
)
def test_more_bandwidth_never_slows_decode(  # noqa: PLR0917 (hypothesis passes the strategies by name)
    shape: WorkloadShape, users: int, bandwidth: float, extra: float, precision: Precision, arrival: Arrival
) -> None:
    model = make_model()
    slow = Deployment(make_gpu(memory_bandwidth_gbs=bandwidth), 1, precision)
    fast = Deployment(make_gpu(memory_bandwidth_gbs=bandwidth * extra), 1, precision)
    a = estimate_inference(model, slow, shape, ClosedLoop(users, arrival))
    b = estimate_inference(model, fast, shape, ClosedLoop(users, arrival))
    assert b.decode_step_ms <= a.decode_step_ms * (1 + 1e-9)
    assert b.tpot_ms <= a.tpot_ms * (1 + 1e-9)
    assert b.output_tok_s >= a.output_tok_s * (1 - 1e-9)


@SETTINGS
@given(
    shape=shapes, users=st.integers(1, 200), more=st.integers(1, 200), precision=precisions, arrival=arrivals
)
def test_more_concurrency_never_lowers_throughput_until_memory_runs_out(
    shape: WorkloadShape, users: int, more: int, precision: Precision, arrival: Arrival
) -> None:
    model, deployment = make_model(), Deployment(make_gpu(), 1, precision)
    fewer = estimate_inference(model, deployment, shape, ClosedLoop(users, arrival))
    many = estimate_inference(model, deployment, shape, ClosedLoop(users + more, arrival))
    if not fewer.fits or many.concurrency < users + more:
        return  # memory (or the scheduler) ran out: the batch no longer grows
    assert many.output_tok_s >= fewer.output_tok_s * (1 - 1e-6)
    assert many.ttft_p95_ms >= many.ttft_ms * (1 - 1e-9)
    assert many.ttft_ms >= fewer.ttft_ms * (1 - 1e-9)  # more users in line: the average waits longer


@SETTINGS
@given(shape=shapes, tp=st.sampled_from([2, 4, 8]), users=st.integers(1, 64))
def test_tp_over_pcie_without_p2p_never_beats_nvlink(shape: WorkloadShape, tp: int, users: int) -> None:
    model = make_model(
        params_b=70.55, active_params_b=70.55, layers=80, hidden=8192, heads=64, full_attention_layers=80
    )
    nvlink = make_gpu()
    host = make_gpu(scale_up_link=ScaleUpLink.PCIE_HOST, scale_up_bandwidth_gbs=128, p2p_over_pcie=False)
    burst = ClosedLoop(users, Arrival.BURST)
    a = estimate_inference(model, Deployment(nvlink, tp, Precision.FP8), shape, burst)
    b = estimate_inference(model, Deployment(host, tp, Precision.FP8), shape, burst)
    assert b.output_tok_s <= a.output_tok_s * (1 + 1e-9)
    assert b.tpot_ms >= a.tpot_ms * (1 - 1e-9)
    # Steady users: throughput too (TPOT may not: on the slower link more users wait for their
    # prefill, so fewer decode at once).
    a = estimate_inference(model, Deployment(nvlink, tp, Precision.FP8), shape, ClosedLoop(users))
    b = estimate_inference(model, Deployment(host, tp, Precision.FP8), shape, ClosedLoop(users))
    assert b.output_tok_s <= a.output_tok_s * (1 + 1e-9)
    c = estimate_inference(model, Deployment(nvlink, tp, Precision.FP8), shape, OfflineMax())
    d = estimate_inference(model, Deployment(host, tp, Precision.FP8), shape, OfflineMax())
    assert d.output_tok_s <= c.output_tok_s * (1 + 1e-9)


ORDERED = [Precision.BF16, Precision.FP8, Precision.INT4]


@SETTINGS
@given(shape=shapes, params=st.floats(0.5, 400), higher=st.integers(0, 1), step=st.integers(1, 2))
def test_lower_precision_never_increases_memory(
    shape: WorkloadShape, params: float, higher: int, step: int
) -> None:
    hi, lo = ORDERED[higher], ORDERED[min(higher + step, 2)]
    model = make_model(params_b=params, active_params_b=params)
    gpu = make_gpu()
    a = estimate_inference(
        model, Deployment(gpu, 1, hi, hi if hi is not Precision.INT4 else Precision.FP8), shape, OfflineMax()
    )
    b = estimate_inference(
        model, Deployment(gpu, 1, lo, lo if lo is not Precision.INT4 else Precision.FP8), shape, OfflineMax()
    )
    assert b.memory.weights_gb <= a.memory.weights_gb
    assert b.memory.kv_bytes_per_token <= a.memory.kv_bytes_per_token
    assert b.memory.max_concurrency >= a.memory.max_concurrency
    assert b.fits or not a.fits


@SETTINGS
@given(
    experts=st.integers(2, 256),
    chosen=st.integers(1, 16),
    tokens=st.integers(1, 100_000),
    precision=precisions,
)
def test_moe_k_of_e_never_reads_more_than_its_dense_twin(
    experts: int, chosen: int, tokens: int, precision: Precision
) -> None:
    k = min(chosen, experts)
    moe = ModelPhysics.of(
        make_model(
            params_b=47, active_params_b=13, experts=experts, experts_per_token=k, moe_intermediate=1024
        )
    )
    dense = ModelPhysics.of(make_model(params_b=47, active_params_b=47))
    moe_bytes = moe.weight_bytes_read_per_step(precision, tokens)
    assert moe_bytes <= dense.weight_bytes_read_per_step(precision, tokens)


@SETTINGS
@given(shape=shapes, fraction=st.floats(0.01, 0.9), more=st.floats(1.01, 1.5))
def test_open_loop_latencies_grow_with_the_request_rate(
    shape: WorkloadShape, fraction: float, more: float
) -> None:
    model, deployment = make_model(), Deployment(make_gpu(), 1, Precision.FP8)
    saturation = estimate_inference(model, deployment, shape, OfflineMax()).req_s
    low = estimate_inference(model, deployment, shape, OpenLoop(saturation * fraction))
    high = estimate_inference(model, deployment, shape, OpenLoop(saturation * fraction * more))
    if not high.fits:
        return  # beyond what the replica sustains: reported as not fitting, with the reason
    assert high.ttft_p95_ms >= low.ttft_p95_ms * (1 - 1e-6)
    assert high.tpot_ms >= low.tpot_ms * (1 - 1e-6)
    assert high.ttft_p95_ms >= high.ttft_ms


@SETTINGS
@given(shape=shapes, users=st.integers(1, 64), precision=precisions)
def test_steady_closed_loop_obeys_the_cycle_equation(
    shape: WorkloadShape, users: int, precision: Precision
) -> None:
    """DESIGN §3: with N users cycling, req/s = N / (TTFT + (output − 1) × TPOT) while all N run."""
    est = estimate_inference(
        make_model(), Deployment(make_gpu(), 1, precision), shape, ClosedLoop(users, Arrival.STEADY)
    )
    if not est.fits or est.concurrency < users:
        return  # some users wait for a slot: the cycle includes that wait by construction
    cycle_s = (est.ttft_ms + (shape.output_tokens - 1) * est.tpot_ms) / 1e3
    assert est.req_s == pytest.approx(users / cycle_s, rel=0.01)


@SETTINGS
@given(shape=shapes, users=st.integers(1, 512), precision=precisions)
def test_steady_ttft_never_exceeds_the_burst_of_the_same_users(
    shape: WorkloadShape, users: int, precision: Precision
) -> None:
    """Users cycling meet at most the others' work in progress; a burst lines all of them up.

    Three regimes are outside the claim, by physics: (1) every prompt of the burst rides the first
    iteration together — a burst starts on an idle engine, a steady arrival may meet a running
    iteration (half of one on average); (2) loops that saturate the prefill budget and (3) more
    users than the engine admits — there each steady request waits a full round of the N − n
    requests ahead of it (Little's law), a burst's request on average half a round."""
    model, gpu = make_model(), make_gpu()
    deployment = Deployment(gpu, 1, precision)
    budget = engine_limits(Engine.VLLM, gpu_memory_gib=gpu.memory_gb).max_batched_tokens
    steady = estimate_inference(model, deployment, shape, ClosedLoop(users, Arrival.STEADY))
    burst = estimate_inference(model, deployment, shape, ClosedLoop(users, Arrival.BURST))
    uncached = shape.input_tokens * (1 - shape.prefix_cache_hit_rate)
    one_iteration = users > 1 and users * uncached <= budget
    queued = steady.bottleneck is Bottleneck.PREFILL_BUDGET or steady.concurrency < users
    if not burst.fits or one_iteration or queued:
        return
    assert steady.ttft_ms <= burst.ttft_ms * (1 + 1e-9)


@SETTINGS
@given(shape=shapes, cap=st.integers(1, 1024), more=st.integers(1, 2048), precision=precisions)
def test_a_higher_sequence_cap_never_lowers_offline_throughput(
    shape: WorkloadShape, cap: int, more: int, precision: Precision
) -> None:
    model, gpu = make_model(), make_gpu()
    low = estimate_inference(model, Deployment(gpu, 1, precision, max_num_seqs=cap), shape, OfflineMax())
    high = estimate_inference(
        model, Deployment(gpu, 1, precision, max_num_seqs=cap + more), shape, OfflineMax()
    )
    assert high.output_tok_s >= low.output_tok_s * (1 - 1e-9)
