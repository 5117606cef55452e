"""Bytes and FLOPs from the architecture, with expected values worked out in each test."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from pricebook.schema import AttentionType
from solver.domain import ModelSpec, Precision
from solver.perf import decode_upper_bound_tok_s
from solver.perf.models import model_from_spec
from solver.perf.physics import ModelPhysics, expected_distinct_experts

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
        id="test/dsv3", params_b=671, active_params_b=37, layers=61, hidden=7168, heads=128, kv_heads=128,
        head_dim=192, attention=AttentionType.MLA, kv_lora_rank=512, qk_rope_head_dim=64,
        full_attention_layers=61, experts=256, experts_per_token=8, moe_intermediate=2048,
    )
    # one latent of 512 + one RoPE key of 64 per layer, no K/V pair, no heads: 576 × 61 × 2 bytes
    assert ModelPhysics.of(deepseek).kv_bytes_per_token(Precision.BF16) == 576 * 61 * 2
    # a GQA reading of the same config would have been 2 × 61 × 128 × 192 × 2 bytes: 53× more
    assert 2 * 61 * 128 * 192 * 2 / (576 * 61 * 2) > 50


def test_sliding_window_layers_stop_growing_at_the_window() -> None:
    gemma_like = make_model(layers=6, full_attention_layers=1, sliding_window=1024, kv_heads=4, head_dim=256)
    physics = ModelPhysics.of(gemma_like)
    per_layer = 2 * 4 * 256 * 2  # bytes per token per layer at bf16
    at_8k = physics.kv_bytes_for_context(8192, Precision.BF16)
    assert at_8k == per_layer * (1 * 8192 + 5 * 1024)


def test_weight_bytes_are_params_times_bytes_per_element() -> None:
    physics = ModelPhysics.of(make_model(params_b=70.55, active_params_b=70.55))
    assert physics.weight_bytes(Precision.BF16) == pytest.approx(70.55e9 * 2)
    assert physics.weight_bytes(Precision.FP8) == pytest.approx(70.55e9)


@pytest.mark.parametrize(("experts", "k", "tokens", "expected"), [
    (8, 2, 1, 2.0),                                  # one token touches exactly k experts
    (8, 2, 4, 8 * (1 - (6 / 8) ** 4)),               # 5.47 of 8
    (128, 8, 1000, 128 * (1 - (120 / 128) ** 1000)),  # essentially all
])
def test_expected_distinct_experts(experts: int, k: int, tokens: int, expected: float) -> None:
    assert expected_distinct_experts(experts, k, tokens) == pytest.approx(expected)


def test_moe_reads_shared_weights_plus_touched_experts() -> None:
    mixtral = make_model(params_b=46.7, active_params_b=12.9, experts=8, experts_per_token=2,
                         moe_intermediate=14336, intermediate=14336)
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
