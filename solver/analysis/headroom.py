"""Headroom of a plan's fleet: how much more demand the fleet it holds carries at the SLA, found by
the evaluator on that fixed fleet pinned (never by re-planning; ``solver.optimizer.headroom``), and
the cheapest addition that serves the next step of growth, keeping every GPU the plan holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pricebook.schema import Money
from solver.analysis.whatif import Solve, scale_demand
from solver.domain import FleetItem
from solver.optimizer.instance import FixedGroup, FleetInstance
from solver.optimizer.results import FleetSolution

STEP = 0.10
"""The next step of growth an addition is sized for is a multiple of 10 % ..."""
MIN_STEP_AHEAD = 0.05
"""... at least 5 percentage points past the fleet's headroom."""


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


def next_step(growth: float) -> float:
    """The growth an addition is sized for: the first multiple of ``STEP`` at least
    ``MIN_STEP_AHEAD`` past ``growth`` (+1 % → +10 %, +12 % → +20 %)."""
    steps = int((growth + MIN_STEP_AHEAD) / STEP - 1e-9) + 1
    return round(steps * STEP, 10)


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
