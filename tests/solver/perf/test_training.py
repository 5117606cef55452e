"""Training memory, fit and throughput, with expected numbers worked out here."""

from __future__ import annotations

import pytest

from pricebook.schema import ScaleUpLink
from solver.domain import TrainingMethod
from solver.perf.training import estimate_training

from .conftest import make_gpu, make_model

LLAMA70 = make_model(
    params_b=70.55,
    active_params_b=70.55,
    layers=80,
    hidden=8192,
    heads=64,
    intermediate=28672,
    full_attention_layers=80,
)


def test_full_training_shards_16_bytes_per_param_over_the_gpus() -> None:
    gpu = make_gpu()
    on_16 = estimate_training(LLAMA70, gpu, 16, TrainingMethod.FULL, 2048, 1e9)
    on_32 = estimate_training(LLAMA70, gpu, 32, TrainingMethod.FULL, 2048, 1e9)
    # Only the sharded states change with the GPU count: 16 B × 70.55e9 × (1/16 − 1/32)
    expected_gb = 16 * 70.55e9 * (1 / 16 - 1 / 32) / 1e9
    assert on_16.memory_per_gpu_gb - on_32.memory_per_gpu_gb == pytest.approx(expected_gb, rel=1e-9)


def test_min_gpus_is_the_smallest_count_that_fits() -> None:
    gpu = make_gpu()
    probe = estimate_training(LLAMA70, gpu, 8, TrainingMethod.FULL, 2048, 1e9)
    n = probe.min_gpus
    # 1129 GB of states over 80 GiB cards: at least 15 GPUs whatever the activations
    assert n >= 15
    assert estimate_training(LLAMA70, gpu, n, TrainingMethod.FULL, 2048, 1e9).fits
    below = estimate_training(LLAMA70, gpu, n - 1, TrainingMethod.FULL, 2048, 1e9)
    assert not below.fits and str(n) in below.reason


def test_lora_and_qlora_need_far_less_memory_than_full() -> None:
    gpu = make_gpu()
    # what one GPU would have to hold: 16 B/param (full) vs a 2 B bf16 base vs a 4.5-bit base
    full = estimate_training(LLAMA70, gpu, 1, TrainingMethod.FULL, 2048, 1e9)
    lora = estimate_training(LLAMA70, gpu, 1, TrainingMethod.LORA, 2048, 1e9)
    qlora = estimate_training(LLAMA70, gpu, 1, TrainingMethod.QLORA, 2048, 1e9)
    assert qlora.memory_per_gpu_gb < lora.memory_per_gpu_gb < full.memory_per_gpu_gb / 4
    assert qlora.min_gpus <= lora.min_gpus < full.min_gpus
    assert not lora.calibrated and full.calibrated


def test_lora_that_fits_one_gpu_is_replicated_not_sharded() -> None:
    gpu, model = make_gpu(), make_model()
    one = estimate_training(model, gpu, 1, TrainingMethod.LORA, 2048, 1e9)
    eight = estimate_training(model, gpu, 8, TrainingMethod.LORA, 2048, 1e9)
    assert one.fits and eight.memory_per_gpu_gb == pytest.approx(one.memory_per_gpu_gb)
    sharded_full = estimate_training(model, gpu, 8, TrainingMethod.FULL, 2048, 1e9)
    two_full = estimate_training(model, gpu, 2, TrainingMethod.FULL, 2048, 1e9)
    assert sharded_full.memory_per_gpu_gb < two_full.memory_per_gpu_gb


def test_gpu_hours_and_pcie_without_p2p_is_never_faster() -> None:
    model = make_model()
    nvlink = estimate_training(model, make_gpu(), 8, TrainingMethod.FULL, 4096, 2e9)
    host = estimate_training(
        model,
        make_gpu(
            scale_up_link=ScaleUpLink.PCIE_HOST,
            scale_up_bandwidth_gbs=64,
            pcie_bandwidth_gbs=64,
            p2p_over_pcie=False,
        ),
        8,
        TrainingMethod.FULL,
        4096,
        2e9,
    )
    assert nvlink.gpu_hours == pytest.approx(nvlink.hours * 8)
    assert nvlink.hours == pytest.approx(2e9 / nvlink.tokens_per_s / 3600)
    assert host.tokens_per_s <= nvlink.tokens_per_s
    assert host.link == "pcie_host"
