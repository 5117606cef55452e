"""Capacity of one replica at a workload's SLA: what the optimizer consumes.

Interactive SLAs use the open-loop model (Poisson arrivals): the largest request rate λ whose
p95 TTFT, TPOT and per-user speed still meet the targets, found by bisection (every latency grows
with λ). Batch work (no latency target) gets the offline maximum throughput: the largest batch
that fits, bounded by the engine's scheduler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from pricebook.schema import ModelArch
from solver.domain import Sla
from solver.perf.calibration import Calibration
from solver.perf.inference import (
    Bottleneck,
    Deployment,
    MemoryBreakdown,
    Replica,
    Timing,
    WorkloadShape,
    build_replica,
    infeasibility_reason,
    memory_breakdown,
    offline_timing,
    open_loop_timing,
)

SEARCH_RELATIVE_TOLERANCE = 3e-3
"""Bisection stops when the feasible and infeasible rates are this close (0.3%, far inside the band)."""


@dataclass(frozen=True, slots=True)
class Capacity:
    feasible: bool
    reason: str
    """Why not, in words (empty when feasible)."""
    max_request_rate_per_s: float
    max_output_tok_s: float
    max_total_tok_s: float
    concurrency: float
    """Sequences running at once at that rate."""
    ttft_p95_ms: float
    tpot_ms: float
    per_user_tok_s: float
    bottleneck: Bottleneck
    """What stops the rate from going higher."""
    band_low: float
    """Multiplicative factor on throughput: the calibrated low end (e.g. 0.8)."""
    band_high: float
    gpus: int
    """GPUs one replica occupies (TP degree; 1 for a MIG slice)."""
    memory: MemoryBreakdown
    assumed_architecture: bool
    measured_by: tuple[str, ...] = ()
    """Labels of the user's measured points that corrected this capacity (``solver.perf.measured``)."""
    measured_note: str = ""
    """The correction in words (factors and points); empty when nothing was measured."""
    assumed_calibration: str = ""
    """Why the GPU at this precision has no measurement in the calibration (wider band)."""


def capacity_at_sla(
    model: ModelArch,
    deployment: Deployment,
    shape: WorkloadShape,
    sla: Sla,
    *,
    calibration: Calibration | None = None,
    cached: bool = True,
) -> Capacity:
    """The largest sustainable load of one replica that meets ``sla``, or why there is none.

    ``cached=False`` computes it anew instead of reading the cache: what an independent check of
    a plan uses, so that it never sees the candidate builder's answers."""
    replica = build_replica(model, deployment, calibration)
    compute = _capacity if cached else _capacity.__wrapped__
    return compute(replica, shape, sla, deployment.describe())


def _meets(timing: Timing, sla: Sla) -> str:
    """Empty when ``timing`` meets every target, else the first violated target in words."""
    if sla.ttft_p95_ms is not None and timing.ttft_p95_s * 1e3 > sla.ttft_p95_ms:
        return f"p95 TTFT {timing.ttft_p95_s * 1e3:.0f} ms exceeds the {sla.ttft_p95_ms:g} ms target"
    if sla.tpot_p95_ms is not None and timing.tpot_s * 1e3 > sla.tpot_p95_ms:
        return f"TPOT {timing.tpot_s * 1e3:.1f} ms exceeds the {sla.tpot_p95_ms:g} ms target"
    if sla.min_per_user_tok_s is not None and 1.0 / timing.tpot_s < sla.min_per_user_tok_s:
        return (
            f"{1.0 / timing.tpot_s:.1f} tok/s per user is below the {sla.min_per_user_tok_s:g} tok/s target"
        )
    return ""


@lru_cache(maxsize=65536)
def _capacity(replica: Replica, shape: WorkloadShape, sla: Sla, where: str) -> Capacity:
    memory = memory_breakdown(replica, shape)
    reason = infeasibility_reason(replica, shape, where)
    if reason:
        return _infeasible(replica, memory, reason, Bottleneck.KV_CAPACITY)
    offline = offline_timing(replica, shape)
    if sla.is_batch:
        return _result(replica, shape, memory, offline, offline.bottleneck)

    idle_rate = offline.req_s * 1e-6
    idle = open_loop_timing(replica, shape, idle_rate)
    if idle is None:
        return _infeasible(
            replica, memory, f"{where} cannot sustain even a trickle of requests", Bottleneck.KV_CAPACITY
        )
    miss = _meets(idle, sla)
    if miss:
        return _infeasible(replica, memory, f"even one request at a time on {where}: {miss}", idle.bottleneck)
    low, low_timing = idle_rate, idle
    high = offline.req_s
    high_timing = open_loop_timing(replica, shape, high)
    if high_timing is not None and not _meets(high_timing, sla):
        return _result(replica, shape, memory, high_timing, high_timing.bottleneck)
    binding = Bottleneck.KV_CAPACITY
    while high - low > SEARCH_RELATIVE_TOLERANCE * high:
        mid = (low + high) / 2.0
        timing = open_loop_timing(replica, shape, mid)
        if timing is not None and not _meets(timing, sla):
            low, low_timing = mid, timing
        else:
            high = mid
            binding = _binding(replica, timing, sla)
    return _result(replica, shape, memory, low_timing, binding)


def _binding(replica: Replica, timing: Timing | None, sla: Sla) -> Bottleneck:
    """What failed just above capacity: KV/scheduler saturation, or the resource behind the SLA."""
    if timing is None:
        return (
            Bottleneck.KV_CAPACITY
            if replica.sequences_fitting(1) < replica.limits.max_num_seqs
            else Bottleneck.SCHEDULER
        )
    return timing.bottleneck


def _result(
    replica: Replica, shape: WorkloadShape, memory: MemoryBreakdown, timing: Timing, bottleneck: Bottleneck
) -> Capacity:
    low, high = replica.throughput_band
    return Capacity(
        feasible=True,
        reason="",
        max_request_rate_per_s=timing.req_s,
        max_output_tok_s=timing.req_s * shape.output_tokens,
        max_total_tok_s=timing.req_s * (shape.input_tokens + shape.output_tokens),
        concurrency=timing.concurrency,
        ttft_p95_ms=timing.ttft_p95_s * 1e3,
        tpot_ms=timing.tpot_s * 1e3,
        per_user_tok_s=1.0 / timing.tpot_s if timing.tpot_s > 0 else 0.0,
        bottleneck=bottleneck,
        band_low=low,
        band_high=high,
        gpus=replica.tp,
        memory=memory,
        assumed_architecture=replica.model.assumed,
        assumed_calibration=replica.assumed_calibration,
    )


def _infeasible(replica: Replica, memory: MemoryBreakdown, reason: str, bottleneck: Bottleneck) -> Capacity:
    low, high, _, _ = replica.band
    return Capacity(
        feasible=False,
        reason=reason,
        max_request_rate_per_s=0.0,
        max_output_tok_s=0.0,
        max_total_tok_s=0.0,
        concurrency=0.0,
        ttft_p95_ms=math.inf,
        tpot_ms=math.inf,
        per_user_tok_s=0.0,
        bottleneck=bottleneck,
        band_low=low,
        band_high=high,
        gpus=replica.tp,
        memory=memory,
        assumed_architecture=replica.model.assumed,
        assumed_calibration=replica.assumed_calibration,
    )
