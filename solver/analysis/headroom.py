"""Headroom of a plan's fleet: how much more demand the fleet it holds carries at the SLA, found by
the evaluator on that fixed fleet (never by re-planning), and the cheapest addition that serves
the next step of growth.

- **Pinned fleet.** Every option of the plan's instance is held at the plan's count (on-demand at
  most its peak count in every hour), as EvaluateFleet pins a given fleet.
- **Served at a multiplier.** Demand × m is served when the evaluator's strict solve (every demand
  in full, the request's caps) finds an assignment on the pinned fleet *and* that assignment
  passes the independent check (capacities recomputed, every hour). Serving is monotone in m for
  a fixed fleet, so the largest m served is found by bisection; the evaluator's headroom solve
  (maximise α with α × every demand served) gives the first probe.
- **Honest bounds.** The answer is the largest multiplier *checked* that the fleet serves: it
  always holds. When the search stops early (range end, time), the answer says it is a lower bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from pricebook.schema import Money
from solver.analysis.whatif import Solve, scale_demand
from solver.domain import AcquisitionMode, FleetItem
from solver.errors import SolveCancelled
from solver.optimizer.cancel import CancelToken
from solver.optimizer.driver import solve_mip
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.instance import FixedGroup, FleetInstance
from solver.optimizer.model import Relaxation
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.optimizer.solution import build_solution

GROWTH_SEARCHED_TO = 4.0
"""Demand is searched up to ×4 (+300 %); a fleet still serving there has *at least* that headroom."""
TOLERANCE = 0.005
"""Bisection stops when the multiplier interval is narrower than half a percentage point."""
STEP = 0.10
"""The next step of growth an addition is sized for is a multiple of 10 % ..."""
MIN_STEP_AHEAD = 0.05
"""... at least 5 percentage points past the fleet's headroom."""
FEASIBILITY_GAP = 0.05
"""A probe only needs an assignment that serves; how cheaply the fleet is used does not matter."""
MIN_CHECK_SECONDS = 0.1
"""No probe is started with less time than this."""


@dataclass(frozen=True, slots=True)
class WorkloadHeadroom:
    """How much one workload's demand may grow, the others' unchanged, on the plan's fleet."""

    workload: str
    demand_growth_served: float
    """0.12 = the fleet serves this workload's demand × 1.12 at its SLA."""
    at_least: bool = False
    """The search stopped with the fleet still serving (+300 % reached, or time ran out)."""


@dataclass(frozen=True, slots=True)
class Headroom:
    """How much more demand a plan's fleet carries at the SLA, and what to add beyond it."""

    demand_growth_served: float
    """0.12 = every workload's demand × 1.12 (training too) is served by the same fleet at its SLA."""
    at_least: bool
    """The search stopped with the fleet still serving: the headroom is at least this."""
    workloads: tuple[WorkloadHeadroom, ...]
    next_step_growth: float | None = None
    """The growth the addition is sized for (a multiple of 10 %, ≥ 5 points past the headroom)."""
    addition: str = ""
    """GPUs to add for it in words, e.g. ``+1 × h100-nvl buy``; empty when none (see ``note``)."""
    added: tuple[FleetItem, ...] = ()
    """The same as fleet lines to add to the plan's fleet (EvaluateFleet input)."""
    addition_extra_tco: Money | None = None
    """Horizon TCO of the grown plan − the plan's own (same prices, same rounding)."""
    note: str = ""


@dataclass(frozen=True, slots=True)
class GrowthFound:
    """The largest demand multiplier checked that the fixed fleet serves."""

    multiplier: float
    at_least: bool
    """The search ended with the fleet still serving (range end, or time ran out): a lower bound."""
    probes: int


def next_step(growth: float) -> float:
    """The growth an addition is sized for: the first multiple of ``STEP`` at least
    ``MIN_STEP_AHEAD`` past ``growth`` (+1 % → +10 %, +12 % → +20 %)."""
    steps = int((growth + MIN_STEP_AHEAD) / STEP - 1e-9) + 1
    return round(steps * STEP, 10)


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

    def __init__(self, *, cancel: CancelToken | None, backend: str, capacity_of: CapacityOf | None) -> None:
        self.cancel = cancel
        self.backend = "scip" if backend == "auto" else backend
        self.capacity_of = capacity_of

    def __call__(self, instance: FleetInstance, time_limit_s: float) -> bool | None:
        mip = solve_mip(
            instance,
            time_limit_s=time_limit_s,
            cancel=self.cancel,
            backend=self.backend,
            relative_gap=FEASIBILITY_GAP,
        )
        status = mip.stats.status
        if status is SolveStatus.CANCELLED:
            raise SolveCancelled("headroom search cancelled")
        if mip.values is None:
            return False if status is SolveStatus.INFEASIBLE else None
        return not check_solution(instance, build_solution(instance, mip), self.capacity_of)

    def demand_scale_hints(self, pinned: FleetInstance, time_limit_s: float) -> dict[str, float]:
        """Per workload, capacity ÷ demand at peak where the evaluator's headroom solve (maximise α
        with α × every demand served) puts its replicas: first probes, checked before use."""
        mip = solve_mip(
            pinned,
            time_limit_s=time_limit_s,
            cancel=self.cancel,
            backend=self.backend,
            relax=Relaxation(maximize_demand_scale=True),
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
) -> GrowthFound:
    """The largest multiplier in [``start``, ``GROWTH_SEARCHED_TO``] at which ``check`` says the
    fleet serves ``make(m)``, to ``TOLERANCE``; ``start`` is known to be served. ``hint`` and the
    range end are probed first, then the interval is halved."""
    lo, hi, probes = start, None, 0

    def probe(m: float) -> bool | None:
        nonlocal probes
        remaining = deadline - time.monotonic()
        if remaining < MIN_CHECK_SECONDS:
            return None
        probes += 1
        return check(make(m), remaining)

    probes_first = (
        (GROWTH_SEARCHED_TO,) if hint is None else (min(hint, GROWTH_SEARCHED_TO), GROWTH_SEARCHED_TO)
    )
    for m in probes_first:
        if m <= lo + TOLERANCE:
            continue
        served = probe(m)
        if served is None:
            return GrowthFound(lo, at_least=True, probes=probes)
        if not served:
            hi = m
            break
        lo = m
    if hi is None:
        return GrowthFound(lo, at_least=True, probes=probes)
    while hi - lo > TOLERANCE:
        mid = (lo + hi) / 2
        served = probe(mid)
        if served is None:
            return GrowthFound(lo, at_least=True, probes=probes)
        lo, hi = (mid, hi) if served else (lo, mid)
    return GrowthFound(lo, at_least=False, probes=probes)


def cheapest_addition(
    instance: FleetInstance, solution: FleetSolution, growth: float, solve: Solve, time_limit_s: float
) -> tuple[FleetInstance, FleetSolution] | None:
    """The cheapest plan for demand × (1 + ``growth``) that keeps every GPU the plan holds, option
    by option (more may be bought or rented of any type), with the grown instance it was solved
    on; None when no such plan was found in time."""
    held = {o.option_id: o.gpus for o in solution.options}
    grows = tuple(FixedGroup((o.id,), held.get(o.id, 0), at_least=True) for o in instance.options)
    grown = replace(scale_demand(instance, 1.0 + growth), fixed_fleet=grows)
    bigger = solve(grown, time_limit_s)
    return (grown, bigger) if bigger.has_plan else None
