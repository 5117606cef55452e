"""resolve_model: catalogue ids and aliases, inline specs, size-only specs (assumed)."""

from __future__ import annotations

import pytest

from pricebook.errors import UnknownEntryError
from pricebook.loader import load_default
from solver.domain import ModelRef, ModelSpec, Precision, Sla
from solver.perf import Deployment, WorkloadShape, capacity_at_sla, resolve_model

from .conftest import make_gpu

BOOK = load_default()


def test_catalogue_id_and_unknown_id() -> None:
    model = resolve_model(ModelRef(model_id="meta-llama/Llama-3.1-8B"), BOOK)
    assert model.layers == 32 and not model.assumed
    with pytest.raises(UnknownEntryError):
        resolve_model(ModelRef(model_id="no/such-model"), BOOK)


def test_size_only_spec_gets_a_typical_architecture_of_that_size() -> None:
    model = resolve_model(ModelRef(spec=ModelSpec(params_b=70)), BOOK)
    assert model.assumed
    # 12 · layers · hidden² ≈ the parameter count (embeddings aside), within 15%
    assert 12 * model.layers * model.hidden**2 == pytest.approx(70e9, rel=0.15)
    assert model.kv_heads <= model.heads


def test_full_inline_spec_is_not_assumed_and_moe_spec_gets_experts() -> None:
    spec = ModelSpec(params_b=8, layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128)
    assert not resolve_model(ModelRef(spec=spec), BOOK).assumed
    moe = resolve_model(ModelRef(spec=ModelSpec(params_b=30, active_params_b=3)), BOOK)
    assert moe.experts > 0 and moe.experts_per_token / moe.experts == pytest.approx(0.1, abs=0.02)


def test_assumed_architecture_widens_the_band() -> None:
    assumed = resolve_model(ModelRef(spec=ModelSpec(params_b=8)), BOOK)
    known = resolve_model(ModelRef(model_id="meta-llama/Llama-3.1-8B"), BOOK)
    deployment, shape = Deployment(make_gpu(), 1, Precision.BF16), WorkloadShape(1000, 200)
    a = capacity_at_sla(assumed, deployment, shape, Sla())
    k = capacity_at_sla(known, deployment, shape, Sla())
    assert a.assumed_architecture and not k.assumed_architecture
    assert a.band_high / a.band_low > k.band_high / k.band_low


def test_two_inline_specs_of_the_same_size_are_not_confused() -> None:
    gqa = resolve_model(ModelRef(spec=ModelSpec(params_b=8, layers=32, hidden=4096, kv_heads=8)), BOOK)
    mha = resolve_model(ModelRef(spec=ModelSpec(params_b=8, layers=32, hidden=4096, kv_heads=32)), BOOK)
    deployment, shape = Deployment(make_gpu(), 1, Precision.BF16), WorkloadShape(1000, 200)
    a = capacity_at_sla(gqa, deployment, shape, Sla())
    b = capacity_at_sla(mha, deployment, shape, Sla())
    # 4× the KV heads: 4× the KV bytes per token
    assert b.memory.kv_bytes_per_token == pytest.approx(4 * a.memory.kv_bytes_per_token)
