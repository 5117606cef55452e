"""What-ifs on a built instance: single-GPU baselines, price and demand sensitivity.

All of them re-solve the *same* ``FleetInstance`` with a small change (options of one GPU type
only, one GPU type's prices scaled, demand scaled), so the performance model's candidates are
computed once per request, never per re-solve.

Sensitivity is a bounded bisection on a multiplier ``m`` (1 = today's price or demand):

1. solve at the far end of the range (e.g. ``m = 4``); if the mix is unchanged there, the answer
   is "not within the range";
2. otherwise keep ``lo`` (mix unchanged) and ``hi`` (mix changed) and narrow the interval until
   it is narrower than ``tolerance``; the threshold reported is ``hi`` — the plan there *is*
   different — and ``lo`` is the last multiplier checked with the same mix.

For a price multiplier every plan's cost is linear in ``m``: the probes go either side of where
known plans' costs cross, and each probe's solve admits only plans at most as dear as the cheapest
known plan there (``find_threshold``), so a probe that keeps today's mix ends at a bound.

The *mix* is the set of (GPU type, acquisition mode) the plan holds; counts are not part of it
(demand moves counts at every step, which is not what a bid reviewer asks).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from pricebook.schema import GpuId
from solver.budget import DEFAULT_BUDGET as BUDGET
from solver.domain import AcquisitionMode
from solver.errors import SolveCancelled
from solver.optimizer.caps import Cap, counted_gpu
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.evaluate import caps_hold
from solver.optimizer.explain import NEEDED_TOLERANCE
from solver.optimizer.instance import Caps, FleetInstance, TrainingChoice
from solver.optimizer.results import CapRelaxation, FleetSolution, SolveStatus
from solver.optimizer.solution import plan_cost
from solver.optimizer.variants import (
    describe_fleet,
    in_use,
    restrict_to_gpu,
    scale_rates,
    scale_workload_demand,
)
from solver.pricing.options import AcquisitionOption

__all__ = [
    "PRICE_DOWN_MIN",
    "PRICE_UP_MAX",
    "PROVEN",
    "TOLERANCE",
    "BaselineRun",
    "Mix",
    "SearchOutcome",
    "Solve",
    "SolveBelow",
    "Threshold",
    "describe_fleet",
    "find_threshold",
    "mix_of",
    "restrict_to_gpu",
    "run_baselines",
    "scale_demand",
    "scale_gpu_price",
    "scale_inference_demand",
    "scale_option_price",
    "scale_workload_demand",
    "with_capex_budget",
]

Solve = Callable[[FleetInstance, float], FleetSolution]
"""Solve an instance within a time limit (seconds); the planner binds backend, gap and cancel."""
SolveBelow = Callable[[FleetInstance, float, float], FleetSolution]
"""The same with an objective cutoff (request currency): only plans with a TCO at most it, so
INFEASIBLE proves that none is that cheap."""

CUTOFF_MARGIN = 1e-9
"""A probe's cutoff is this far (relative) below the reference plan's cost: "strictly cheaper"."""

Mix = frozenset[tuple[GpuId, AcquisitionMode]]

PRICE_UP_MAX = 4.0
"""Search a GPU's price up to 4× (+300 %) before saying the mix never changes."""
PRICE_DOWN_MIN = 0.25
"""... and down to a quarter (−75 %)."""
TOLERANCE = 0.02
"""Bisection stops when the multiplier interval is narrower than 2 percentage points."""
PROVEN = frozenset({SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE})
"""Solve outcomes that decide a probe on their own (no plan at all is a change of plan too)."""


# --------------------------------------------------------------------------------------------
# Instance transforms
# --------------------------------------------------------------------------------------------


