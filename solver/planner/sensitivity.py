"""Sensitivity of a plan: how far each planned GPU type's price (and the strongest alternative's),
and total demand, must move before the mix changes (``solver.analysis.whatif.find_threshold``).

The searches run side by side (``solver.optimizer.concurrency``) in the time left until
``deadline``: each subject gets an equal share of what remains per wave when it starts, split in
two when both directions are searched."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

from pricebook.schema import GpuId
from solver.analysis.whatif import (
    DEMAND_DOWN_MIN,
    DEMAND_UP_MAX,
    PRICE_DOWN_MIN,
    PRICE_UP_MAX,
    BaselineRun,
    Mix,
    SearchOutcome,
    Solve,
    describe_fleet,
    find_threshold,
    mix_of,
    scale_demand,
    scale_gpu_price,
)
from solver.errors import SolveCancelled
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.results import Sensitivity

TIME_BUDGET_NOTE = "time budget"
"""Words in a sensitivity explanation whose search the time budget cut short."""


def sensitivity_rows(
    instance: FleetInstance,
    solution: FleetSolution,
    runs: Sequence[BaselineRun],
    solve: Solve,
    deadline: float,
) -> tuple[Sensitivity, ...]:
    """One row per planned GPU type's price, one for the strongest alternative's, one for demand;
    a cancelled call ends the rows with a ``(cancelled)`` one."""
    base_mix = mix_of(solution)
    planned = sorted({g for g, _ in base_mix})
    alternative = _strongest_alternative(runs, solution, planned)
    subjects: list[tuple[str, bool]] = [(g, True) for g in planned]
    if alternative is not None:
        subjects.append((alternative, False))
    jobs: list[Callable[[float], Sensitivity]] = [
        partial(
            _price_row_until,
            instance,
            solution,
            base_mix=base_mix,
            gpu=gpu,
            in_plan=in_plan,
            solve=solve,
        )
        for gpu, in_plan in subjects
    ]
    jobs.append(partial(_demand_row, instance, solution, base_mix, solve))
    results: list[Sensitivity] = []
    for outcome in run_side_by_side(jobs, deadline=deadline):
        if isinstance(outcome, SolveCancelled):
            return (*results, _cancelled_row())
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return tuple(results)


def cut_short(rows: Sequence[Sensitivity]) -> bool:
    """Whether the time budget stopped any of the searches."""
    return any(TIME_BUDGET_NOTE in s.explanation for s in rows)


def _price_row_until(
    instance: FleetInstance,
    solution: FleetSolution,
    deadline: float,
    *,
    base_mix: Mix,
    gpu: GpuId,
    in_plan: bool,
    solve: Solve,
) -> Sensitivity:
    """A GPU type's price moved down (and up, when the plan uses it: a type the plan does not use
    only matters when it gets cheaper)."""

    def priced(m: float) -> FleetInstance:
        return scale_gpu_price(instance, gpu, m)

    down = find_threshold(
        priced, base_mix, PRICE_DOWN_MIN, solve, deadline=_mid(deadline, in_plan), base=solution
    )
    up = (
        find_threshold(priced, base_mix, PRICE_UP_MAX, solve, deadline=deadline, base=solution)
        if in_plan
        else None
    )
    role = "in the plan" if in_plan else "strongest alternative not in the plan"
    return _sensitivity_row(gpu, f"price ({role})", down, up, solution)


def _demand_row(
    instance: FleetInstance, solution: FleetSolution, base_mix: Mix, solve: Solve, deadline: float
) -> Sensitivity:
    """Every workload's demand scaled down and up."""

    def scaled(m: float) -> FleetInstance:
        return scale_demand(instance, m)

    down = find_threshold(scaled, base_mix, DEMAND_DOWN_MIN, solve, deadline=_mid(deadline, True))
    up = find_threshold(scaled, base_mix, DEMAND_UP_MAX, solve, deadline=deadline)
    return _sensitivity_row("demand", "total demand (all workloads)", down, up, solution)


def _cancelled_row() -> Sensitivity:
    return Sensitivity(
        subject="(cancelled)",
        parameter="(not computed)",
        change_down_fraction=None,
        change_up_fraction=None,
        last_same_down_fraction=None,
        last_same_up_fraction=None,
        plan_below="",
        plan_above="",
        explanation="sensitivity search stopped: the call was cancelled",
        solves=0,
    )


def _mid(deadline: float, split: bool) -> float:
    """Half of the time to ``deadline`` when two directions share it."""
    if not split:
        return deadline
    now = time.monotonic()
    return now + (deadline - now) / 2


def _strongest_alternative(
    runs: Sequence[BaselineRun], solution: FleetSolution, planned: list[GpuId]
) -> GpuId | None:
    """The GPU type not in the plan whose own best fleet is cheapest (else the cheapest runner-up)."""
    outside = [r for r in runs if r.gpu not in planned and r.horizon_tco is not None]
    if outside:
        return min(outside, key=lambda r: (r.horizon_tco or 0.0, r.gpu)).gpu
    runner_ups = [
        a.runner_up
        for a in solution.assignments
        if a.runner_up is not None and a.runner_up.gpu not in planned
    ]
    if runner_ups:
        return min(runner_ups, key=lambda r: (r.total_cost, r.gpu)).gpu
    return None


def _side(
    outcome: SearchOutcome | None, word: str, notes: list[str]
) -> tuple[float | None, float | None, str]:
    """(fraction where the mix changes, last fraction with the same mix, the plan past it) of one
    direction; what is worth saying about it goes to ``notes``."""
    if outcome is None:
        notes.append(
            f"{word}: not searched (a GPU type the plan does not use only matters when it gets cheaper)"
        )
        return None, None, ""
    t = outcome.threshold
    if t is None:
        if outcome.complete:
            notes.append(f"{word}: mix unchanged up to ×{outcome.searched_to:g}")
        else:
            notes.append(f"{word}: not searched to the end ({TIME_BUDGET_NOTE})")
        return None, None, ""
    if not outcome.complete:
        notes.append(
            f"{word}: the mix changes somewhere between {t.last_same_multiplier - 1:+.1%} and "
            f"{t.multiplier - 1:+.1%} (search stopped by the {TIME_BUDGET_NOTE} before narrowing it)"
        )
    return t.multiplier - 1.0, t.last_same_multiplier - 1.0, describe_fleet(t.plan_past)


def _sensitivity_row(
    subject: str,
    parameter: str,
    down: SearchOutcome,
    up: SearchOutcome | None,
    solution: FleetSolution,
) -> Sensitivity:
    notes: list[str] = []
    down_at, down_same, below = _side(down, "down", notes)
    up_at, up_same, above = _side(up, "up", notes)
    today = f"today: {describe_fleet(solution)}"
    return Sensitivity(
        subject=subject,
        parameter=parameter,
        change_down_fraction=down_at,
        change_up_fraction=up_at,
        last_same_down_fraction=down_same,
        last_same_up_fraction=up_same,
        plan_below=below,
        plan_above=above,
        explanation=f"{today}; " + "; ".join(notes) if notes else today,
        solves=down.solves + (up.solves if up is not None else 0),
    )
