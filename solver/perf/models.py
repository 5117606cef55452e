"""Turn a request's model reference into an architecture: catalogue entry, inline spec, or a
typical architecture synthesised from a parameter count (flagged ``assumed``)."""

from __future__ import annotations

import datetime as dt
import math

from pricebook import catalog
from pricebook.schema import AttentionType, ModelArch, Pricebook
from solver.domain import ModelRef, ModelSpec

# A typical modern decoder (Llama-3 / Qwen2.5 style): width ≈ 128 × depth, GQA with 8 KV heads
# of 128 dims, SwiGLU MLP of 3.5× width, 128k vocabulary. Params ≈ 12 · layers · hidden².
TYPICAL_WIDTH_PER_LAYER = 128
TYPICAL_HEAD_DIM = 128
TYPICAL_KV_HEADS = 8
TYPICAL_MLP_RATIO = 3.5
TYPICAL_VOCAB = 128_256
TYPICAL_CONTEXT = 131_072
TYPICAL_EXPERTS = 64
SYNTHETIC_AS_OF = dt.date(2026, 12, 1)


def resolve_model(ref: ModelRef, book: Pricebook) -> ModelArch:
    """The architecture a request refers to; raises ``UnknownEntryError`` for unknown ids."""
    if ref.model_id is not None:
        return find_model(book, ref.model_id)
    assert ref.spec is not None  # ModelRef guarantees exactly one
    return model_from_spec(ref.spec)


def find_model(book: Pricebook, key: str) -> ModelArch:
    """Catalogue lookup by id or alias (``pricebook.catalog``); raises ``UnknownEntryError``."""
    return catalog.model(book, key)


def _round_to(value: float, step: int) -> int:
    return max(step, round(value / step) * step)


def model_from_spec(spec: ModelSpec) -> ModelArch:
    """An inline architecture; fields left out are filled from a typical model of that size."""
    active_b = spec.active_params_b or spec.params_b
    is_moe = (spec.experts or 0) > 0 or active_b < spec.params_b
    # Dimensions follow the active parameters (what each token runs through).
    hidden = spec.hidden or _round_to((active_b * 1e9 * TYPICAL_WIDTH_PER_LAYER / 12.0) ** (1 / 3), 256)
    layers = spec.layers or max(1, round(active_b * 1e9 / (12.0 * hidden * hidden)))
    head_dim = spec.head_dim or TYPICAL_HEAD_DIM
    heads = spec.heads or max(1, hidden // head_dim)
    kv_heads = spec.kv_heads or min(heads, TYPICAL_KV_HEADS)
    experts = spec.experts if spec.experts is not None else (TYPICAL_EXPERTS if is_moe else 0)
    if experts and not spec.experts_per_token:
        # Share of routed experts active ≈ share of parameters active.
        per_token = max(1, math.ceil(experts * active_b / spec.params_b))
    else:
        per_token = spec.experts_per_token or 0
    assumed = spec.layers is None or spec.hidden is None or spec.kv_heads is None
    kv_lora = spec.kv_lora_rank or 0
    return ModelArch(
        id=f"inline-{spec.params_b:g}b" + (f"-a{active_b:g}b" if is_moe else ""),
        family="inline",
        params_b=spec.params_b,
        active_params_b=active_b,
        layers=layers,
        hidden=hidden,
        intermediate=spec.intermediate or _round_to(TYPICAL_MLP_RATIO * hidden, 256),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab=spec.vocab or TYPICAL_VOCAB,
        max_context=spec.max_context or TYPICAL_CONTEXT,
        experts=experts,
        experts_per_token=per_token,
        attention=AttentionType.MLA if kv_lora else AttentionType.GQA,
        kv_lora_rank=kv_lora,
        full_attention_layers=layers,
        assumed=assumed,
        source="inline model spec"
        + (" (typical architecture assumed from the parameter count)" if assumed else ""),
        as_of=SYNTHETIC_AS_OF,
    )
