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
It is how a pool's sharing rule is checked, not what sizes plans.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pricebook.schema import ModelArch
from solver.domain import Sla
from solver.perf.capacity import Capacity, capacity_at_sla
from solver.perf.inference import (
    P95_TAIL,
    Deployment,
    Replica,
    WorkloadShape,
    build_replica,
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
    prefill queue saturates, or the batch outgrows the KV cache or the scheduler)."""
    if not any(rate > 0 for _, rate in streams):
        return MixedTiming(tuple(0.0 for _ in streams), 0.0, 0.0, 0.0)
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


DESIGN_CONCURRENCIES = 10
"""Grid of design concurrencies n̄ tried (geometric from 1 to the scheduler's limit)."""
DESIGN_CONTEXTS = 6
"""Grid of design mean contexts K̄ / n̄ tried (geometric between the shortest and longest)."""


@dataclass(frozen=True, slots=True)
class _WorstPoint:
    """A pool's design point: n̄ sequences holding K̄ context tokens, and the step times there."""

    concurrency: float
    context_tokens: float
    decode_step_s: float
    chunk_step_s: float
    """The slowest prefill-chunk iteration among the members."""
    prefill_s: tuple[float, ...]
    """Each member's prefill time P̄_l at that point."""


def _share_limit(point: _WorstPoint, sla: Sla, block_s: float) -> tuple[float, float]:
    """(largest prefill share u*, the TPOT bound at u*) meeting ``sla`` at ``point``."""
    t_d, t_c = point.decode_step_s, point.chunk_step_s
    limit = 1.0 - 1e-3
    tpot_target = min(
        sla.tpot_p95_ms / 1e3 if sla.tpot_p95_ms is not None else math.inf,
        1.0 / sla.min_per_user_tok_s if sla.min_per_user_tok_s is not None else math.inf,
    )
    if math.isfinite(tpot_target):
        if t_d > tpot_target:
            return 0.0, t_d
        if t_c > t_d:  # iterations slow down as the prefill share grows
            limit = min(limit, (1 / t_d - 1 / tpot_target) / (1 / t_d - 1 / t_c))
    if sla.ttft_p95_ms is not None:
        longest = max(point.prefill_s)

        def ttft(u: float) -> float:
            wait = longest / (2.0 * (1.0 - u)) * math.log(u / P95_TAIL) if u > P95_TAIL else 0.0
            return longest + wait + block_s

        target = sla.ttft_p95_ms / 1e3
        if ttft(0.0) > target:
            return 0.0, t_d
        if ttft(limit) > target:
            low, high = 0.0, limit
            while high - low > 1e-6:
                mid = (low + high) / 2.0
                low, high = (mid, high) if ttft(mid) <= target else (low, mid)
            limit = low
    tpot = max(t_d, 1.0 / (limit / t_c + (1.0 - limit) / t_d))
    return limit, tpot


def _point(replica: Replica, shapes: list[WorkloadShape], n: float, context: float) -> _WorstPoint:
    t_d, _ = replica.step(n, context)
    prefills = [replica.prefill(shape, n, context) for shape in shapes]
    return _WorstPoint(n, n * context, t_d, max(t_c for _, t_c in prefills), tuple(p for p, _ in prefills))


def _capacities_at(
    replica: Replica, shapes: list[WorkloadShape], point: _WorstPoint, sla: Sla
) -> list[float]:
    """Each size's rate cap from the four budgets of ``point`` (prefill share, concurrency,
    context tokens, KV memory at full length)."""
    share, tpot = _share_limit(point, sla, replica.limits.scheduler_steps * point.decode_step_s)
    rates = []
    for shape, prefill_s in zip(shapes, point.prefill_s, strict=True):
        in_system = (shape.output_tokens - 1.0) * tpot + prefill_s
        context = shape.input_tokens + shape.output_tokens / 2.0
        memory = replica.kv_bytes_of_sequence(shape.input_tokens + shape.output_tokens)
        rates.append(
            min(
                share / prefill_s,
                point.concurrency / in_system,
                point.context_tokens / (in_system * context),
                replica.kv_capacity / (in_system * memory),
            )
        )
    return rates


def _geometric(low: float, high: float, count: int) -> list[float]:
    if high <= low * (1 + 1e-9):
        return [low]
    return [low * (high / low) ** (i / (count - 1)) for i in range(count)]


def pool_capacities(
    model: ModelArch,
    deployment: Deployment,
    shapes: tuple[WorkloadShape, ...],
    sla: Sla,
    *,
    cached: bool = True,
) -> tuple[Capacity, ...]:
    """Capacity of one replica for each request size of a pool that serves them all at ``sla``.

    Sizes that a replica serves alone (one distinct shape) or without latency targets (batch work
    time-shares a replica exactly) keep ``capacity_at_sla``. Otherwise each size's capacity is
    capped so that *any* mix with Σ x_l / cap_l ≤ 1 stays within the targets. A design point
    (n̄ sequences holding K̄ context tokens) bounds every mix that stays inside it, because step
    and prefill times grow with the batch and the context it reads; four linear budgets keep a mix
    inside: concurrency Σ x_l τ_l ≤ n̄ and context Σ x_l τ_l c_l ≤ K̄ (Little's law, τ_l = time in
    the system at the TPOT bound), KV memory at full length ≤ the cache, and the prefill share
    Σ x_l P_l ≤ u*, the largest share whose TPOT bound 1 / (u/t̄_c + (1−u)/t̄_d) and p95 TTFT bound
    (the M/D/1 wait of the longest prefill, which bounds the M/G/1 wait of any mix, + P̄_max + the
    scheduler block) meet the targets. cap_l = min(single-stream capacity, each budget ÷ what one
    req/s of size l uses of it); the design point is the one of a small grid that keeps the most
    of an even mix. ``tests/solver/perf/test_mixed.py`` checks mixes against
    ``mixed_open_loop_timing``.
    """
    caps = tuple(capacity_at_sla(model, deployment, shape, sla, cached=cached) for shape in shapes)
    if sla.is_batch or len(set(shapes)) <= 1:
        return caps
    served = [i for i, c in enumerate(caps) if c.feasible and c.max_request_rate_per_s > 0]
    if len({shapes[i] for i in served}) <= 1:
        return caps
    replica = build_replica(model, deployment, None)
    sizes = [shapes[i] for i in served]
    alone = [caps[i].max_request_rate_per_s for i in served]
    contexts = [s.input_tokens + s.output_tokens / 2.0 for s in sizes]
    best: list[float] = [0.0] * len(sizes)
    best_mix = 0.0
    for n in _geometric(1.0, float(replica.limits.max_num_seqs), DESIGN_CONCURRENCIES):
        for context in _geometric(min(contexts), max(contexts), DESIGN_CONTEXTS):
            rates = [
                min(a, r)
                for a, r in zip(
                    alone,
                    _capacities_at(replica, sizes, _point(replica, sizes, n, context), sla),
                    strict=True,
                )
            ]
            kept = min(rates[i] / alone[i] for i in range(len(rates)))
            mix = len(rates) / sum(a / r if r > 0 else math.inf for a, r in zip(alone, rates, strict=True))
            if mix > best_mix and kept > 0:
                best, best_mix = rates, mix
    out = list(caps)
    for i, rate in zip(served, best, strict=True):
        out[i] = _capped(caps[i], shapes[i], rate)
    return tuple(out)


def _capped(cap: Capacity, shape: WorkloadShape, rate: float) -> Capacity:
    """``cap`` at no more than ``rate`` req/s (its latencies are the single-stream ones there)."""
    if rate >= cap.max_request_rate_per_s:
        return cap
    if rate <= 0:
        reason = "sharing the replica with longer requests leaves no capacity at the SLA"
        return dataclasses.replace(
            cap,
            feasible=False,
            reason=reason,
            max_request_rate_per_s=0.0,
            max_output_tok_s=0.0,
            max_total_tok_s=0.0,
        )
    return dataclasses.replace(
        cap,
        max_request_rate_per_s=rate,
        max_output_tok_s=rate * shape.output_tokens,
        max_total_tok_s=rate * (shape.input_tokens + shape.output_tokens),
    )
