"""The chance a plan's fleet meets each workload's demand, from the performance model's band.

Real throughput is the estimate × one ratio r (``solver.perf.risk``: log-normal around 1, spread
from the calibrated band), the same for every deployment of the plan (their errors come from one
calibration). With the plan's split of each load over its replicas held fixed, a workload is
served while r is at least its largest *load ratio*: over the buckets, for each pool it uses
(Σ its members' replica-equivalents at rated capacity ÷ the pool's replicas) and for each request
size on replicas of its own (the size's demand left after its pool shares ÷ their rated capacity).
Rated = at the SLA, before headroom and the capacity quantile, so headroom shows as probability.
"""

from __future__ import annotations

from collections import defaultdict

from solver.optimizer.batch_window import hour_buckets, hourly_arrivals, window_misses
from solver.optimizer.instance import FleetInstance, InferenceDemand
from solver.optimizer.results import Assignment, FleetSolution
from solver.perf.risk import probability_reaching


def _rated(capacity: float, rated: float) -> float:
    return rated if rated > 0 else capacity


def _pool_ratios(solution: FleetSolution) -> dict[str, list[float]]:
    """Per pool and bucket: the load at rated capacity ÷ its replicas less the spares."""
    nb = len(solution.buckets)
    load: dict[str, list[float]] = defaultdict(lambda: [0.0] * nb)
    for a in solution.assignments:
        for u in a.uses:
            if u.pooled:
                c = u.candidate
                for b, share in enumerate(u.shared_load):
                    load[c.pool][b] += share * c.capacity_req_s / _rated(c.capacity_req_s, c.rated_req_s)
    out: dict[str, list[float]] = {}
    for pool in solution.pools:
        usable = [max(0, r - pool.spares) for r in pool.replicas]
        out[pool.id] = [
            (v / usable[b] if usable[b] > 0 else (float("inf") if v > 1e-9 else 0.0))
            for b, v in enumerate(load.get(pool.id, [0.0] * nb))
        ]
    return out


def _window_ratio(instance: FleetInstance, a: Assignment, demand: InferenceDemand) -> float:
    """Batch work with a window: the smallest throughput ratio whose hourly capacity (rated)
    still finishes every size's queue within the window (``batch_window.window_misses``)."""
    hours = hour_buckets(instance.buckets)
    arrivals = hourly_arrivals(demand, instance.buckets)
    worst = 0.0
    for k, share in enumerate(demand.loads):
        uses = [u for u in a.uses if u.candidate.load == k]
        rated = [
            sum(_rated(u.candidate.capacity_req_s, u.candidate.rated_req_s) * u.serving(b) for u in uses)
            for b in range(len(instance.buckets))
        ]
        capacity, need = [rated[b] for b in hours], [rate * share for rate in arrivals]
        worst = max(worst, _smallest_ratio(demand.deadline_hours or 1, capacity, need))
    return worst


MAX_RATIO = 1e6


def _smallest_ratio(deadline: int, capacity: list[float], need: list[float]) -> float:
    """The smallest r with ``capacity`` × r meeting the window for ``need`` (bisection: the
    window only gets easier with more capacity)."""

    def misses(ratio: float) -> bool:
        return bool(window_misses(deadline, [c * ratio for c in capacity], need))

    high = 1.0
    while misses(high):
        if high >= MAX_RATIO:
            return float("inf")
        high *= 2.0
    low = 0.0
    while high - low > 1e-4 * high:
        mid = (low + high) / 2.0
        low, high = (low, mid) if not misses(mid) else (mid, high)
    return high


def _load_ratio(instance: FleetInstance, a: Assignment, pools: dict[str, list[float]]) -> float:
    demand = next(w for w in instance.inference if w.name == a.workload)
    if demand.deadline_hours is not None:
        return _window_ratio(instance, a, demand)
    worst = 0.0
    for b in range(len(instance.buckets)):
        for pool_id in {u.candidate.pool for u in a.uses if u.pooled}:
            worst = max(worst, pools.get(pool_id, [0.0] * (b + 1))[b])
        for k, share in enumerate(demand.loads):
            uses = [u for u in a.uses if u.candidate.load == k]
            pooled = sum(u.shared_load[b] * u.candidate.capacity_req_s for u in uses if u.pooled)
            left = demand.rate_req_s[b] * share - pooled
            own = sum(
                _rated(u.candidate.capacity_req_s, u.candidate.rated_req_s) * u.replicas[b]
                for u in uses
                if not u.pooled
            )
            if left > 1e-9 * max(1.0, demand.rate_req_s[b]):
                worst = max(worst, left / own if own > 0 else float("inf"))
    return worst


def demand_probabilities(instance: FleetInstance, solution: FleetSolution) -> dict[str, float]:
    """Per inference workload with a plan: the probability its demand is met in every bucket."""
    pools = _pool_ratios(solution)
    out: dict[str, float] = {}
    for a in solution.assignments:
        if not a.uses:
            continue
        low = min(u.candidate.band_low for u in a.uses)
        high = max(u.candidate.band_high for u in a.uses)
        out[a.workload] = probability_reaching(_load_ratio(instance, a, pools), low, high)
    return out
