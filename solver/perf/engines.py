"""Serving engines by version: scheduler limits and runtime features, each default with its source.

A deployment names an engine and (optionally) its version; ``engine_profile`` returns the
documented out-of-the-box settings of that version on that GPU — caps on the batch that hold
whatever memory allows, the memory share, and the runtime features (CUDA graphs, fused
all-reduce) that decide which fitted step costs apply. A deployment (or a what-if case) may
override the caps.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from solver.domain import Engine, Precision

GIB = 2**30


class EngineGeneration(StrEnum):
    """Versions of one engine whose scheduler and runtime differ enough to be fitted apart."""

    VLLM_V0 = "vllm-v0"
    """vLLM before 0.8: the V0 engine (Python scheduler, eager or full CUDA graphs for decode)."""
    VLLM_V1 = "vllm-v1"
    """vLLM 0.8 and later: the V1 engine (always-on chunked prefill, piecewise CUDA graphs)."""
    SGLANG = "sglang"
    TRTLLM_V0 = "trtllm-v0"
    """TensorRT-LLM before 1.0: the TensorRT engine backend (trtllm-bench tables, v0.x)."""
    TRTLLM_V1 = "trtllm-v1"
    """TensorRT-LLM 1.x: the PyTorch backend (trtllm-serve), CUDA graphs and fused all-reduce."""


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
    generation: EngineGeneration = EngineGeneration.VLLM_V1
    """Which fitted step costs apply (``calibration.json`` ``engine`` section, by generation)."""
    cuda_graphs: bool = True
    """Decode iterations replay captured CUDA graphs (no per-kernel launch cost)."""
    fused_allreduce: bool = False
    """The TP all-reduce is fused with the residual add and RMSNorm (one kernel, no NCCL call)."""
    kv_fp8_with_fp8_weights: bool = False
    """The KV cache defaults to FP8 when the checkpoint is FP8 (else it keeps the activation dtype)."""
    source: str = ""
    """Where these defaults are documented."""


@dataclass(frozen=True, slots=True)
class _Release:
    """Defaults of one engine from ``first_version`` on (until the next entry)."""

    first_version: tuple[int, int]
    generation: EngineGeneration
    max_num_seqs: int
    max_num_seqs_large_gpu: int
    """On GPUs with at least ``LARGE_GPU_GIB`` of memory (vLLM V1 raises its caps there)."""
    max_batched_tokens: int
    max_batched_tokens_large_gpu: int
    gpu_memory_utilization: float
    gpu_memory_utilization_large_gpu: float
    runtime_reserve_gib: float
    cuda_graphs: bool
    fused_allreduce: bool
    kv_fp8_with_fp8_weights: bool
    source: str


LARGE_GPU_GIB = 70.0
"""vLLM V1's threshold (``vllm/engine/arg_utils.py``: device memory >= 70 GiB and not an A100)
for its larger defaults; SGLang's chunk size and memory share also step up on such GPUs."""

RELEASES: dict[Engine, tuple[_Release, ...]] = {
    Engine.VLLM: (
        _Release(
            (0, 0), EngineGeneration.VLLM_V0, 256, 256, 2048, 2048, 0.90, 0.90, 1.5, True, False, False,
            "vLLM 0.6-0.7 vllm/engine/arg_utils.py: --max-num-seqs 256, chunked prefill on for online "
            "serving with --max-num-batched-tokens 2048 (0.6.x), --gpu-memory-utilization 0.9, custom "
            "all-reduce (not fused), CUDA graphs for decode, --kv-cache-dtype auto (= the activation dtype)",
        ),
        _Release(
            (0, 8), EngineGeneration.VLLM_V1, 256, 256, 2048, 8192, 0.90, 0.90, 1.5, True, False, False,
            "vLLM 0.8-0.9 (V1 engine default): --max-num-seqs 256, --max-num-batched-tokens 8192 on "
            ">= 70 GiB GPUs for vllm serve else 2048, piecewise CUDA graphs, --kv-cache-dtype auto",
        ),
        _Release(
            (0, 10), EngineGeneration.VLLM_V1, 256, 1024, 2048, 8192, 0.90, 0.90, 1.5, True, False, False,
            "vLLM 0.10+ vllm/engine/arg_utils.py _set_default_args: on GPUs with >= 70 GiB (not A100) "
            "vllm serve defaults to --max-num-seqs 1024 and --max-num-batched-tokens 8192 (else 256 / "
            "2048); --gpu-memory-utilization 0.9; --kv-cache-dtype auto keeps BF16 KV for FP8 weights",
        ),
    ),
    Engine.SGLANG: (
        _Release(
            (0, 0), EngineGeneration.SGLANG, 2048, 2048, 8192, 16384, 0.88, 0.92, 1.5, True, True, False,
            "SGLang server_args.py: --max-running-requests derived from memory (2048 cap here), "
            "--chunked-prefill-size 8192 on 60-90 GB GPUs and 16384 above, --mem-fraction-static "
            "~0.88 (larger on >= 160 GB GPUs, where the reserve is a smaller share), CUDA graphs, "
            "custom all-reduce fused with RMSNorm (flashinfer), --kv-cache-dtype auto",
        ),
    ),
    Engine.TRTLLM: (
        _Release(
            (0, 0), EngineGeneration.TRTLLM_V0, 2048, 2048, 8192, 8192, 0.90, 0.90, 1.0, False, False, True,
            "TensorRT-LLM 0.x trtllm-bench (TensorRT backend): max_batch_size up to 2048, "
            "max_num_tokens 8192, kv_cache_free_gpu_mem_fraction 0.9 of the memory after weights, "
            "FP8 KV with FP8 (ModelOpt) checkpoints",
        ),
        _Release(
            (1, 0), EngineGeneration.TRTLLM_V1, 2048, 2048, 8192, 8192, 0.90, 0.90, 1.0, True, True, True,
            "TensorRT-LLM 1.x trtllm-serve (PyTorch backend): max_batch_size 2048, max_num_tokens 8192, "
            "free_gpu_memory_fraction 0.9, CUDA graphs on, all-reduce fused with residual + RMSNorm, "
            "FP8 KV with FP8 / NVFP4 ModelOpt checkpoints",
        ),
    ),
}
"""Per engine, releases in version order; a version uses the last entry it has reached."""

