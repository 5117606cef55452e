"""The load regimes on one replica: a burst of N users arriving together, a steady closed loop of
N users, an open-loop Poisson stream of λ req/s (what daily demand becomes; p95 TTFT from a
queue), and offline maximum throughput (the largest batch that fits, bounded by the scheduler)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from solver.perf.replica import (
    Bottleneck,
    Replica,
    WorkloadShape,
    prefill_seen_context,
    uncached_tokens,
)
from solver.perf.roots import falling_root, smallest_fixed_point
from solver.perf.timing import P95_TAIL, Timing


def burst_timing(replica: Replica, shape: WorkloadShape, users: int) -> Timing:
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


def steady_closed_loop_timing(replica: Replica, shape: WorkloadShape, users: int) -> Timing:
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
    """Poisson arrivals at ``rate`` req/s; None when no sequence fits or the rate is not below
    ``saturation_rate`` (the offline throughput), the one limit every refusal quotes: where the
    batch of in-flight sequences has no fixed point (``open_loop_fixed_point``), the engine runs
    its offline batch and arrivals queue for admission (``_saturated_open_loop``)."""
    timing = open_loop_fixed_point(replica, shape, rate)
    return timing if timing is not None else _saturated_open_loop(replica, shape, rate)


def open_loop_fixed_point(replica: Replica, shape: WorkloadShape, rate: float) -> Timing | None:
    """Poisson arrivals at ``rate`` with every request in service (no admission queue); None when
    the in-flight batch this needs has no fixed point up to what the KV cache and scheduler hold.

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

    # Smallest fixed point of n = g(n), bracketed before it is refined (never a step past it).
    n_fixed = smallest_fixed_point(
        lambda n: state(n)[0], 1.0, float(n_max), rel_tol=FIXED_POINT_TOLERANCE
    )
    if n_fixed is None:
        return None
    n = n_fixed
    current = state(n)
    _, tpot, prefill_s, share, t_d, dominant = current
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


FIXED_POINT_TOLERANCE = 1e-4
"""Relative width of the bracket around the open loop's concurrency when it is returned."""


def _saturated_open_loop(replica: Replica, shape: WorkloadShape, rate: float) -> Timing | None:
    """Arrivals between λ*, the fastest rate whose every request is in service at once
    (``open_loop_fixed_point``), and μ, the offline throughput (the rate the replica reports it
    sustains): a queue of prompts waits for admission and the engine's batch grows from the one at
    λ* towards its offline batch. With x = (λ − λ*)/(μ − λ*) the share of that headroom in use,
    TPOT and the batch move linearly from λ*'s to the offline ones (never below λ*'s) and the
    admission wait is M/D/1 at utilization x with service 1/(μ − λ*) — mean x/(2(μ − λ*)(1 − x)),
    exponential tail — on top of λ*'s TTFT: continuous at λ*, growing with λ, unbounded at μ.
    None only at or above μ."""
    offline = offline_timing(replica, shape)
    mu = offline.req_s
    if not rate < mu:
        return None
    limit = _fixed_point_limit(replica, shape)
    start_rate, start = limit if limit is not None else (0.0, _offline_in_service(replica, shape))
    x = min(max((rate - start_rate) / (mu - start_rate), 0.0), 1.0 - 1e-12)
    mean_wait = x / (2.0 * (mu - start_rate) * (1.0 - x))
    p95_wait = (mean_wait / x) * math.log(x / P95_TAIL) if x > P95_TAIL else 0.0
    median_wait = (mean_wait / x) * math.log(2.0 * x) if x > 0.5 else 0.0
    start_median = start.ttft_s if math.isnan(start.ttft_median_s) else start.ttft_median_s
    return Timing(
        ttft_s=start.ttft_s + mean_wait,
        ttft_p95_s=start.ttft_p95_s + p95_wait,
        tpot_s=start.tpot_s + max(offline.tpot_s - start.tpot_s, 0.0) * x,
        req_s=rate,
        concurrency=start.concurrency + max(offline.concurrency - start.concurrency, 0.0) * x,
        decode_step_s=start.decode_step_s + max(offline.decode_step_s - start.decode_step_s, 0.0) * x,
        bottleneck=offline.bottleneck,
        ttft_median_s=start_median + median_wait,
    )


LIMIT_SEARCH_TOLERANCE = 1e-3
"""Relative width of the bisection bracket around λ* (the fixed point's last rate)."""


@lru_cache(maxsize=4096)
def _fixed_point_limit(replica: Replica, shape: WorkloadShape) -> tuple[float, Timing] | None:
    """(λ*, its timing): the fastest rate ``open_loop_fixed_point`` serves, by bisection on the
    rate between a trickle and the offline throughput; None when not even a trickle is served."""
    high = saturation_rate(replica, shape)
    low = high * 1e-6
    low_timing = open_loop_fixed_point(replica, shape, low)
    if low_timing is None:
        return None
    while high - low > LIMIT_SEARCH_TOLERANCE * high:
        mid = (low + high) / 2.0
        timing = open_loop_fixed_point(replica, shape, mid)
        if timing is None:
            high = mid
        else:
            low, low_timing = mid, timing
    return low, low_timing


def _offline_in_service(replica: Replica, shape: WorkloadShape) -> Timing:
    """The offline batch's own latencies without its queue (a prompt prefilled next to the full
    batch, half a running iteration): where the saturated open loop starts when no smaller rate
    has every request in service."""
    offline = offline_timing(replica, shape)
    context = shape.input_tokens + shape.output_tokens / 2.0
    prefill_s, _ = replica.prefill(shape, offline.concurrency, context)
    block = replica.limits.scheduler_steps * offline.decode_step_s
    return Timing(
        ttft_s=prefill_s + block / 2.0,
        ttft_p95_s=prefill_s + block,
        tpot_s=offline.tpot_s,
        req_s=0.0,
        concurrency=offline.concurrency,
        decode_step_s=offline.decode_step_s,
        bottleneck=offline.bottleneck,
    )


def saturation_rate(replica: Replica, shape: WorkloadShape) -> float:
    """The most req/s the replica sustains (offline max throughput): the open loop serves every
    rate below it (``_saturated_open_loop`` above its batch of full-length sequences)."""
    return offline_timing(replica, shape).req_s