def scale_option_price(option: AcquisitionOption, factor: float) -> AcquisitionOption:
    """The option with its GPU price × ``factor`` (purchase price and the support priced on it,
    the installation priced as a fraction of it, or the rental rate); power, hosts, software and
    sunk (owned) GPUs are unchanged."""
    if option.owned:
        return option
    if option.mode is AcquisitionMode.BUY:
        support = option.support_monthly_per_gpu
        return replace(
            option,
            capex_per_gpu=option.capex_per_gpu * factor,
            installation_capex_per_gpu=option.installation_capex_per_gpu * factor,
            fixed_monthly_per_gpu=option.fixed_monthly_per_gpu + support * (factor - 1.0),
        )
    if option.mode is AcquisitionMode.RESERVED:
        rent = option.fixed_monthly_per_gpu - option.software_monthly_per_gpu
        return replace(option, fixed_monthly_per_gpu=rent * factor + option.software_monthly_per_gpu)
    rate = option.busy_hourly_per_gpu - option.software_hourly_per_gpu
    return replace(option, busy_hourly_per_gpu=rate * factor + option.software_hourly_per_gpu)


def scale_gpu_price(instance: FleetInstance, gpu: GpuId, factor: float) -> FleetInstance:
    options = tuple(scale_option_price(o, factor) if o.gpu == gpu else o for o in instance.options)
    return replace(instance, options=options)


def scale_demand(instance: FleetInstance, factor: float) -> FleetInstance:
    """Every workload's demand × ``factor`` (request rates, training GPU-hours per month)."""
    training = tuple(
        replace(t, choices=tuple(_scale_choice(ch, factor) for ch in t.choices)) for t in instance.training
    )
    return replace(scale_inference_demand(instance, factor), training=training)


def scale_inference_demand(instance: FleetInstance, factor: float) -> FleetInstance:
    """Every inference workload's request rates × ``factor``; training as it is."""
    return replace(instance, inference=tuple(scale_rates(d, factor) for d in instance.inference))


def _scale_choice(choice: TrainingChoice, factor: float) -> TrainingChoice:
    return replace(choice, gpu_hours_per_month=choice.gpu_hours_per_month * factor)


def with_capex_budget(instance: FleetInstance, budget: float | None) -> FleetInstance:
    caps = instance.caps
    return replace(
        instance,
        caps=Caps(
            capex_budget=budget,
            monthly_opex_cap=caps.monthly_opex_cap,
            power_cap_kw=caps.power_cap_kw,
            rack_units_cap=caps.rack_units_cap,
        ),
    )


# --------------------------------------------------------------------------------------------
# Describing plans
# --------------------------------------------------------------------------------------------


def mix_of(solution: FleetSolution) -> Mix:
    """(GPU type, mode) pairs the plan holds; empty without a plan."""
    if not solution.has_plan:
        return frozenset()
    return frozenset((o.gpu, o.mode) for o in solution.options if in_use(o))


# --------------------------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BaselineRun:
    gpu: GpuId
    solution: FleetSolution | None
    """None when the single-type instance could not even be built (see ``reason``)."""
    instance: FleetInstance | None
    reason: str
    binding: tuple[CapRelaxation, ...] = ()
    """Why no fleet of only this type exists: the caps it exceeds, each with what it needs."""

    @property
    def feasible(self) -> bool:
        return self.solution is not None and self.solution.has_plan

    @property
    def horizon_tco(self) -> float | None:
        if self.solution is None or self.solution.cost is None or not self.solution.has_plan:
            return None
        return self.solution.cost.total


def run_baselines(
    instance: FleetInstance,
    gpus: tuple[GpuId, ...],
    solve: Solve,
    *,
    deadline: float,
    diagnose: Solve | None = None,
) -> tuple[BaselineRun, ...]:
    """For each GPU type, the cheapest fleet using only it (or why none exists), within ``deadline``
    (a ``time.monotonic()`` instant); types left when time runs out say so. ``diagnose`` (a solve
    that explains an infeasible instance) names the caps a type's fleet cannot meet. A type that
    cannot serve some workload is answered without a solve; the others are solved side by side
    (``solver.optimizer.concurrency``: OR-Tools releases the GIL, so two solves use both cores),
    each with an equal share of the time left per wave when it starts."""
    singles = [(gpu, *restrict_to_gpu(instance, gpu)) for gpu in gpus]
    jobs = [
        partial(_baseline, gpu, single, solve, diagnose) for gpu, single, _ in singles if single is not None
    ]
    outcomes = iter(run_side_by_side(jobs, deadline=deadline))
    runs: list[BaselineRun] = []
    for gpu, single, reason in singles:
        if single is None:
            runs.append(BaselineRun(gpu, None, None, reason))
            continue
        outcome = next(outcomes)
        if isinstance(outcome, BaseException):
            raise outcome  # a cancelled call (SolveCancelled) or a bug
        runs.append(outcome)
    return tuple(runs)


