"""Batch work with a completion window (``InferenceWorkload.batch_deadline_hours``).

Such work need not be served at its arrival rate in every hour: requests queue (first in, first
out) and must be done within D hours of arriving. The day repeats, so the queue is cyclic.

- The MIP (model constraint 1', ``add_window_demand``): per request size and hour h, served
  ``x_h ≤`` the capacity of h's bucket, backlog ``q_h ≥ 0`` with ``q_{h+1} = q_h + a_h − x_h``
  (cyclic over 24 hours) and ``q_h ≤ Σ_{j=0}^{D−2} x_{h+j}``: the backlog at an hour's start is
  served within the next D − 1 hours, so a request arriving during that hour waits less than D
  hours. D = 1 leaves no backlog: every hour served as it arrives, today's rows.
- The evaluator (``window_misses``) checks a plan independently by simulating the queue: a
  work-conserving FIFO server over repeated days from an empty queue (it serves at least as much
  as any schedule by every moment, so it meets the window whenever some schedule does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from solver.optimizer.instance import Bucket, Candidate, FleetInstance, InferenceDemand
from solver.units import HOURS_PER_DAY

SETTLE_DAYS = 10
"""Days simulated before the checked one (a queue of D ≤ 168 hours settles within a week)."""
REL_TOL = 1e-6


def hour_buckets(buckets: Sequence[Bucket]) -> list[int]:
    """The bucket of each hour of the day."""
    of = {h: b.index for b in buckets for h in b.hours}
    return [of[h] for h in range(HOURS_PER_DAY)]


def hourly_arrivals(w: InferenceDemand, buckets: Sequence[Bucket]) -> list[float]:
    """Requests per second arriving in each hour (the bucket's rate when the hours are exact)."""
    if w.hourly_rate_req_s:
        return list(w.hourly_rate_req_s)
    return [w.rate_req_s[b] for b in hour_buckets(buckets)]


class WindowModel(Protocol):
    """What constraint 1' reads of ``model.ModelBuilder``."""

    solver: Any
    inst: FleetInstance
    relax: Any
    alpha: Any
    r: dict[str, list[Any]]
    short: dict[str, list[Any]]


def add_window_demand(
    model: WindowModel, w: InferenceDemand, share: float, cands: Sequence[Candidate], row: str
) -> None:
    """Constraint 1' for one request size of ``w`` (``share`` of its requests; rates ÷ w's peak
    arrival rate, an hour as the unit): served x_h at most the capacity of h's bucket, the cyclic
    queue, and the window. Scaled by the demand scale α or less the shortfall when the model
    has them (EvaluateFleet)."""
    peak = w.peak_req_s
    deadline = w.deadline_hours or 1
    if peak <= 0:
        return
    slv, buckets = model.solver, model.inst.buckets
    capacity = [sum(c.capacity_req_s / peak * model.r[c.id][b] for c in cands) for b in range(len(buckets))]
    arrivals = hourly_arrivals(w, buckets)
    served = [slv.NumVar(0, slv.infinity(), f"x[{row},{h}]") for h in range(HOURS_PER_DAY)]
    backlog = [slv.NumVar(0, slv.infinity(), f"q[{row},{h}]") for h in range(HOURS_PER_DAY)]
    for h, b in enumerate(hour_buckets(buckets)):
        arriving: Any = arrivals[h] * share / peak
        if model.alpha is not None:
            arriving = arriving * model.alpha
        if model.relax.elastic_demand:
            arriving = arriving - model.short[w.name][b] * share
        slv.Add(served[h] <= capacity[b], f"serve[{row},{h}]")
        after = backlog[(h + 1) % HOURS_PER_DAY]
        slv.Add(after == backlog[h] + arriving - served[h], f"queue[{row},{h}]")
        window = [served[(h + j) % HOURS_PER_DAY] for j in range(deadline - 1)]
        slv.Add(backlog[h] <= sum(window), f"window[{row},{h}]")


def window_misses(deadline_hours: int, capacity: Sequence[float], arriving: Sequence[float]) -> str:
    """Why hourly ``capacity`` (req/s in each hour) misses the window for ``arriving`` (req/s in
    each hour), "" when every request is done within ``deadline_hours`` of arriving."""
    daily_in, daily_cap = sum(arriving), sum(capacity)
    if daily_cap < daily_in * (1 - REL_TOL):
        return f"serves {daily_cap / daily_in:.1%} of the daily volume"
    days = SETTLE_DAYS + 1 + -(-deadline_hours // HOURS_PER_DAY)
    backlog = 0.0
    queue: list[float] = []
    served: list[float] = []
    for t in range(days * HOURS_PER_DAY):
        h = t % HOURS_PER_DAY
        queue.append(backlog)  # at the hour's start
        done = min(capacity[h], backlog + arriving[h])
        backlog += arriving[h] - done
        served.append(done)
    slack = REL_TOL * max(daily_in, 1e-12)
    for t in range(SETTLE_DAYS * HOURS_PER_DAY, (SETTLE_DAYS + 1) * HOURS_PER_DAY):
        within = sum(served[t : t + deadline_hours - 1])
        if queue[t] > within + slack:
            hour = t % HOURS_PER_DAY
            return (
                f"the backlog at hour {hour} ({queue[t] * 3600:.4g} requests) is not done within "
                f"{deadline_hours} h"
            )
    return ""
