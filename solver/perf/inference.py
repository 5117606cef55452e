"""Inference on one replica: the public entry point of the performance model (DESIGN §3).

``estimate_inference`` builds the replica (``replica``: deployment, memory, one engine
iteration), runs the load on it (``regimes``: a closed-loop burst of N users who all arrive at
once, a steady closed loop, an open-loop Poisson stream of λ req/s, offline maximum throughput)
and reports latency, throughput, memory and the bottleneck. The names of those modules that
callers use are re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from pricebook.schema import GpuSpec, ModelArch
from solver.domain import Arrival, Precision
from solver.perf.calibration import Calibration
from solver.perf.physics import GB, ModelPhysics
from solver.perf.regimes import (
    burst_timing,
    offline_timing,
    open_loop_timing,
    saturation_rate,
    steady_closed_loop_timing,
)
from solver.perf.replica import (
    ASSUMED_ARCHITECTURE_WIDENING,
    Bottleneck,
    Deployment,
    MemoryBreakdown,
    Replica,
    WorkloadShape,
    build_replica,
    infeasibility_reason,
    memory_breakdown,
)
from solver.perf.timing import P95_TAIL, Timing, with_request_overhead

__all__ = [
    "ASSUMED_ARCHITECTURE_WIDENING",
    "P95_TAIL",
    "Bottleneck",
    "ClosedLoop",
    "Deployment",
    "InferenceEstimate",
    "Load",
    "MemoryBreakdown",
    "OfflineMax",
    "OpenLoop",
    "Replica",
    "Timing",
    "WorkloadShape",
    "build_replica",
    "decode_upper_bound_tok_s",
    "estimate_inference",
    "infeasibility_reason",
    "memory_breakdown",
    "offline_timing",
    "open_loop_timing",
    "saturation_rate",
]


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
    assumed_calibration: str = ""
    """Why the GPU at this precision has no measurement in the calibration (the throughput band is
    wider); empty when it has."""


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
        timing = steady_closed_loop_timing(replica, shape, max(1, load.concurrency))
    elif isinstance(load, ClosedLoop):
        timing = burst_timing(replica, shape, max(1, load.concurrency))
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
        timing = with_request_overhead(timing, replica.factors.request_overhead_s)
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
        assumed_calibration=replica.assumed_calibration,
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
