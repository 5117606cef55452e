"""Bytes and FLOPs from the architecture, with expected values worked out in each test."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from pricebook.schema import AttentionType, ScaleUpLink
from solver.domain import ModelSpec, Precision
from solver.perf import decode_upper_bound_tok_s
from solver.perf.calibration import Calibration, calibration_from_dict, load_calibration
from solver.perf.inference import Deployment, build_replica
from solver.perf.models import model_from_spec
from solver.perf.physics import (
    ALLREDUCE_LATENCY_PRIOR_S,
    GpuPhysics,
    ModelPhysics,
    expected_distinct_experts,
    mig_share,
)

from .conftest import make_gpu, make_model

SEEDS_CSV = Path(__file__).parents[3] / "solver/perf/calibration_data/seed_measurements.csv"


def test_gqa_kv_bytes_per_token_counts_kv_heads_not_query_heads() -> None:
    model = ModelPhysics.of(make_model())
    # K and V × 32 layers × 8 KV heads × 128 dims × 2 bytes (bf16)
    expected = 2 * 32 * 8 * 128 * 2
    assert model.kv_bytes_per_token(Precision.BF16) == expected == 131072
    assert model.kv_bytes_per_token(Precision.FP8) == expected / 2


def test_mla_kv_bytes_per_token_is_the_compressed_rank() -> None:
    deepseek = make_model(
        id="test/dsv3",
        params_b=671,
        active_params_b=37,
        layers=61,
        hidden=7168,
        heads=128,
        kv_heads=128,
        head_dim=192,
        attention=AttentionType.MLA,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        full_attention_layers=61,
        experts=256,
        experts_per_token=8,
        moe_intermediate=2048,
    )
    # one latent of 512 + one RoPE key of 64 per layer, no K/V pair, no heads: 576 × 61 × 2 bytes
    assert ModelPhysics.of(deepseek).kv_bytes_per_token(Precision.BF16) == 576 * 61 * 2
    # a GQA reading of the same config would have been 2 × 61 × 128 × 192 × 2 bytes: 53× more
    assert 2 * 61 * 128 * 192 * 2 / (576 * 61 * 2) > 50


def test_weight_bytes_are_params_times_bytes_per_element() -> None:
    physics = ModelPhysics.of(make_model(params_b=70.55, active_params_b=70.55))
    assert physics.weight_bytes(Precision.BF16) == pytest.approx(70.55e9 * 2)
    assert physics.weight_bytes(Precision.FP8) == pytest.approx(70.55e9)


@pytest.mark.parametrize(
    ("experts", "k", "tokens", "expected"),
    [
        (8, 2, 1, 2.0),  # one token touches exactly k experts
        (8, 2, 4, 8 * (1 - (6 / 8) ** 4)),  # 5.47 of 8
        (128, 8, 1000, 128 * (1 - (120 / 128) ** 1000)),  # essentially all
    ],
)
def test_expected_distinct_experts(experts: int, k: int, tokens: int, expected: float) -> None:
    assert expected_distinct_experts(experts, k, tokens) == pytest.approx(expected)


def test_moe_reads_shared_weights_plus_touched_experts() -> None:
    mixtral = make_model(
        params_b=46.7,
        active_params_b=12.9,
        experts=8,
        experts_per_token=2,
        moe_intermediate=14336,
        intermediate=14336,
    )
    physics = ModelPhysics.of(mixtral)
    expert_bytes = 3 * 4096 * 14336 * 2  # gate, up, down of one expert, bf16
    total = 46.7e9 * 2
    one_token = total - 8 * 32 * expert_bytes + 2 * 32 * expert_bytes
    assert physics.weight_bytes_read_per_step(Precision.BF16, 1) == pytest.approx(one_token)
    assert physics.weight_bytes_read_per_step(Precision.BF16, 10_000) == pytest.approx(total, rel=1e-6)


def _roofline_rows() -> list[dict[str, str]]:
    with SEEDS_CSV.open() as handle:
        return [r for r in csv.DictReader(handle) if r["kind"] == "roofline"]


@pytest.mark.parametrize("row", _roofline_rows(), ids=lambda r: r["id"])
def test_seed004_single_stream_upper_bound_within_5_percent(row: dict[str, str]) -> None:
    """Seed 004: bandwidth / weight bytes. The GPU bandwidth is read from the row's note."""
    bandwidth = float(re.match(r"(\d+) GB/s", row["notes"]).group(1))  # type: ignore[union-attr]
    model = model_from_spec(ModelSpec(params_b=float(row["params_b"])))
    gpu = make_gpu(memory_bandwidth_gbs=bandwidth)
    predicted = decode_upper_bound_tok_s(model, gpu, Precision(row["precision"]))
    assert predicted == pytest.approx(float(row["value"]), rel=0.05)


