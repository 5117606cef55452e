"""One replica (a model on ``tp`` GPUs of one type, or on a MIG slice): how it is deployed, its
memory, and the physics of one engine iteration.

* memory: weights / TP + runtime reserve per GPU; the rest of the engine's memory share holds the
  KV cache, which bounds the concurrency;
* one engine iteration ("step") over ``b`` decoding sequences plus a chunk of prefill tokens takes
  ``max(memory time, compute time) + TP all-reduce time + per-step overhead``, where memory time
  streams the weights the step touches and the KV of every decoding sequence, and compute time
  is the GEMM and attention FLOPs over peak × efficiency;
* continuous batching with chunked prefill: prefill chunks ride in the same iterations as decode,
  so decode iterations stretch while prompts are being processed.

The loads that run on it are in ``regimes``; ``inference.estimate_inference`` puts them together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from functools import cached_property

from pricebook.schema import AttentionType, GpuSpec, ModelArch
from solver.domain import Engine, Precision
from solver.perf.calibration import Calibration, EfficiencyFactors, load_calibration
from solver.perf.engines import EngineLimits, default_kv_precision, engine_limits
from solver.perf.physics import (
    GB,
    GIB,
    GpuPhysics,
    ModelPhysics,
    allreduce_seconds,
    bytes_per_element,
    model_physics,
)

ASSUMED_ARCHITECTURE_WIDENING = 1.15
"""Extra throughput band width (× on the high side, ÷ on the low side) when the architecture was
synthesised from a parameter count."""
ASSUMED_CALIBRATION_WIDENING = 1.15
"""The same widening when the GPU family, or the precision on it, has no measurement of its own
(its factors are borrowed: a sibling family's multipliers, other precisions' kernels)."""


class Bottleneck(StrEnum):
    MEMORY_BANDWIDTH = "memory_bandwidth"
    COMPUTE = "compute"
    INTERCONNECT = "interconnect"
    KV_CAPACITY = "kv_capacity"
    SCHEDULER = "scheduler"
    PREFILL_BUDGET = "prefill_budget"
    """Prompts arrive faster than the iterations' token budget prefills them (a queue forms)."""


@dataclass(frozen=True)
class Deployment:
    """How one replica runs: ``tp`` GPUs of ``gpu`` (or 1/``mig_slice`` of one GPU)."""

    gpu: GpuSpec
    tp: int = 1
    precision: Precision = Precision.BF16
    kv_precision: Precision | None = None
    """None = the engine's documented default (``engines.default_kv_precision``)."""
    engine: Engine = Engine.VLLM
    mig_slice: int = 0
    """n > 0: the replica runs on a 1/n MIG slice of one GPU (tp must be 1)."""
    card_share: float = 1.0
    """< 1: the replica shares its card(s) with another model and gets this share of each card's
    time and memory (co-location, ``solver.optimizer.colocation``); not with a MIG slice."""
    max_num_seqs: int | None = None
    """Override of the engine's cap on concurrent sequences."""
    max_batched_tokens: int | None = None
    """Override of the engine's per-iteration token budget."""
    num_scheduler_steps: int | None = None
    """Override of the engine's decode iterations per scheduler pass (vLLM 0.6 multi-step)."""
    engine_version: str = ""
    """The engine's release (``"0.11.2"``); empty = the newest documented defaults."""

    def __post_init__(self) -> None:
        if self.tp < 1:
            msg = "tp must be at least 1"
            raise ValueError(msg)
        if self.mig_slice < 0 or (self.mig_slice > 0 and self.tp != 1):
            msg = "a MIG slice runs one replica on part of one GPU (tp must be 1)"
            raise ValueError(msg)
        if not 0 < self.card_share <= 1 or (self.card_share < 1 and self.mig_slice):
            msg = "card_share is a share of whole cards in (0, 1]"
            raise ValueError(msg)

    def __hash__(self) -> int:
        gpu = (self.gpu.id, self.gpu.memory_gb, self.gpu.memory_bandwidth_gbs)
        return hash((gpu, *(getattr(self, f.name) for f in fields(self) if f.name != "gpu")))

    @property
    def effective_kv_precision(self) -> Precision:
        return self.kv_precision or default_kv_precision(self.precision, self.engine, self.engine_version)

    @property
    def gpus(self) -> int:
        return self.tp

    def describe(self) -> str:
        where = (
            f"1/{self.mig_slice} MIG slice of {self.gpu.id}"
            if self.mig_slice
            else f"{self.gpu.id} × TP {self.tp}"
        )
        shared = f" ({self.card_share:.3g} of each card, co-located)" if self.card_share < 1 else ""
        return f"{where}{shared} at {self.precision.value}"


