"""Serving-engine scheduler limits: caps on the batch that hold whatever memory allows.

Defaults are each engine's out-of-the-box settings; a deployment (or a what-if case) may
override them.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.domain import Engine


@dataclass(frozen=True, slots=True)
class EngineLimits:
    max_num_seqs: int
    """Most sequences one engine iteration may carry."""
    max_batched_tokens: int
    """Token budget of one iteration; long prompts are prefilled in chunks of this size."""
    gpu_memory_utilization: float
    """Share of device memory the engine claims (weights + KV + activations)."""
    runtime_reserve_bytes: float
    """Per GPU, outside weights and KV: CUDA context, graphs, allocator slack."""


GIB = 2**30

ENGINE_DEFAULTS: dict[Engine, EngineLimits] = {
    # vLLM: --max-num-seqs 256, --gpu-memory-utilization 0.9, chunked prefill with an 8192-token
    # iteration budget on large-memory GPUs (vllm/engine/arg_utils.py defaults, v0.6-v0.11).
    Engine.VLLM: EngineLimits(256, 8192, 0.90, 1.5 * GIB),
    # SGLang: --max-running-requests is derived from memory (effectively unbounded here, capped
    # at 2048), --mem-fraction-static ~0.88, --chunked-prefill-size 8192 on H100-class GPUs.
    Engine.SGLANG: EngineLimits(2048, 8192, 0.88, 1.5 * GIB),
    # TensorRT-LLM (trtllm-bench): max_batch_size up to 2048, max_num_tokens 8192,
    # kv_cache_free_gpu_mem_fraction 0.9 of the memory left after weights.
    Engine.TRTLLM: EngineLimits(2048, 8192, 0.90, 1.0 * GIB),
}


def engine_limits(
    engine: Engine,
    *,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
) -> EngineLimits:
    base = ENGINE_DEFAULTS[engine]
    return EngineLimits(
        max_num_seqs=max_num_seqs or base.max_num_seqs,
        max_batched_tokens=max_batched_tokens or base.max_batched_tokens,
        gpu_memory_utilization=base.gpu_memory_utilization,
        runtime_reserve_bytes=base.runtime_reserve_bytes,
    )
