"""Serving-engine scheduler limits: caps on the batch that hold whatever memory allows.

Defaults are each engine's out-of-the-box settings; a deployment (or a what-if case) may
override them.
"""

from __future__ import annotations

import math
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
    scheduler_steps: int = 1
    """Decode iterations run back to back between scheduler passes (vLLM 0.6
    ``--num-scheduler-steps``; default 1). A new request waits for the running block to end."""


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


# Share of the ``max_batched_tokens`` budget above that one iteration fills with prompt chunks, as
# documented by each engine's scheduler defaults: (lowest, highest) across the versions and GPUs the
# defaults depend on. The fit may move it only inside that range and only from latency data of that
# engine (TTFT and TPOT are what the chunk size moves); with none it is the range's geometric centre.
DOCUMENTED_PREFILL_BUDGET_SHARE: dict[Engine, tuple[float, float]] = {
    # vLLM V1 `vllm serve` sets max_num_batched_tokens to 8192 on >= 70 GiB non-A100 GPUs and to
    # 2048 elsewhere (2048 was also the V0.6 online default with chunked prefill): 2048-8192
    # tokens, 0.25-1 of the 8192 budget; centre 0.5.
    Engine.VLLM: (0.25, 1.0),
    # SGLang --chunked-prefill-size: 8192 on 60-90 GB GPUs (A100/H100 80 GB), the budget itself.
    Engine.SGLANG: (1.0, 1.0),
    # TensorRT-LLM inflight batching packs whole contexts up to max_num_tokens (8192).
    Engine.TRTLLM: (1.0, 1.0),
}


def documented_prefill_budget_share(engine: Engine) -> float:
    """The share used when no latency data of ``engine`` was fitted: the documented range's centre."""
    low, high = DOCUMENTED_PREFILL_BUDGET_SHARE[engine]
    return math.sqrt(low * high)


def engine_limits(
    engine: Engine,
    *,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
    scheduler_steps: int | None = None,
) -> EngineLimits:
    base = ENGINE_DEFAULTS[engine]
    return EngineLimits(
        max_num_seqs=max_num_seqs or base.max_num_seqs,
        max_batched_tokens=max_batched_tokens or base.max_batched_tokens,
        gpu_memory_utilization=base.gpu_memory_utilization,
        runtime_reserve_bytes=base.runtime_reserve_bytes,
        scheduler_steps=scheduler_steps or base.scheduler_steps,
    )