@dataclass(frozen=True, slots=True)
class WorkloadShape:
    input_tokens: int
    output_tokens: int
    prefix_cache_hit_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.input_tokens < 1 or self.output_tokens < 1:
            msg = "input_tokens and output_tokens must be at least 1"
            raise ValueError(msg)
        if not 0.0 <= self.prefix_cache_hit_rate < 1.0:
            msg = "prefix_cache_hit_rate must be in [0, 1)"
            raise ValueError(msg)


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Per GPU of the replica, in GB (1e9 bytes)."""

    usable_gb: float
    """The engine's share of device memory."""
    weights_gb: float
    reserve_gb: float
    kv_gb: float
    """Left for the KV cache (negative when the weights do not fit)."""
    kv_bytes_per_token: float
    """KV bytes per token of context for the whole replica (before window caps)."""
    max_concurrency: int
    """Sequences of the full requested length whose KV fits (0 = does not fit)."""


# --------------------------------------------------------------------------------------------
# The replica: everything reduced to hashable numbers, with the physics of one step
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    model: ModelPhysics
    gpu: GpuPhysics
    tp: int
    precision: Precision
    kv_precision: Precision
    limits: EngineLimits
    factors: EfficiencyFactors
    band: tuple[float, float, float, float]
    """(throughput low, throughput high, latency low, latency high) multiplicative factors."""
    unsupported_mig: str = ""
    """Why the requested MIG slice does not exist on this GPU (empty when it does or none asked)."""
    assumed_calibration: str = ""
    """Why this GPU at this precision has no measurement in the calibration (empty when it has)."""

    @cached_property
    def throughput_band(self) -> tuple[float, float]:
        """(low, high) throughput factors, widened once for an assumed architecture and once for
        a GPU family or precision the calibration has not measured."""
        low, high, _, _ = self.band
        widening = (ASSUMED_ARCHITECTURE_WIDENING if self.model.assumed else 1.0) * (
            ASSUMED_CALIBRATION_WIDENING if self.assumed_calibration else 1.0
        )
        return low / widening, high * widening

    @cached_property
    def kv_replication(self) -> float:
        """How many copies of each KV head the TP group stores (heads can't be split below 1)."""
        if self.model.attention is AttentionType.MLA:
            return float(self.tp)  # the latent is not split by head: every rank keeps it all
        return self.tp / min(self.tp, self.model.kv_heads)

    # ---- memory --------------------------------------------------------------------------
    @cached_property
    def weights_per_gpu(self) -> float:
        return self.model.weight_bytes(self.precision) / self.tp

    @cached_property
    def reserve_per_gpu(self) -> float:
        # Activations of one full iteration (hidden + MLP intermediate, fp16) on top of the
        # engine's fixed runtime reserve.
        activations = self.limits.max_batched_tokens * (4 * self.model.hidden) * 2.0
        return self.limits.runtime_reserve_bytes + activations

    @cached_property
    def usable_per_gpu(self) -> float:
        return self.gpu.memory_bytes * self.limits.gpu_memory_utilization

    @cached_property
    def kv_capacity(self) -> float:
        """KV bytes the whole replica can hold."""
        return self.tp * (self.usable_per_gpu - self.weights_per_gpu - self.reserve_per_gpu)

    @cached_property
    def _kv_coefficients(self) -> tuple[float, float, float]:
        """(bytes per token in full layers, bytes per token in window layers, window) per replica."""
        scale = bytes_per_element(self.kv_precision) * self.kv_replication
        m = self.model
        return m.kv_elements_full_per_token * scale, m.kv_elements_window_per_token * scale, float(m.window)

    def kv_bytes_of_sequence(self, context_tokens: float) -> float:
        full, window_part, window = self._kv_coefficients
        return full * context_tokens + window_part * (
            min(context_tokens, window) if window else context_tokens
        )

    @cached_property
    def _step_constants(self) -> tuple[float, float, float, float, float]:
        """(weights bw B/s, KV bw B/s, FLOP/s, link B/s, link latency s) after efficiencies."""
        f = self.factors
        bw = self.gpu.bandwidth_bytes_s
        link, link_bw = self.gpu.tp_link(self.tp) if self.tp > 1 else (self.gpu.link, 1.0)
        return (
            bw * f.bandwidth_efficiency,
            bw * f.attention_efficiency,
            self.gpu.peak_flops(self.precision) * f.compute_efficiency,
            link_bw * f.communication_efficiency,
            f.allreduce_latency_s(link),
        )

    def kv_bytes_read(self, context_tokens: float) -> float:
        """KV bytes one decode step of a sequence reads: with sparse attention the top-k keys of
        each full layer plus the indexer's FP8 keys over the whole context."""
        m = self.model
        if not m.sparse_topk:
            return self.kv_bytes_of_sequence(context_tokens)
        full, window_part, window = self._kv_coefficients
        index = m.index_elements_per_token * bytes_per_element(Precision.FP8) * self.kv_replication
        return (
            full * m.attended_context(context_tokens)
            + window_part * (min(context_tokens, window) if window else context_tokens)
            + index * context_tokens
        )

    def sequences_fitting(self, context_tokens: float) -> int:
        capacity = self.kv_capacity
        if capacity <= 0:
            return 0
        return int(capacity // max(self.kv_bytes_of_sequence(context_tokens), 1.0))

    # ---- one iteration -------------------------------------------------------------------
    def step(
        self,
        decode_batch: float,
        decode_context: float,
        prefill_tokens: float = 0.0,
        prefill_seen_context: float = 0.0,
    ) -> tuple[float, Bottleneck]:
        """Seconds of one engine iteration and the component that dominates it."""
        f = self.factors
        weights_bw, kv_bw, flops_s, link_bw, link_latency = self._step_constants
        tokens = decode_batch + prefill_tokens
        weights = self.model.weight_bytes_read_per_step(self.precision, tokens) / self.tp
        kv = decode_batch * self.kv_bytes_read(decode_context) / self.tp
        memory_s = weights / weights_bw + kv / kv_bw
        flops = self.model.linear_flops_per_token() * tokens
        flops += self.model.attention_flops(decode_batch, decode_context)
        if prefill_tokens > 0:
            flops += self.model.attention_flops(prefill_tokens, prefill_seen_context)
        compute_s = flops / self.tp / flops_s
        comm_s = 0.0
        if self.tp > 1:
            message = tokens * self.model.allreduce_bytes_per_token()
            comm_s = 2 * self.model.layers * allreduce_seconds(message, self.tp, link_bw, link_latency)
        overhead_s = f.step_overhead_s + f.per_sequence_overhead_s * decode_batch
        # the largest of the four parts names the bottleneck (written out: this is the hot path)
        if memory_s >= compute_s:
            largest, dominant = memory_s, Bottleneck.MEMORY_BANDWIDTH
        else:
            largest, dominant = compute_s, Bottleneck.COMPUTE
        step_s = largest + comm_s + overhead_s
        if comm_s > largest:
            largest, dominant = comm_s, Bottleneck.INTERCONNECT
        if overhead_s > largest:
            dominant = Bottleneck.SCHEDULER
        return step_s, dominant

    def prefill_chunk(self, decode_batch: float) -> float:
        """Prefill tokens one iteration can carry next to ``decode_batch`` decode tokens."""
        budget = self.limits.max_batched_tokens * self.factors.prefill_budget_share
        return max(budget - decode_batch, MIN_PREFILL_CHUNK)

    def prefill(
        self, shape: WorkloadShape, decode_batch: float, decode_context: float
    ) -> tuple[float, float]:
        """(seconds to prefill one prompt while ``decode_batch`` sequences decode, seconds per chunk step)."""
        uncached = uncached_tokens(shape)
        chunk = min(self.prefill_chunk(decode_batch), uncached)
        step_s, _ = self.step(decode_batch, decode_context, chunk, prefill_seen_context(shape))
        return uncached / chunk * step_s, step_s


MIN_PREFILL_CHUNK = 16.0
"""Even with the token budget full of decodes, schedulers make some prefill progress."""


def uncached_tokens(shape: WorkloadShape) -> float:
    return max(1.0, shape.input_tokens * (1.0 - shape.prefix_cache_hit_rate))


def prefill_seen_context(shape: WorkloadShape) -> float:
    """Keys the average prompt token attends to: the cached prefix plus half the new part."""
    uncached = uncached_tokens(shape)
    return shape.input_tokens - uncached + uncached / 2.0


def build_replica(model: ModelArch, deployment: Deployment, calibration: Calibration | None) -> Replica:
    cal = calibration or load_calibration()
    gpu = (
        GpuPhysics.mig_instance(deployment.gpu, deployment.mig_slice)
        if deployment.mig_slice
        else GpuPhysics.card_part(deployment.gpu, deployment.card_share)
        if deployment.card_share < 1
        else GpuPhysics.of(deployment.gpu)
    )
    limits = engine_limits(
        deployment.engine,
        version=deployment.engine_version,
        gpu_memory_gib=gpu.memory_bytes / GIB,
        gpu_is_a100=deployment.gpu.id.startswith("a100"),
        max_num_seqs=deployment.max_num_seqs,
        max_batched_tokens=deployment.max_batched_tokens,
        scheduler_steps=deployment.num_scheduler_steps,
    )
    return Replica(
        model=model_physics(model),
        gpu=gpu,
        tp=deployment.tp,
        precision=deployment.precision,
        kv_precision=deployment.effective_kv_precision,
        limits=limits,
        factors=cal.factors(
            deployment.gpu,
            deployment.engine,
            limits.generation,
            deployment.precision,
            deployment.effective_kv_precision,
        ),
        band=(cal.band_low, cal.band_high, cal.latency_band_low, cal.latency_band_high),
        unsupported_mig=_mig_problem(deployment),
        assumed_calibration=cal.assumed(deployment.gpu, deployment.precision),
    )


def _mig_problem(deployment: Deployment) -> str:
    slices, gpu = deployment.mig_slice, deployment.gpu
    if slices == 0 or slices <= gpu.mig_max_instances:
        return ""
    if gpu.mig_max_instances == 0:
        return f"{gpu.id} does not support MIG"
    return f"{gpu.id} supports at most {gpu.mig_max_instances} MIG instances, not {slices}"


# --------------------------------------------------------------------------------------------
# Feasibility in words
# --------------------------------------------------------------------------------------------


def memory_breakdown(replica: Replica, shape: WorkloadShape) -> MemoryBreakdown:
    full_context = shape.input_tokens + shape.output_tokens
    return MemoryBreakdown(
        usable_gb=replica.usable_per_gpu / GB,
        weights_gb=replica.weights_per_gpu / GB,
        reserve_gb=replica.reserve_per_gpu / GB,
        kv_gb=(replica.usable_per_gpu - replica.weights_per_gpu - replica.reserve_per_gpu) / GB,
        kv_bytes_per_token=replica.model.kv_bytes_per_token(replica.kv_precision) * replica.kv_replication,
        max_concurrency=min(replica.sequences_fitting(full_context), replica.limits.max_num_seqs),
    )


def infeasibility_reason(replica: Replica, shape: WorkloadShape, where: str) -> str:
    """Empty when the replica can serve at least one request of this shape, else why not."""
    m = replica.model
    full_context = shape.input_tokens + shape.output_tokens
    if replica.unsupported_mig:
        return replica.unsupported_mig
    if m.heads % replica.tp:
        return f"TP {replica.tp} does not divide {m.model_id}'s {m.heads} attention heads"
    if full_context > m.max_context:
        return f"{m.model_id} supports {m.max_context} tokens of context; the workload needs {full_context}"
    weights_total = m.weight_bytes(replica.precision) / GB
    room = replica.tp * (replica.usable_per_gpu - replica.reserve_per_gpu) / GB
    if replica.kv_capacity <= 0:
        return (
            f"{m.model_id} at {replica.precision.value} needs {weights_total:.0f} GB of weights; "
            f"{where} holds {room:.0f} GB after the engine's runtime reserve"
        )
    if replica.sequences_fitting(full_context) < 1:
        need = replica.kv_bytes_of_sequence(full_context) / GB
        return (
            f"one {full_context}-token sequence of {m.model_id} needs {need:.1f} GB of KV cache; "
            f"{where} has {replica.kv_capacity / GB:.1f} GB left after {weights_total:.0f} GB of weights"
        )
    return ""
