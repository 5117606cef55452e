"""One replica serving several request streams at once (a shared pool's replica).

The open-loop model of ``inference.open_loop_timing`` generalised to a mix: streams l with
Poisson arrivals at x_l req/s and their own shapes share one continuous batch and one prefill
queue.

- Decode: n = Σ_l n_l sequences, n_l = x_l ((L_out,l − 1) · TPOT + P_l) by Little's law, read at
  the concurrency-weighted mean context; every iteration gives each decoding sequence a token.
- Prefill: stream l's prompt takes P_l seconds of chunked iterations of t_c,l each; the replica
  spends u = Σ_l x_l P_l of its time prefilling, so iterations per second are
  Σ_l x_l P_l / t_c,l + (1 − u) / t_d and TPOT is their inverse (one stream: the single-stream
  formula).
- Queue: M/G/1 over the mixed prefill times (Pollaczek–Khinchine), W = Σ_l x_l P_l² / (2(1 − u)),
  zero with probability 1 − u and exponential otherwise (p95 as in the single-stream model);
  TTFT_l = P_l + wait + the running scheduler block. A short prompt waits behind long ones.

With one stream every formula is the single-stream one (``tests/solver/perf/test_mixed.py``).
``mix_miss`` is a pool's sharing rule: a replica carrying the mix meets the SLA by this timing
(``solver.optimizer.pool_timing`` applies it to plans).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from solver.domain import Sla
from solver.perf.inference import (
    P95_TAIL,
    Replica,
    WorkloadShape,
    open_loop_timing,
)

MAX_ITERATIONS = 5000


@dataclass(frozen=True, slots=True)
class MixedTiming:
    """Latencies of each stream of a mix on one replica."""

    ttft_p95_s: tuple[float, ...]
    tpot_s: float
    concurrency: float
    utilization: float
    """Share of the replica's time spent prefilling."""


def _state(
    replica: Replica, streams: Sequence[tuple[WorkloadShape, float]], n_by_stream: Sequence[float]
) -> tuple[list[float], float, list[float], float, float]:
    """(implied n_l, tpot, prefill seconds P_l, prefill share u, decode step) for concurrencies."""
    n = max(1.0, sum(n_by_stream))
    weights = [max(v, 1e-12) for v in n_by_stream]
    context = sum(
        w * (shape.input_tokens + shape.output_tokens / 2.0)
        for w, (shape, _) in zip(weights, streams, strict=True)
    ) / sum(weights)
    t_d, _ = replica.step(n, context)
    prefill = [replica.prefill(shape, n, context) for shape, _ in streams]
    share = sum(rate * p for (_, rate), (p, _) in zip(streams, prefill, strict=True))
    if share >= 1.0:
        return [math.inf] * len(streams), math.inf, [p for p, _ in prefill], share, t_d
    per_s = (
        sum(rate * p / t_c for (_, rate), (p, t_c) in zip(streams, prefill, strict=True))
        + (1.0 - share) / t_d
    )
    tpot = 1.0 / per_s
    implied = [
        rate * ((shape.output_tokens - 1.0) * tpot + p)
        for (shape, rate), (p, _) in zip(streams, prefill, strict=True)
    ]
    return implied, tpot, [p for p, _ in prefill], share, t_d


def mixed_open_loop_timing(
    replica: Replica, streams: Sequence[tuple[WorkloadShape, float]]
) -> MixedTiming | None:
    """Poisson streams ``(shape, req/s)`` on one replica; None when it cannot sustain them (the
    prefill queue saturates, or the batch outgrows the KV cache or the scheduler). One stream
    beyond its in-service fixed point is the single-stream model's (``open_loop_timing``: the
    engine runs its offline batch and arrivals queue for admission), so a pool of one size is
    never stricter than that size's own capacity."""
    if not any(rate > 0 for _, rate in streams):
        return MixedTiming(tuple(0.0 for _ in streams), 0.0, 0.0, 0.0)
    timing = _in_service(replica, streams)
    active = [i for i, (_, rate) in enumerate(streams) if rate > 0]
    if timing is not None or len(active) != 1:
        return timing
    shape, rate = streams[active[0]]
    alone = open_loop_timing(replica, shape, rate)
    if alone is None:
        return None
    ttft = tuple(alone.ttft_p95_s if i == active[0] else 0.0 for i in range(len(streams)))
    context = shape.input_tokens + shape.output_tokens / 2.0
    prefill_s, _ = replica.prefill(shape, max(1.0, alone.concurrency), context)
    return MixedTiming(ttft, alone.tpot_s, alone.concurrency, min(1.0, rate * prefill_s))