def _baseline(
    gpu: GpuId, single: FleetInstance, solve: Solve, diagnose: Solve | None, deadline: float
) -> BaselineRun:
    """The cheapest fleet of ``single`` (one GPU type's instance) by ``deadline``, or why none."""
    remaining = deadline - time.monotonic()
    if remaining < BUDGET.min_probe_s:
        return BaselineRun(gpu, None, single, "not computed: the time budget ran out")
    solution = solve(single, remaining)
    if solution.status is SolveStatus.CANCELLED:
        raise SolveCancelled("baselines cancelled")
    if solution.has_plan:
        proven = solution.status is SolveStatus.OPTIMAL
        return BaselineRun(
            gpu, solution, single, "" if proven else "time limit: best plan found, not proven optimal"
        )
    if solution.status is SolveStatus.INFEASIBLE:
        left = deadline - time.monotonic()
        explained = diagnose(single, left) if diagnose is not None and left >= BUDGET.min_probe_s else None
        return _infeasible_run(gpu, explained or solution, single)
    return BaselineRun(gpu, solution, single, f"no plan found in time ({solution.status.value})")


def _infeasible_run(gpu: GpuId, solution: FleetSolution, single: FleetInstance) -> BaselineRun:
    """A type no fleet of which meets the request: the caps it exceeds and by how much, e.g.
    "capex budget 300,000,000 KRW < 359,115,654 KRW needed for h100-nvl ×6 buy"."""
    diagnosis = solution.diagnosis
    binding = diagnosis.binding_caps if diagnosis is not None else ()
    if binding:
        reason = "; ".join(_shortfall_words(r, single.currency) for r in binding)
    elif diagnosis is not None and diagnosis.messages:
        reason = f"no fleet of only {gpu} meets the request: " + "; ".join(diagnosis.messages)
    else:
        reason = f"no fleet of only {gpu} meets the caps and bounds (not narrowed in the time)"
    return BaselineRun(gpu, solution, single, reason, binding)


def _shortfall_words(relaxation: CapRelaxation, currency: str) -> str:
    """E.g. "capex budget 300,000,000 KRW < 359,115,654 KRW needed for h100-nvl ×6 buy"; a figure
    not proven within the tolerance reads "< at most …"."""
    gpu = counted_gpu(relaxation.cap)

    def amount(value: float) -> str:
        return f"{value:.0f} GPUs" if gpu is not None else Cap(relaxation.cap).amount(value, currency)

    words = f"maximum {gpu} count" if gpu is not None else Cap(relaxation.cap).words
    low = relaxation.needed_at_least
    bound = "" if low is not None and relaxation.needed <= low * (1 + NEEDED_TOLERANCE) else "at most "
    fleet = f" for {relaxation.fleet}" if relaxation.fleet else ""
    return f"{words} {amount(relaxation.limit)} < {bound}{amount(relaxation.needed)} needed{fleet}"


# --------------------------------------------------------------------------------------------
# Sensitivity
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threshold:
    """Where the mix changes along one direction of a multiplier."""

    multiplier: float
    """First multiplier found at which the mix differs (the plan there is ``plan_past``)."""
    last_same_multiplier: float
    """Largest move (towards the threshold) checked that keeps today's mix."""
    plan_past: FleetSolution


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    threshold: Threshold | None
    searched_to: float
    """The far end reached: the mix is unchanged from 1 up to here when ``threshold`` is None."""
    complete: bool
    """False when the time budget stopped the search before it finished."""
    solves: int


