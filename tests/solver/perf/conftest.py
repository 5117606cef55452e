"""Fixtures: GPU specs and architectures built by hand from the shared schema (not from the code
under test), so the physics tests check arithmetic against numbers written out here."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from pricebook.schema import Architecture, AttentionType, GpuSpec, ModelArch, ScaleUpLink, Vendor

AS_OF = dt.date(2026, 12, 1)


def make_gpu(**overrides: Any) -> GpuSpec:
    """An H100 SXM by default (NVIDIA datasheet: 80 GB HBM3, 3350 GB/s, 989/1979 dense TFLOPs)."""
    fields: dict[str, Any] = {
        "id": "test-h100",
        "name": "test H100 SXM",
        "vendor": Vendor.NVIDIA,
        "architecture": Architecture.HOPPER,
        "form_factor": "sxm",
        "memory_gb": 80,
        "memory_type": "HBM3",
        "memory_bandwidth_gbs": 3350,
        "bf16_tflops": 989,
        "fp8_tflops": 1979,
        "fp4_tflops": 0,
        "int8_tops": 1979,
        "l2_mb": 50,
        "tdp_w": 700,
        "scale_up_link": ScaleUpLink.NVLINK,
        "scale_up_bandwidth_gbs": 900,
        "scale_up_domain_size": 8,
        "pcie_gen": 5,
        "pcie_bandwidth_gbs": 128,
        "p2p_over_pcie": True,
        "mig_max_instances": 7,
        "ecc": True,
        "source": "test fixture",
        "as_of": AS_OF,
    }
    fields.update(overrides)
    return GpuSpec(**fields)


def make_model(**overrides: Any) -> ModelArch:
    """Llama-3.1-8B by default (HF config: 32 layers, 4096 hidden, 32 heads, 8 KV heads × 128)."""
    fields: dict[str, Any] = {
        "id": "test/llama-8b",
        "family": "test",
        "params_b": 8.03,
        "active_params_b": 8.03,
        "layers": 32,
        "hidden": 4096,
        "intermediate": 14336,
        "heads": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "vocab": 128256,
        "max_context": 131072,
        "attention": AttentionType.GQA,
        "full_attention_layers": 32,
        "source": "test fixture",
        "as_of": AS_OF,
    }
    fields.update(overrides)
    return ModelArch(**fields)


@pytest.fixture
def h100() -> GpuSpec:
    return make_gpu()


@pytest.fixture
def llama8b() -> ModelArch:
    return make_model()