_VERSION = re.compile(r"v?(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int] | None:
    """``"0.19.0"`` / ``"v0.5.9-cu130"`` / ``"1.2.0rc6.post2"`` → (major, minor); None = no number
    (empty, ``"nightly-…"``, a branch name: the newest documented defaults apply)."""
    match = _VERSION.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _release(engine: Engine, version: str) -> _Release:
    releases = RELEASES[engine]
    parsed = parse_version(version)
    if parsed is None:
        return releases[-1]
    chosen = releases[0]
    for release in releases:
        if parsed >= release.first_version:
            chosen = release
    return chosen


def engine_limits(
    engine: Engine,
    *,
    version: str = "",
    gpu_memory_gib: float = 80.0,
    gpu_is_a100: bool = False,
    max_num_seqs: int | None = None,
    max_batched_tokens: int | None = None,
    scheduler_steps: int | None = None,
) -> EngineLimits:
    """The documented defaults of ``engine`` at ``version`` on a GPU of ``gpu_memory_gib``."""
    r = _release(engine, version)
    large = gpu_memory_gib >= LARGE_GPU_GIB and not gpu_is_a100
    very_large = gpu_memory_gib >= 2 * LARGE_GPU_GIB
    return EngineLimits(
        max_num_seqs=max_num_seqs or (r.max_num_seqs_large_gpu if large else r.max_num_seqs),
        max_batched_tokens=max_batched_tokens
        or (r.max_batched_tokens_large_gpu if large and (engine is not Engine.SGLANG or very_large)
            else r.max_batched_tokens),
        gpu_memory_utilization=r.gpu_memory_utilization_large_gpu if very_large else r.gpu_memory_utilization,
        runtime_reserve_bytes=r.runtime_reserve_gib * GIB,
        scheduler_steps=scheduler_steps or 1,
        generation=r.generation,
        cuda_graphs=r.cuda_graphs,
        fused_allreduce=r.fused_allreduce,
        kv_fp8_with_fp8_weights=r.kv_fp8_with_fp8_weights,
        source=r.source,
    )


def default_kv_precision(precision: Precision, engine: Engine = Engine.VLLM, version: str = "") -> Precision:
    """KV cache precision when none is asked, as each engine documents it: vLLM and SGLang keep
    the activation dtype (BF16) unless ``--kv-cache-dtype fp8`` is given; TensorRT-LLM uses the
    checkpoint's FP8 KV quantisation with FP8 / FP4 ModelOpt checkpoints."""
    fp8_kv = _release(engine, version).kv_fp8_with_fp8_weights
    if fp8_kv and precision in (Precision.FP8, Precision.FP4):
        return Precision.FP8
    return Precision.BF16


# Share of the ``max_batched_tokens`` budget above that one iteration fills with prompt chunks, as
# documented by each engine's scheduler defaults: (lowest, highest) across the versions and GPUs the
# defaults depend on. The fit may move it only inside that range and only from latency data of that
# engine (TTFT and TPOT are what the chunk size moves); with none it is the range's geometric centre.
DOCUMENTED_PREFILL_BUDGET_SHARE: dict[Engine, tuple[float, float]] = {
    # vLLM: the budget itself is now per version (2048 / 8192 above); the scheduler fills it with
    # prompt chunks up to long_prefill_token_threshold (default: the whole budget) — 0.5-1.
    Engine.VLLM: (0.5, 1.0),
    # SGLang --chunked-prefill-size: the budget itself.
    Engine.SGLANG: (1.0, 1.0),
    # TensorRT-LLM inflight batching packs whole contexts up to max_num_tokens (8192).
    Engine.TRTLLM: (1.0, 1.0),
}


def documented_prefill_budget_share(engine: Engine) -> float:
    """The share used when no latency data of ``engine`` was fitted: the documented range's centre."""
    low, high = DOCUMENTED_PREFILL_BUDGET_SHARE[engine]
    return math.sqrt(low * high)
