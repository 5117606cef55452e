"""capacity_at_sla: feasibility in words, SLA monotonicity, batch vs interactive."""

from __future__ import annotations

import pytest

from solver.domain import Precision, Sla
from solver.perf import Deployment, WorkloadShape, capacity_at_sla

from .conftest import make_gpu, make_model

SHAPE = WorkloadShape(2000, 500)


def test_model_too_big_for_the_tp_group_says_how_many_gb_are_needed() -> None:
    llama405 = make_model(
        id="test/405b",
        params_b=405.85,
        active_params_b=405.85,
        layers=126,
        hidden=16384,
        heads=128,
        full_attention_layers=126,
    )
    rtx = make_gpu(id="rtx-pro-6000-server", memory_gb=96, memory_bandwidth_gbs=1597)
    cap = capacity_at_sla(llama405, Deployment(rtx, 4, Precision.BF16), SHAPE, Sla())
    assert not cap.feasible
    # 405.85e9 params × 2 bytes = 812 GB; 4 × 96 GiB is at most 412 GB before any reserve
    assert "812 GB" in cap.reason
    assert "rtx-pro-6000-server × TP 4" in cap.reason
    assert cap.max_request_rate_per_s == 0.0


def test_tighter_sla_never_gives_more_capacity() -> None:
    model, gpu = make_model(), make_gpu()
    loose = capacity_at_sla(model, Deployment(gpu), SHAPE, Sla(ttft_p95_ms=5000, tpot_p95_ms=100))
    tight = capacity_at_sla(model, Deployment(gpu), SHAPE, Sla(ttft_p95_ms=500, tpot_p95_ms=20))
    batch = capacity_at_sla(model, Deployment(gpu), SHAPE, Sla())
    assert loose.feasible and tight.feasible and batch.feasible
    assert tight.max_request_rate_per_s <= loose.max_request_rate_per_s
    assert loose.max_request_rate_per_s <= batch.max_request_rate_per_s * 1.0001
    assert tight.tpot_ms <= 20 and tight.ttft_p95_ms <= 500


def test_capacity_meets_the_sla_it_reports() -> None:
    cap = capacity_at_sla(make_model(), Deployment(make_gpu()), SHAPE, Sla(min_per_user_tok_s=40))
    assert cap.feasible
    assert cap.per_user_tok_s >= 40
    assert cap.max_output_tok_s == pytest.approx(cap.max_request_rate_per_s * 500)
    assert cap.band_low < 1.0 < cap.band_high


def test_unreachable_latency_target_is_infeasible_with_the_reason() -> None:
    cap = capacity_at_sla(make_model(), Deployment(make_gpu()), SHAPE, Sla(ttft_p95_ms=1))
    assert not cap.feasible
    assert "TTFT" in cap.reason and "1 ms target" in cap.reason


def test_mig_slice_gets_a_share_of_the_gpu_and_only_where_mig_exists() -> None:
    model = make_model()
    whole = capacity_at_sla(model, Deployment(make_gpu(), 1, Precision.FP8), SHAPE, Sla())
    half = capacity_at_sla(model, Deployment(make_gpu(), 1, Precision.FP8, mig_slice=2), SHAPE, Sla())
    assert half.feasible and half.max_output_tok_s < whole.max_output_tok_s
    assert half.memory.usable_gb < whole.memory.usable_gb / 2 + 1e-9
    # The smallest H100 instance (1g) has 1/8 of the 80 GiB: 8 GB of fp8 weights leave no KV cache.
    seventh = capacity_at_sla(model, Deployment(make_gpu(), 1, Precision.FP8, mig_slice=7), SHAPE, Sla())
    assert not seventh.feasible and "1/7 MIG slice" in seventh.reason
    no_mig = make_gpu(id="geforce", mig_max_instances=0)
    refused = capacity_at_sla(model, Deployment(no_mig, 1, Precision.FP8, mig_slice=2), SHAPE, Sla())
    assert not refused.feasible and "does not support MIG" in refused.reason
