"""Sensitivity of a plan: how far each planned GPU type's price (and the strongest alternative's)
must move before the optimal mix changes (``solver.analysis.whatif.find_threshold``, parametric:
each probe admits only plans at most as dear as the cheapest known there — today's, the
baselines' fleets, those found — so "unchanged" is a bound reaching a known cost rather than a full
re-solve). These are
mix-change thresholds of re-planning, not the headroom of the quoted fleet: how much more demand
that fleet carries is the plan's ``headroom`` (``solver.planner.headroom``, the evaluator on the
fixed fleet).

The searches — one per direction of each row — run side by side (``solver.optimizer.concurrency``)
in the time left until ``deadline``: each gets an equal share of what remains per wave when it
starts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from pricebook.schema import GpuId
from solver.analysis.whatif import (
    PRICE_DOWN_MIN,
    PRICE_UP_MAX,
    BaselineRun,
    Mix,
    SearchOutcome,
    Solve,
    SolveBelow,
    describe_fleet,
    find_threshold,
    mix_of,
    scale_gpu_price,
)
from solver.errors import SolveCancelled
from solver.optimizer.concurrency import run_side_by_side
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.results import Sensitivity

TIME_BUDGET_NOTE = "time budget"
"""Words in a sensitivity explanation whose search the time budget cut short."""
CUT_SHORT_WARNING = "sensitivity search was cut short by the time limit (see each explanation)"


def sensitivity_rows(
    instance: FleetInstance,
    solution: FleetSolution,
    runs: Sequence[BaselineRun],
    solve: Solve,
    deadline: float,
    *,
    solve_below: SolveBelow | None = None,
    alternative_of: Callable[[list[GpuId]], GpuId | None] | None = None,
    linear: bool = True,
) -> tuple[Sensitivity, ...]:
    """One row per planned GPU type's price and one for the strongest alternative's (given the
    planned types, ``alternative_of`` names it; by default the runs' cheapest outside the plan);
    ``linear=False`` searches by plain bisection (``find_threshold``); a cancelled
    call ends the rows with a ``(cancelled)`` one. Each direction of each row is its
    own search (a job of ``run_side_by_side``): two workers then stay busy to the last one, where
    a row per job left one idle while the longest row searched its second direction."""
    base_mix = mix_of(solution)
    planned = sorted({g for g, _ in base_mix})
    if alternative_of is None:
        alternative = _strongest_alternative(runs, solution, planned)
    else:
        alternative = alternative_of(planned)
    subjects: list[tuple[str, bool]] = [(g, True) for g in planned]
    if alternative is not None:
        subjects.append((alternative, False))
    known = tuple(r.solution for r in runs if r.feasible and r.solution is not None)
    searches: list[tuple[int, Callable[[float], SearchOutcome]]] = []
    for row, (gpu, in_plan) in enumerate(subjects):
        priced = partial(scale_gpu_price, instance, gpu)
        for far in (PRICE_DOWN_MIN, PRICE_UP_MAX) if in_plan else (PRICE_DOWN_MIN,):
            search = partial(
                _search,
                priced,
                base_mix,
                far,
                solve,
                base=solution if linear else None,
                solve_below=solve_below,
                known=known,
                linear=linear,
            )
            searches.append((row, search))
    outcomes: dict[int, list[SearchOutcome]] = {row: [] for row in range(len(subjects))}
    cancelled: set[int] = set()
    for (row, _), outcome in zip(
        searches, run_side_by_side([job for _, job in searches], deadline=deadline), strict=True
    ):
        if isinstance(outcome, SolveCancelled):
            cancelled.add(row)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            outcomes[row].append(outcome)
    # A cancelled call keeps the rows whose searches all finished, then says it was cancelled.
    done = {row: found for row, found in outcomes.items() if row not in cancelled and found}
    rows = _rows(subjects, done, solution)
    return (*rows, _cancelled_row()) if cancelled else rows


def _search(
    make: Callable[[float], FleetInstance],
    base_mix: Mix,
    far: float,
    solve: Solve,
    deadline: float,
    *,
    base: FleetSolution | None,
    solve_below: SolveBelow | None,
    known: Sequence[FleetSolution],
    linear: bool,
) -> SearchOutcome:
    return find_threshold(
        make,
        base_mix,
        far,
        solve,
        deadline=deadline,
        base=base,
        solve_below=solve_below,
        known=known,
        linear=linear,
    )


def _rows(
    subjects: Sequence[tuple[str, bool]],
    outcomes: dict[int, list[SearchOutcome]],
    solution: FleetSolution,
) -> tuple[Sensitivity, ...]:
    """The rows of ``outcomes`` (row → its searches: down, then up where searched), in row order."""
    rows: list[Sensitivity] = []
    for row in sorted(outcomes):
        found = outcomes[row]
        down, up = found[0], found[1] if len(found) > 1 else None
        gpu, in_plan = subjects[row]
        role = "in the plan" if in_plan else "strongest alternative not in the plan"
        parameter = f"price ({role}): where the optimal mix changes"
        rows.append(_sensitivity_row(gpu, parameter, down, up, solution))
    return tuple(rows)


def cut_short(rows: Sequence[Sensitivity]) -> bool:
    """Whether the time budget stopped any of the searches."""
    return any(TIME_BUDGET_NOTE in s.explanation for s in rows)


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