def find_threshold(
    make: Callable[[float], FleetInstance],
    base_mix: Mix,
    far: float,
    solve: Solve,
    *,
    deadline: float,
    tolerance: float = TOLERANCE,
    solves_left: int = 1_000,
    base: FleetSolution | None = None,
    solve_below: SolveBelow | None = None,
    known: Sequence[FleetSolution] = (),
    linear: bool = True,
) -> SearchOutcome:
    """The multiplier between 1 and ``far`` where the mix first changes, to ``tolerance``.

    Bisection, or — given today's plan ``base`` and a price multiplier, under which every plan's
    cost is linear — probes just either side of where the best plans known on the two sides cost
    the same (``plan_cost``): the optimum's cost is the lower envelope of those lines, so with one
    change of plan in between, two probes settle it where bisection needs about eight solves.

    Only proven optima decide a probe; a plan the time limit stopped counts only as a change of
    mix that is cheaper than today's plan there, else the search ends incomplete.

    With ``solve_below`` each probe is parametric: the plans already known (``base``, ``known``
    such as the baselines' fleets, and those the search found) are priced at the probe, and the
    solve admits only plans at most as dear as the cheapest of them that keeps the caps there: a
    bound reaching a known cost ends the search without finding that plan again. When that plan
    holds today's mix the cutoff is strictly below it, so INFEASIBLE proves the mix unchanged
    there; otherwise INFEASIBLE (or no plan in time) leaves that plan as the one that beats
    today's. A plan found is the optimum there, as without the cutoff.

    ``linear=False``: plain bisection, for plans whose cost ``plan_cost`` does not give (a
    multi-year plan's)."""
    solves = 0
    plans = _KnownPlans(base_mix)
    for plan in (base, *known):
        plans.add(plan)

    def mix_at(m: float) -> tuple[Mix, FleetSolution] | None:
        nonlocal solves
        remaining = deadline - time.monotonic()
        if remaining < BUDGET.min_probe_s or solves >= solves_left:
            return None
        solves += 1
        instance = make(m)
        decided = _decided(instance, _probe(instance, remaining, solve, solve_below, plans), base)
        if decided is not None:
            plans.add(decided[1])
        return decided

    at_far = mix_at(far)
    if at_far is None:
        return SearchOutcome(None, 1.0, complete=False, solves=solves)
    if at_far[0] == base_mix:
        return SearchOutcome(None, far, complete=True, solves=solves)
    lo, hi, past = 1.0, far, at_far[1]
    lo_plan = base
    pending: list[float] = []
    complete = True
    while abs(hi - lo) > tolerance:
        if not pending:
            near = lo_plan if linear else None
            pending = _probes(make, near, hi_plan=past, lo=lo, hi=hi, tolerance=tolerance)
        probe = pending.pop(0)
        result = mix_at(probe)
        if result is None:
            complete = False
            break
        if result[0] == base_mix:
            lo, lo_plan = probe, result[1]
        else:
            hi, past = probe, result[1]
            pending = []  # the far-side probe is moot once the near one changed the mix
    return SearchOutcome(Threshold(hi, lo, past), far, complete=complete, solves=solves)


def _decided(
    instance: FleetInstance, probed: FleetSolution | tuple[FleetSolution], base: FleetSolution | None
) -> tuple[Mix, FleetSolution] | None:
    """(the mix, the plan) a probe decides (``_probe``), None when it decides nothing."""
    if isinstance(probed, tuple):
        return mix_of(probed[0]), probed[0]
    solution = probed
    if solution.status is SolveStatus.CANCELLED:
        raise SolveCancelled("sensitivity search cancelled")
    if solution.status is SolveStatus.NO_SOLUTION:
        return None  # no answer in time: unknown, not a change of plan
    mix = mix_of(solution)
    if solution.status not in PROVEN and not _beats(instance, solution, mix, base):
        return None  # a plan the time limit stopped proves neither "unchanged" nor a change
    return mix, solution


