"""solver.perf.inference: the replica's KV bytes per sequence and its throughput band."""

from __future__ import annotations

import pytest

from solver.domain import ModelSpec, Precision
from solver.perf.inference import ASSUMED_ARCHITECTURE_WIDENING, Deployment, build_replica
from solver.perf.models import model_from_spec

from .conftest import make_gpu, make_model


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