def _nvlink_latency_calibration(nvlink_s: float) -> Calibration:
    # a fitted NVLink value above the PCIe P2P prior must not make PCIe cheaper than NVLink
    return calibration_from_dict({"base": {"allreduce_latency_nvlink_s": nvlink_s}})


@pytest.mark.parametrize("nvlink_s", [10e-6, 80e-6])
def test_tp_over_nvlink_at_batch_1_pays_two_allreduce_latencies_per_layer(nvlink_s: float) -> None:
    cal = _nvlink_latency_calibration(nvlink_s)
    layers, tp = 80, 4
    # Llama-3.1-70B-like at TP 4, and its per-GPU shard as a TP 1 model: a quarter of the
    # parameters and of the heads, the same layers — equal weight bytes, KV bytes and FLOPs per GPU.
    full = make_model(
        id="test/70b",
        params_b=70.6,
        active_params_b=70.6,
        layers=layers,
        hidden=8192,
        intermediate=28672,
        heads=64,
        kv_heads=8,
        head_dim=128,
        full_attention_layers=layers,
    )
    shard = make_model(
        id="test/70b-shard",
        params_b=70.6 / tp,
        active_params_b=70.6 / tp,
        layers=layers,
        hidden=8192,
        intermediate=28672 // tp,
        heads=64 // tp,
        kv_heads=8 // tp,
        head_dim=128,
        full_attention_layers=layers,
    )
    gpu = make_gpu()
    tp4 = build_replica(full, Deployment(gpu, tp, Precision.BF16), cal)
    tp1 = build_replica(shard, Deployment(gpu, 1, Precision.BF16), cal)
    extra_s = tp4.step(1, 500)[0] - tp1.step(1, 500)[0]
    # two all-reduces (after attention, after the MLP) per layer, each at least its fixed latency
    assert extra_s >= 2 * layers * nvlink_s
    # ... and the rest is the bandwidth term of 16 KB messages, microseconds per step at most
    assert extra_s < 2 * layers * nvlink_s + 1e-3


@pytest.mark.parametrize("nvlink_s", [10e-6, 25e-6, 80e-6, 150e-6])
def test_allreduce_latency_is_ordered_pcie_host_over_p2p_over_nvlink(nvlink_s: float) -> None:
    for factors in (load_calibration().base, _nvlink_latency_calibration(nvlink_s).base):
        nvlink = factors.allreduce_latency_s(ScaleUpLink.NVLINK)
        p2p = factors.allreduce_latency_s(ScaleUpLink.PCIE_P2P)
        host = factors.allreduce_latency_s(ScaleUpLink.PCIE_HOST)
        assert host >= p2p >= nvlink > 0
        assert factors.allreduce_latency_s(ScaleUpLink.NVLINK_BRIDGE) == nvlink
    # the priors themselves are ordered the same way, strictly
    prior = ALLREDUCE_LATENCY_PRIOR_S
    assert prior[ScaleUpLink.PCIE_HOST] > prior[ScaleUpLink.PCIE_P2P] > prior[ScaleUpLink.NVLINK]


@pytest.mark.parametrize(
    ("gpu_overrides", "slices", "compute", "memory"),
    [
        ({}, 7, 1 / 7, 1 / 8),  # H100 1g.10gb: one of 7 compute slices, one of 8 memory slices
        ({}, 2, 3 / 7, 4 / 8),  # H100 3g.40gb: the half two of which fit one GPU
        ({"mig_max_instances": 4, "memory_gb": 96}, 4, 1 / 4, 1 / 4),  # RTX PRO 6000: 4 × 24 GB
        ({"vendor": "amd", "mig_max_instances": 8, "memory_gb": 192}, 8, 1 / 8, 1 / 8),  # CPX
    ],
)
def test_a_mig_instance_gets_its_layouts_share_of_compute_and_memory(
    gpu_overrides: dict[str, object], slices: int, compute: float, memory: float
) -> None:
    gpu = make_gpu(**gpu_overrides)
    whole, part = GpuPhysics.of(gpu), GpuPhysics.mig_instance(gpu, slices)
    assert part.memory_bytes == pytest.approx(whole.memory_bytes * memory)
    assert part.bandwidth_bytes_s == pytest.approx(whole.bandwidth_bytes_s * memory)
    assert part.bf16_flops == pytest.approx(whole.bf16_flops * compute)
    assert part.fp8_flops == pytest.approx(whole.fp8_flops * compute)
    assert part.domain_size == 1 and part.link_bandwidth_bytes_s == 0
    # The optimizer packs a 1/slices instance as 1/slices of a GPU: `slices` of them must fit one.
    share = mig_share(gpu, slices)
    assert slices * share.compute <= 1 + 1e-12 and slices * share.memory <= 1 + 1e-12