@dataclass(slots=True)
class _KnownPlans:
    """Verified plans of the request found at other prices, by whether they hold today's mix."""

    mix: Mix
    same: list[FleetSolution] = field(default_factory=list)
    other: list[FleetSolution] = field(default_factory=list)

    def add(self, plan: FleetSolution | None) -> None:
        if plan is None or not plan.has_plan:
            return
        into = self.same if mix_of(plan) == self.mix else self.other
        if all(p is not plan for p in into):
            into.append(plan)


def _probe(
    instance: FleetInstance,
    time_limit_s: float,
    solve: Solve,
    solve_below: SolveBelow | None,
    plans: _KnownPlans,
) -> FleetSolution | tuple[FleetSolution]:
    """The optimum at ``instance``'s prices, or ``(plan,)``: a known ``plan`` nothing is cheaper
    than there (or, of another mix, one that beats every known plan of today's mix there when the
    solve found nothing in time)."""
    same = _cheapest_keeping_caps(instance, plans.same) if solve_below is not None else None
    other = _cheapest_keeping_caps(instance, plans.other) if solve_below is not None else None
    if solve_below is None or (same is None and other is None):
        return solve(instance, time_limit_s)
    if same is not None and (other is None or same[1] <= other[1]):
        plan, cost = same
        solution = solve_below(instance, time_limit_s, cost * (1 - CUTOFF_MARGIN))
        return (plan,) if solution.status is SolveStatus.INFEASIBLE else solution
    assert other is not None
    plan, cost = other
    solution = solve_below(instance, time_limit_s, cost * (1 + CUTOFF_MARGIN))
    beats_today = same is not None and solution.status is not SolveStatus.CANCELLED
    if solution.status is SolveStatus.INFEASIBLE or (beats_today and not solution.has_plan):
        return (plan,)
    return solution


def _cheapest_keeping_caps(
    instance: FleetInstance, plans: list[FleetSolution]
) -> tuple[FleetSolution, float] | None:
    """The cheapest of ``plans`` at ``instance``'s prices among those within its caps, with its cost."""
    priced = [(plan_cost(instance, p), i) for i, p in enumerate(plans) if caps_hold(instance, p)]
    if not priced:
        return None
    cost, i = min(priced)
    return plans[i], cost


def _beats(instance: FleetInstance, solution: FleetSolution, mix: Mix, base: FleetSolution | None) -> bool:
    """Whether an unproven ``solution`` still proves the mix changed: its mix differs from today's
    plan's and it costs less than today's plan at these prices (so today's is not optimal here)."""
    if base is None or mix == mix_of(base):
        return False
    return plan_cost(instance, solution) < plan_cost(instance, base) * (1 - 1e-9)


def _probes(
    make: Callable[[float], FleetInstance],
    lo_plan: FleetSolution | None,
    *,
    hi_plan: FleetSolution,
    lo: float,
    hi: float,
    tolerance: float,
) -> list[float]:
    """Multipliers to solve next: either side of where the two plans' cost lines cross inside
    (lo, hi), or the midpoint (no plan on the near side, or no crossing inside)."""
    mid = (lo + hi) / 2
    if lo_plan is None:
        return [mid]
    gap_lo = plan_cost(make(lo), lo_plan) - plan_cost(make(lo), hi_plan)
    gap_hi = plan_cost(make(hi), lo_plan) - plan_cost(make(hi), hi_plan)
    if gap_lo == gap_hi:
        return [mid]
    crossing = lo + (hi - lo) * gap_lo / (gap_lo - gap_hi)
    step = math.copysign(tolerance * 0.45, hi - lo)  # the bracket ends inside the tolerance
    near, beyond = crossing - step, crossing + step
    inside = [m for m in (near, beyond) if min(lo, hi) < m < max(lo, hi)]
    return inside or [mid]