def _in_service(replica: Replica, streams: Sequence[tuple[WorkloadShape, float]]) -> MixedTiming | None:
    """The mix with every request in service (the fixed point of the streams' concurrencies)."""
    n_by_stream = [0.0] * len(streams)
    for _ in range(MAX_ITERATIONS):
        implied, tpot, prefill, share, t_d = _state(replica, streams, n_by_stream)
        if not math.isfinite(tpot) or not _fits(replica, streams, implied):
            return None
        if all(abs(a - b) <= 1e-5 * max(1.0, a) for a, b in zip(implied, n_by_stream, strict=True)):
            break
        n_by_stream = implied
    else:
        return None
    mean_wait = sum(rate * p * p for (_, rate), p in zip(streams, prefill, strict=True)) / (
        2.0 * (1.0 - share)
    )
    p95_wait = (mean_wait / share) * math.log(share / P95_TAIL) if share > P95_TAIL else 0.0
    block = replica.limits.scheduler_steps * t_d
    return MixedTiming(
        ttft_p95_s=tuple(p + p95_wait + block for p in prefill),
        tpot_s=tpot,
        concurrency=max(1.0, sum(implied)),
        utilization=share,
    )


def _fits(
    replica: Replica, streams: Sequence[tuple[WorkloadShape, float]], n_by_stream: Sequence[float]
) -> bool:
    """The sequences in flight fit the KV cache at full context and the scheduler's limit."""
    if sum(n_by_stream) > replica.limits.max_num_seqs:
        return False
    kv = sum(
        n * replica.kv_bytes_of_sequence(shape.input_tokens + shape.output_tokens)
        for n, (shape, _) in zip(n_by_stream, streams, strict=True)
    )
    return kv <= replica.kv_capacity


MIX_SCALE_TOLERANCE = 1e-3
"""Relative precision of ``mix_scale``'s bisection."""


def mix_miss(replica: Replica, streams: Sequence[tuple[WorkloadShape, float]], sla: Sla) -> str:
    """Empty when one replica serving Poisson ``streams`` (shape, req/s) meets ``sla`` by
    ``mixed_open_loop_timing`` (every stream's p95 TTFT, the shared TPOT and per-user speed),
    else the first target it misses, in words. The sharing rule of a pool: the planner's pools and
    the evaluator's check both ask this."""
    active = [(shape, rate) for shape, rate in streams if rate > 0]
    if not active:
        return ""
    timing = mixed_open_loop_timing(replica, active)
    if timing is None:
        return "the mix saturates the replica (prefill queue, KV cache or scheduler)"
    if sla.ttft_p95_ms is not None:
        for (shape, _), ttft in zip(active, timing.ttft_p95_s, strict=True):
            if ttft * 1e3 > sla.ttft_p95_ms:
                return (
                    f"p95 TTFT {ttft * 1e3:.0f} ms of {shape.input_tokens}+{shape.output_tokens}-token "
                    f"requests exceeds the {sla.ttft_p95_ms:g} ms target"
                )
    if sla.tpot_p95_ms is not None and timing.tpot_s * 1e3 > sla.tpot_p95_ms:
        return f"TPOT {timing.tpot_s * 1e3:.1f} ms exceeds the {sla.tpot_p95_ms:g} ms target"
    speed = 1.0 / timing.tpot_s if timing.tpot_s > 0 else math.inf
    if sla.min_per_user_tok_s is not None and speed < sla.min_per_user_tok_s:
        return f"{speed:.1f} tok/s per user is below the {sla.min_per_user_tok_s:g} tok/s target"
    return ""


def mix_scale(replica: Replica, streams: Sequence[tuple[WorkloadShape, float]], sla: Sla) -> float:
    """The largest s ≤ 1 (to ``MIX_SCALE_TOLERANCE``) at which ``streams`` with every rate × s
    meet ``sla`` by ``mix_miss`` (1.0 when they already do; latencies grow with the rates)."""
    if not mix_miss(replica, streams, sla):
        return 1.0
    low, high = 0.0, 1.0
    while high - low > MIX_SCALE_TOLERANCE * high:
        mid = (low + high) / 2.0
        if mix_miss(replica, [(shape, rate * mid) for shape, rate in streams], sla):
            high = mid
        else:
            low = mid
    return low
