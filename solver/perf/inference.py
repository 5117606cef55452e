"""Inference on one replica (a model on ``tp`` GPUs of one type, or on a MIG slice).

The model (DESIGN §3):

* memory: weights / TP + runtime reserve per GPU; the rest of the engine's memory share holds the
  KV cache, which bounds the concurrency;
* one engine iteration ("step") over ``b`` decoding sequences plus a chunk of prefill tokens takes
  ``max(memory time, compute time) + TP all-reduce time + per-step overhead``, where memory time
  streams the weights the step touches and the KV of every decoding sequence, and compute time
  is the GEMM and attention FLOPs over peak × efficiency;
* continuous batching with chunked prefill: prefill chunks ride in the same iterations as decode,
  so decode iterations stretch while prompts are being processed.

Three loads: a closed-loop burst of N users who all arrive at once (the seeds' benchmarks), an
open-loop Poisson stream of λ req/s (what daily demand becomes; p95 TTFT from a queue), and
offline maximum throughput (the largest batch that fits, bounded by the engine's scheduler).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from functools import cached_property, lru_cache

from pricebook.schema import AttentionType, GpuSpec, ModelArch
from solver.domain import Arrival, Engine, Precision
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
from solver.perf.roots import falling_root

P95_TAIL = 0.05

ASSUMED_ARCHITECTURE_WIDENING = 1.15
"""Extra throughput band width (× on the high side, ÷ on the low side) when the architecture was
synthesised from a parameter count."""


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
        return f"{where} at {self.precision.value}"


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
class ClosedLoop:
    """N users. By default (``Arrival.STEADY``) each user sends the next request as soon as the
    last one finishes, for a long run (a benchmark with many more requests than users); with
    ``Arrival.BURST`` they all send one request at the same moment (seed 000's benchmark)."""

    concurrency: int
    arrival: Arrival = Arrival.STEADY


@dataclass(frozen=True, slots=True)
class OpenLoop:
    """Poisson arrivals at ``request_rate_per_s``."""

    request_rate_per_s: float


@dataclass(frozen=True, slots=True)
class OfflineMax:
    """All requests queued at once; the largest batch that fits runs (offline max throughput)."""


Load = ClosedLoop | OpenLoop | OfflineMax


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


@dataclass(frozen=True, slots=True)
class InferenceEstimate:
    fits: bool
    reason: str
    tp: int
    ttft_ms: float
    """Mean time to first token."""
    ttft_p95_ms: float
    tpot_ms: float
    """Mean time per output token after the first."""
    per_user_tok_s: float
    output_tok_s: float
    """Generated tokens per second of the replica."""
    total_tok_s: float
    """Input + output tokens per second."""
    req_s: float
    concurrency: float
    """Sequences running at once under this load."""
    max_concurrency: int
    memory: MemoryBreakdown
    bottleneck: Bottleneck
    output_tok_s_low: float
    output_tok_s_high: float
    decode_step_ms: float
    """One decode iteration at the running batch, without prefill."""
    assumed_architecture: bool
    ttft_median_ms: float = math.nan
    """Median time to first token (differs from the mean under open-loop queueing)."""


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

    @cached_property
    def throughput_band(self) -> tuple[float, float]:
        """(low, high) throughput factors, widened when the architecture was assumed."""
        low, high, _, _ = self.band
        if not self.model.assumed:
            return low, high
        return low / ASSUMED_ARCHITECTURE_WIDENING, high * ASSUMED_ARCHITECTURE_WIDENING

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


# --------------------------------------------------------------------------------------------
# The three loads
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timing:
    ttft_s: float
    ttft_p95_s: float
    tpot_s: float
    req_s: float
    concurrency: float
    decode_step_s: float
    bottleneck: Bottleneck
    ttft_median_s: float = math.nan
    """Only where it differs from the mean (open loop); NaN = the mean."""


def _burst(replica: Replica, shape: WorkloadShape, users: int) -> Timing:
    """N requests arriving together; they run in waves of as many as the KV cache admits.

    Inside a wave of n: the prompts are prefilled in FCFS chunks (prompt i finishes after i·P/C
    chunk iterations), decode of the already-started requests rides in those iterations, then the
    wave decodes alone with a batch that shrinks as requests finish.
    """
    lin, lout = float(shape.input_tokens), float(shape.output_tokens)
    # Paged KV is allocated on demand: the scheduler admits a request when its prompt's blocks
    # are free (vLLM, SGLang); growth during decode is absorbed by preemption, not modelled.
    admit = replica.sequences_fitting(lin + 1.0)
    wave = max(1, min(users, admit, replica.limits.max_num_seqs))
    waves = math.ceil(users / wave)
    n = users / waves
    limited_by = (
        Bottleneck.KV_CAPACITY
        if wave < users and admit <= replica.limits.max_num_seqs
        else Bottleneck.SCHEDULER
        if wave < users
        else None
    )

    uncached = uncached_tokens(shape)
    chunk = min(replica.prefill_chunk(0.0), n * uncached)
    per_prompt = uncached / chunk  # chunk iterations per prompt
    prefill_steps = max(1.0, n * per_prompt)
    # Decoding sequences during the prefill phase: request i starts at iteration i·per_prompt.
    started_rate = 1.0 / per_prompt
    decoding_avg = started_rate * (
        prefill_steps / 2.0 if lout >= prefill_steps else lout - lout * lout / (2.0 * prefill_steps)
    )
    decoding_avg = min(max(decoding_avg - 1.0, 0.0), n)
    seen = prefill_seen_context(shape)
    t1, _ = replica.step(decoding_avg, lin, min(chunk, replica.prefill_chunk(decoding_avg)), seen)
    # TTFT_i = max(1, i·per_prompt) iterations; mean over i = 1..n in closed form.
    k0 = min(n, math.floor(1.0 / per_prompt)) if per_prompt < 1.0 else 0
    mean_steps = (k0 + per_prompt * (n * (n + 1) / 2.0 - k0 * (k0 + 1) / 2.0)) / n
    ttft_wave = t1 * max(1.0, mean_steps)
    ttft_last = t1 * prefill_steps
    decoded_in_prefill = min(decoding_avg * prefill_steps, n * (lout - 1.0))
    remaining = n * (lout - 1.0) - decoded_in_prefill
    decode_steps = max(lout - 1.0, 0.0)
    t2 = 0.0
    dominant = Bottleneck.COMPUTE
    if decode_steps > 0:
        batch2 = max(remaining / decode_steps, 1.0)
        t2, dominant = replica.step(batch2, lin + lout / 2.0)
    wave_s = prefill_steps * t1 + decode_steps * t2
    per_request_prefill = decoded_in_prefill / n
    tpot = (
        (per_request_prefill * t1 + (decode_steps - per_request_prefill) * t2) / decode_steps
        if decode_steps
        else 0.0
    )
    if prefill_steps * t1 > decode_steps * t2:
        dominant = replica.step(0.0, 0.0, chunk, seen)[1]
    waiting = (waves - 1) / 2.0 * wave_s
    # p95: the request 95% of the way down the line — its wave starts after the earlier waves
    # finish, and inside the wave it waits for the prompts ahead of it.
    position = math.ceil((1.0 - P95_TAIL) * users)
    wave_index = math.ceil(position / n) - 1
    in_wave = position - wave_index * n
    ttft_p95 = wave_index * wave_s + min(ttft_last, t1 * max(1.0, in_wave * per_prompt))
    ttft_mean = ttft_wave + waiting
    # Waits grow along the line, so its p95 is never below its mean; the two closed forms above
    # round fractional waves differently, which can leave p95 a hair under the mean.
    ttft_p95 = max(ttft_p95, ttft_mean)
    return Timing(
        ttft_s=ttft_mean,
        ttft_p95_s=ttft_p95,
        tpot_s=tpot,
        req_s=users / (waves * wave_s),
        concurrency=n,
        decode_step_s=t2,
        bottleneck=limited_by or dominant,
    )


def offline_timing(replica: Replica, shape: WorkloadShape) -> Timing:
    """Steady state with the largest batch the KV cache, the scheduler and the token budget admit.

    Every iteration carries one token for each of n decoding sequences plus prefill tokens of
    newly admitted prompts; in steady state prompts are admitted as fast as sequences finish, so
    prefill tokens per iteration are n·P/L_out. The iteration budget C caps n·(1 + P/L_out) ≤ C;
    memory and ``max_num_seqs`` cap n. Output rate = n / iteration time.
    """
    lin, lout = float(shape.input_tokens), float(shape.output_tokens)
    uncached = uncached_tokens(shape)
    admit = replica.sequences_fitting(lin + lout / 2.0)
    n_memory = max(1, min(admit, replica.limits.max_num_seqs))
    n_budget = (
        replica.limits.max_batched_tokens * replica.factors.prefill_budget_share * lout / (uncached + lout)
    )
    n = max(1.0, min(float(n_memory), n_budget))
    prefill_per_step = n * uncached / lout
    context = lin + lout / 2.0
    step_s, dominant = replica.step(n, context, prefill_per_step, prefill_seen_context(shape))
    rate = n / (lout * step_s)
    if dominant is Bottleneck.MEMORY_BANDWIDTH and n < n_budget:
        dominant = Bottleneck.KV_CAPACITY if admit < replica.limits.max_num_seqs else Bottleneck.SCHEDULER
    prefill_s = math.ceil(uncached / replica.prefill_chunk(n)) * step_s
    # An offline queue: a request waits between nothing and one batch lifetime (n / rate),
    # uniformly — mean half of it, p95 95% of it.
    lifetime = n / rate
    return Timing(
        ttft_s=prefill_s + lifetime / 2.0,
        ttft_p95_s=prefill_s + (1.0 - P95_TAIL) * lifetime,
        tpot_s=step_s,
        req_s=rate,
        concurrency=n,
        decode_step_s=step_s,
        bottleneck=dominant,
    )


STEADY_ITERATIONS = 100


def _steady_closed_loop(replica: Replica, shape: WorkloadShape, users: int) -> Timing:
    """N users cycling without pause, for a long run: λ = n / (TTFT + (L_out − 1)·TPOT).

    The engine admits n = min(N, what the KV cache holds at the mean context, the sequence cap)
    requests at once; users beyond that wait in line for a slot (the only queue apart from the
    prefill budget). Of the n in service, n − λ·TTFT are decoding (Little's law). A new prompt
    joins the next iteration as chunks of the budget the decodes leave free (chunked prefill), so
    its TTFT is the request's fixed cost, half a running iteration (when others run) and its own
    chunked prefill, plus half a prefill of another prompt in the share u = λ·prefill of
    iterations that carry one. When prompts need more than every iteration's spare budget
    (u → 1), λ is capped at the prefill capacity and the users' extra wait lands in TTFT.
    λ solves the cycle equation λ·cycle(λ) = n (its left side grows with λ) by regula falsi.
    """
    lin, lout = float(shape.input_tokens), float(shape.output_tokens)
    admit = replica.sequences_fitting(lin + lout / 2.0)
    running = float(max(1, min(users, admit, replica.limits.max_num_seqs)))
    alone = _SteadyPoint.at(replica, shape, running, 0.0, running)
    before_decode = replica.factors.request_overhead_s + alone.prefill_s

    def point(rate: float) -> _SteadyPoint:
        decoding = min(running, max(running - rate * before_decode, 0.0))
        return _SteadyPoint.at(replica, shape, running, rate, decoding)

    def excess(rate: float) -> float:
        return rate * point(rate).cycle_s(lout) - running

    cap = point(alone.capacity_rate).capacity_rate
    if excess(cap) > 0.0:
        rate = falling_root(excess, 0.0, -running, cap, excess(cap))
        final = point(rate)
    else:
        rate, final = _prefill_bound(replica, shape, running)
    # Users beyond what runs at once, and the prefill-capacity cap, wait in line (Little's law).
    queued = max(0.0, users / rate - final.cycle_s(lout))
    bottleneck = final.dominant
    if users > running:
        bottleneck = Bottleneck.KV_CAPACITY if admit < replica.limits.max_num_seqs else Bottleneck.SCHEDULER
    elif queued > 1e-9 * final.ttft_s:
        bottleneck = Bottleneck.PREFILL_BUDGET
    return Timing(
        ttft_s=final.ttft_s + queued,
        ttft_p95_s=max(final.ttft_p95_s, final.ttft_s) + queued,
        tpot_s=final.tpot_s,
        req_s=rate,
        concurrency=running,
        decode_step_s=final.decode_step_s,
        bottleneck=bottleneck,
    )


def _prefill_bound(replica: Replica, shape: WorkloadShape, running: float) -> tuple[float, _SteadyPoint]:
    """More users than the prefill budget keeps up with: prompts arrive at the budget's capacity
    and only the d = λ·(L_out − 1)·TPOT sequences that capacity feeds are decoding (the rest wait
    for their prefill), so the rate does not depend on how many more users wait."""
    lout = float(shape.output_tokens)
    decoding = 0.0
    point = _SteadyPoint.at(replica, shape, running, 0.0, decoding)
    rate = point.capacity_rate
    for _ in range(STEADY_ITERATIONS):
        point = _SteadyPoint.at(replica, shape, running, rate, decoding)
        new_decoding = min(running, point.capacity_rate * (lout - 1.0) * point.tpot_s)
        rate = point.capacity_rate
        if abs(new_decoding - decoding) <= 1e-9 * max(new_decoding, 1.0):
            break
        decoding = new_decoding
    return rate, point


@dataclass(frozen=True, slots=True)
class _SteadyPoint:
    """Latencies of a steady closed loop at request rate λ with ``decoding`` sequences in decode."""

    ttft_s: float
    ttft_p95_s: float
    tpot_s: float
    prefill_s: float
    decode_step_s: float
    dominant: Bottleneck
    capacity_rate: float
    """Prompts per second the spare prefill budget admits at this decode batch."""

    def cycle_s(self, lout: float) -> float:
        return self.ttft_s + (lout - 1.0) * self.tpot_s

    @classmethod
    def at(
        cls, replica: Replica, shape: WorkloadShape, running: float, rate: float, decoding: float
    ) -> _SteadyPoint:
        lout = float(shape.output_tokens)
        context = shape.input_tokens + lout / 2.0
        uncached = uncached_tokens(shape)
        seen = prefill_seen_context(shape)
        # The sequence that decodes is at least itself (a lone user's batch is 1, not its duty cycle).
        t_d, dominant = replica.step(max(decoding, 1.0), context)
        spare = replica.prefill_chunk(decoding)
        t_full, _ = replica.step(decoding, context, spare, seen)
        # Iteration time grows ~linearly with the prefill tokens it carries (k s per token); at
        # λ·P prefill tokens per second the mean iteration t solves t = t_d + k·λ·P·t.
        per_token = max(t_full - t_d, 0.0) / spare
        load = min(rate * uncached * per_token, t_d / t_full if t_full > 0 else 1.0)
        mean_step = t_d / (1.0 - load) if load < 1.0 else t_full
        # While a prompt is prefilled, the decoders are among the other users, and the other
        # prompts' chunks (their share of the load) stretch its iterations.
        others = (running - 1.0) / running
        chunk = min(replica.prefill_chunk(decoding * others), uncached)
        t_c, _ = replica.step(decoding * others, context, chunk, seen)
        prefill_s = uncached / chunk * t_c / (1.0 - others * load)
        # Share of the prefill budget in use: a prompt waits behind others only for that share.
        busy = min(rate * uncached * t_full / spare, 1.0)
        block = replica.limits.scheduler_steps * mean_step
        # Admission at the next completion of another user's request: completions come every 1/λ.
        admission = replica.factors.admission_wait_gaps * others / rate if rate > 0 else 0.0
        fixed = replica.factors.request_overhead_s + prefill_s + admission
        return cls(
            ttft_s=fixed + others * (block / 2.0 + busy * prefill_s / 2.0),
            ttft_p95_s=fixed + others * (block + busy * prefill_s),
            tpot_s=mean_step if lout > 1.0 else 0.0,
            prefill_s=prefill_s,
            decode_step_s=t_d,
            dominant=dominant,
            capacity_rate=spare / (uncached * t_full) if t_full > 0 else math.inf,
        )


def open_loop_timing(replica: Replica, shape: WorkloadShape, rate: float) -> Timing | None:
    """Poisson arrivals at ``rate`` req/s; None when the replica cannot sustain it.

    Decode concurrency follows Little's law (n = λ × time in system) and decode iterations
    stretch by the share of time spent on prefill chunks; the prefill queue is M/D/1 with
    utilization u = λ × prefill time, mean wait uS/(2(1−u)), and an exponential tail for p95.
    """
    lin, lout = float(shape.input_tokens), float(shape.output_tokens)
    context = lin + lout / 2.0
    n_max = min(replica.sequences_fitting(lin + lout), replica.limits.max_num_seqs)
    if n_max < 1:
        return None

    def state(n: float) -> tuple[float, float, float, float, float, Bottleneck]:
        """(Little's-law concurrency implied by n, tpot, prefill s, share, decode step, dominant)."""
        t_d, dominant = replica.step(n, context)
        prefill_s, t_c = replica.prefill(shape, n, context)
        share = rate * prefill_s
        if share >= 1.0:
            return math.inf, math.inf, prefill_s, share, t_d, dominant
        tpot = 1.0 / (share / t_c + (1.0 - share) / t_d)
        return rate * ((lout - 1.0) * tpot + prefill_s), tpot, prefill_s, share, t_d, dominant

    # Smallest fixed point of n = g(n) (g grows with n): secant steps on h(n) = g(n) − n from
    # n = 1, which converge in a few iterations because step time is piecewise affine in n.
    n_prev, current = 1.0, state(1.0)
    if not math.isfinite(current[0]):
        return None
    h_prev = current[0] - n_prev
    n = max(current[0], 1.0)
    if h_prev > 0:
        for _ in range(40):
            current = state(n)
            if not math.isfinite(current[0]) or n > n_max:
                return None
            h = current[0] - n
            if abs(h) <= 1e-4 * n:
                break
            slope = (h - h_prev) / (n - n_prev) if n != n_prev else 0.0
            n_prev, h_prev = n, h
            n = n - h / slope if slope < -1e-12 else current[0]
            if n > 2 * n_max:
                return None
            n = max(n, 1.0)
        else:
            return None
    else:
        current = state(1.0)
        n = 1.0
    _, tpot, prefill_s, share, t_d, dominant = current
    if n > n_max:
        return None
    u = share
    mean_wait = u * prefill_s / (2.0 * (1.0 - u))
    # The queue wait is 0 with probability 1 − u, else exponential with mean mean_wait / u.
    p95_wait = (mean_wait / u) * math.log(u / P95_TAIL) if u > P95_TAIL else 0.0
    median_wait = (mean_wait / u) * math.log(2.0 * u) if u > 0.5 else 0.0
    # An arrival also waits for the running scheduler pass to end: one decode iteration, or a
    # block of k with multi-step scheduling — uniform over the block, so k·t_d/2 on average and
    # at the median, k·t_d at the p95 (rounded up).
    block = replica.limits.scheduler_steps * t_d
    ttft = prefill_s + mean_wait + block / 2.0
    ttft_p95 = prefill_s + p95_wait + block
    if share > 0.5 and dominant is Bottleneck.MEMORY_BANDWIDTH:
        dominant = Bottleneck.COMPUTE
    return Timing(
        ttft_s=ttft,
        ttft_p95_s=ttft_p95,
        tpot_s=tpot,
        req_s=rate,
        concurrency=n,
        decode_step_s=t_d,
        bottleneck=dominant,
        ttft_median_s=prefill_s + median_wait + block / 2.0,
    )


def saturation_rate(replica: Replica, shape: WorkloadShape) -> float:
    """An upper bound on sustainable req/s (offline max throughput)."""
    return offline_timing(replica, shape).req_s


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def estimate_inference(
    model: ModelArch,
    deployment: Deployment,
    shape: WorkloadShape,
    load: Load,
    *,
    calibration: Calibration | None = None,
) -> InferenceEstimate:
    """Latency, throughput, memory and bottleneck of one replica under ``load``."""
    replica = build_replica(model, deployment, calibration)
    return _estimate(replica, shape, load, deployment.describe())


@lru_cache(maxsize=65536)
def _estimate(replica: Replica, shape: WorkloadShape, load: Load, where: str) -> InferenceEstimate:
    memory = memory_breakdown(replica, shape)
    reason = infeasibility_reason(replica, shape, where)
    if reason:
        return _not_fitting(replica, memory, reason)
    timing: Timing | None
    if isinstance(load, ClosedLoop) and load.arrival is Arrival.STEADY:
        timing = _steady_closed_loop(replica, shape, max(1, load.concurrency))
    elif isinstance(load, ClosedLoop):
        timing = _burst(replica, shape, max(1, load.concurrency))
    elif isinstance(load, OpenLoop):
        timing = open_loop_timing(replica, shape, load.request_rate_per_s)
        if timing is None:
            cap = saturation_rate(replica, shape)
            return _not_fitting(
                replica,
                memory,
                f"{load.request_rate_per_s:g} req/s exceeds what {where} sustains (about {cap:.3g} req/s)",
                bottleneck=Bottleneck.KV_CAPACITY,
            )
    else:
        timing = offline_timing(replica, shape)
    if not (isinstance(load, ClosedLoop) and load.arrival is Arrival.STEADY):
        timing = _with_request_overhead(timing, replica.factors.request_overhead_s)
    output_tok_s = timing.req_s * shape.output_tokens
    low, high = replica.throughput_band
    return InferenceEstimate(
        fits=True,
        reason="",
        tp=replica.tp,
        ttft_ms=timing.ttft_s * 1e3,
        ttft_p95_ms=timing.ttft_p95_s * 1e3,
        tpot_ms=timing.tpot_s * 1e3,
        per_user_tok_s=1.0 / timing.tpot_s if timing.tpot_s > 0 else 0.0,
        output_tok_s=output_tok_s,
        total_tok_s=timing.req_s * (shape.input_tokens + shape.output_tokens),
        req_s=timing.req_s,
        concurrency=timing.concurrency,
        max_concurrency=memory.max_concurrency,
        memory=memory,
        bottleneck=timing.bottleneck,
        output_tok_s_low=output_tok_s * low,
        output_tok_s_high=output_tok_s * high,
        decode_step_ms=timing.decode_step_s * 1e3,
        assumed_architecture=replica.model.assumed,
        ttft_median_ms=(timing.ttft_s if math.isnan(timing.ttft_median_s) else timing.ttft_median_s) * 1e3,
    )


def _with_request_overhead(timing: Timing, overhead_s: float) -> Timing:
    """Every first token also carries the request's fixed cost outside the engine's iterations
    (the steady closed loop adds it inside, where it also lengthens each user's cycle)."""
    median = timing.ttft_median_s + overhead_s if not math.isnan(timing.ttft_median_s) else math.nan
    return replace(
        timing,
        ttft_s=timing.ttft_s + overhead_s,
        ttft_p95_s=timing.ttft_p95_s + overhead_s,
        ttft_median_s=median,
    )


def _not_fitting(
    replica: Replica, memory: MemoryBreakdown, reason: str, bottleneck: Bottleneck = Bottleneck.KV_CAPACITY
) -> InferenceEstimate:
    return InferenceEstimate(
        fits=False,
        reason=reason,
        tp=replica.tp,
        ttft_ms=math.inf,
        ttft_p95_ms=math.inf,
        tpot_ms=math.inf,
        per_user_tok_s=0.0,
        output_tok_s=0.0,
        total_tok_s=0.0,
        req_s=0.0,
        concurrency=0.0,
        max_concurrency=memory.max_concurrency,
        memory=memory,
        bottleneck=bottleneck,
        output_tok_s_low=0.0,
        output_tok_s_high=0.0,
        decode_step_ms=math.inf,
        assumed_architecture=replica.model.assumed,
        ttft_median_ms=math.inf,
    )


def decode_upper_bound_tok_s(model: ModelArch, gpu: GpuSpec, precision: Precision) -> float:
    """Single-stream roofline: bandwidth / bytes of weights read per token (no KV, no overheads)."""
    physics = ModelPhysics.of(model)
    return gpu.memory_bandwidth_gbs * GB / physics.weight_bytes_read_per_step(precision, 1.0)
