"""Demand growth a fixed fleet serves at the SLA (EvaluateFleet's headroom, and a plan's through
``solver.analysis.headroom``).

Demand × m is *served* when the evaluator's strict solve (every demand in full) finds an
assignment on the fixed fleet *and* that assignment passes the independent check (capacities
recomputed, every hour). Serving is monotone in m on a fixed fleet, so the largest m served is
found by bisection, after probing the evaluator's maximise-α estimate and just past it (usually
the whole search). The answer is always a multiplier that was checked; ``at_least`` marks a lower
bound (the range end reached, or time ran out).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from solver.domain import AcquisitionMode
from solver.errors import SolveCancelled
from solver.optimizer.cancel import CancelToken
from solver.optimizer.caps import CapKey
from solver.optimizer.driver import solve_mip
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.instance import FixedGroup, FleetInstance
from solver.optimizer.model import Relaxation
from solver.optimizer.results import FleetSolution, SolveStatus, ViolationKind
from solver.optimizer.solution import build_solution
from solver.optimizer.variants import scale_workload_demand

GROWTH_SEARCHED_TO = 4.0
"""Demand is searched up to ×4 (+300 %); a fleet still serving there has *at least* that headroom."""
TOLERANCE = 0.005
"""Bisection stops when the multiplier interval is narrower than half a percentage point."""
FEASIBILITY_GAP = 0.05
"""A probe only needs an assignment that serves; how cheaply the fleet is used does not matter."""
MIN_CHECK_SECONDS = 0.1
"""No probe is started with less time than this."""


@dataclass(frozen=True, slots=True)
class GrowthFound:
    """The largest demand multiplier checked that the fixed fleet serves."""

    multiplier: float
    at_least: bool
    """The search ended with the fleet still serving (range end, or time ran out): a lower bound."""
    probes: int


def pin_fleet(instance: FleetInstance, solution: FleetSolution) -> FleetInstance:
    """``instance`` with the plan's fleet fixed: held GPUs exactly, on-demand at most their peak."""
    held = {o.option_id: o for o in solution.options}

    def count(option_id: str) -> int:
        chosen = held.get(option_id)
        if chosen is None:
            return 0
        rented = chosen.mode is AcquisitionMode.ON_DEMAND and not chosen.owned
        return chosen.peak_gpus if rented else chosen.gpus

    return replace(instance, fixed_fleet=tuple(FixedGroup((o.id,), count(o.id)) for o in instance.options))


class FleetCheck:
    """Whether a pinned fleet serves an instance's demand (True / False), or None when no answer
    came in time. The evaluator's strict solve, then the independent check of its assignment."""

    def __init__(
        self,
        *,
        cancel: CancelToken | None,
        backend: str,
        capacity_of: CapacityOf | None,
        drop_caps: frozenset[CapKey] = frozenset(),
    ) -> None:
        self.cancel = cancel
        self.backend = "scip" if backend == "auto" else backend
        self.capacity_of = capacity_of
        self.drop_caps = drop_caps
        """Caps not held against the fleet (EvaluateFleet reports a given fleet's overage apart)."""

    def __call__(self, instance: FleetInstance, time_limit_s: float) -> bool | None:
        mip = solve_mip(
            instance,
            time_limit_s=time_limit_s,
            cancel=self.cancel,
            backend=self.backend,
            relax=Relaxation(drop_caps=self.drop_caps),
            relative_gap=FEASIBILITY_GAP,
        )
        status = mip.stats.status
        if status is SolveStatus.CANCELLED:
            raise SolveCancelled("headroom search cancelled")
        if mip.values is None:
            return False if status is SolveStatus.INFEASIBLE else None
        violations = check_solution(instance, build_solution(instance, mip), self.capacity_of)
        return not [v for v in violations if v.kind is not ViolationKind.CAP or not self.drop_caps]

    def demand_scale_hints(self, pinned: FleetInstance, time_limit_s: float) -> dict[str, float]:
        """Per workload, capacity ÷ demand at peak where the evaluator's headroom solve (maximise α
        with α × every demand served) puts its replicas: first probes, checked before use."""
        mip = solve_mip(
            pinned,
            time_limit_s=time_limit_s,
            cancel=self.cancel,
            backend=self.backend,
            relax=Relaxation(maximize_demand_scale=True, drop_caps=self.drop_caps),
        )
        if mip.values is None:
            return {}
        out = {}
        for a in build_solution(pinned, mip).assignments:
            b = a.peak_bucket
            if a.demand_req_s[b] > 0:
                out[a.workload] = a.capacity_req_s[b] / a.demand_req_s[b]
        return out


def largest_served(
    make: Callable[[float], FleetInstance],
    check: FleetCheck,
    *,
    start: float,
    hint: float | None,
    deadline: float,
    beyond_hint: bool = False,
) -> GrowthFound:
    """The largest multiplier in [``start``, ``GROWTH_SEARCHED_TO``] (or up to ``hint`` when
    ``beyond_hint`` and it is larger) at which ``check`` says the fleet serves ``make(m)``, to
    ``TOLERANCE``; ``start`` is known to be served. ``hint`` is probed first, then just past the
    largest served so far (a right hint settles it in two probes), then the range end; then the
    interval is halved."""
    search = _Search(make, check, start, deadline)
    far = max(GROWTH_SEARCHED_TO, hint or 0.0) if beyond_hint else GROWTH_SEARCHED_TO
    firsts = [] if hint is None else [min(hint, far)]
    try:
        for m in firsts:
            search.probe(m)
        if search.hi is None:
            search.probe(min(search.lo + TOLERANCE, far))
        if search.hi is None:
            search.probe(far)
        if search.hi is None:  # served at the range end
            return GrowthFound(search.lo, at_least=True, probes=search.probes)
        while search.hi - search.lo > TOLERANCE:
            search.probe((search.lo + search.hi) / 2)
    except _OutOfTime:
        return GrowthFound(search.lo, at_least=True, probes=search.probes)
    return GrowthFound(search.lo, at_least=False, probes=search.probes)


def workload_growth(
    instance: FleetInstance,
    workload: str,
    check: FleetCheck,
    hint: float | None,
    deadline: float,
    *,
    start: float = 1.0,
) -> GrowthFound:
    """The largest multiplier of one workload's demand (the others' as they are) the fixed fleet
    of ``instance`` serves; ``start`` is known to be served."""
    make = partial(scale_workload_demand, instance, workload)
    return largest_served(make, check, start=start, hint=hint, deadline=deadline, beyond_hint=True)


class _OutOfTime(Exception):
    """No answer from a probe in the time left."""


class _Search:
    """The bracket of a search: ``lo`` served, ``hi`` (when known) not."""

    def __init__(
        self, make: Callable[[float], FleetInstance], check: FleetCheck, start: float, deadline: float
    ) -> None:
        self.make, self.check, self.deadline = make, check, deadline
        self.lo, self.probes = start, 0
        self.hi: float | None = None

    def probe(self, m: float) -> None:
        """Check ``m`` when it lies inside the bracket and move the bracket's end to it."""
        if m <= self.lo or (self.hi is not None and m >= self.hi):
            return
        remaining = self.deadline - time.monotonic()
        if remaining < MIN_CHECK_SECONDS:
            raise _OutOfTime
        self.probes += 1
        served = self.check(self.make(m), remaining)
        if served is None:
            raise _OutOfTime
        if served:
            self.lo = m
        else:
            self.hi = m
