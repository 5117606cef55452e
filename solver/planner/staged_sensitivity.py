"""Sensitivity of a multi-year plan: the single-period plan's price rows
(``solver.planner.sensitivity``), each probe a staged re-solve.

A row's GPU price is scaled in every year alike (the price paths then apply on top), and the mix
compared is the plan's over the whole horizon: each (GPU type, mode) held in any year
(``horizon_fleet``). The strongest alternative is the cheapest staged baseline of a type outside
the plan (none without baselines). The searches bisect (``find_threshold(linear=False)``): the
single-period shortcut prices known plans by the single-period cost, which a staged plan's is not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pricebook.schema import GpuId
from solver.analysis.whatif import Solve
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import ChosenOption, FleetSolution
from solver.planner.results import Baseline, Sensitivity
from solver.planner.sensitivity import sensitivity_rows


def horizon_fleet(solutions: Sequence[FleetSolution]) -> FleetSolution:
    """The plan over the horizon as one solution: the final year's, each option held at its
    largest in any year (its mix: every (GPU type, mode) held in some year)."""
    largest: dict[str, ChosenOption] = {}
    for solution in solutions:
        for c in solution.options:
            kept = largest.get(c.option_id)
            if kept is None or (c.peak_gpus, c.gpus) > (kept.peak_gpus, kept.gpus):
                largest[c.option_id] = c
    return dataclasses.replace(solutions[-1], options=tuple(largest.values()))


def staged_sensitivity(
    base: FleetInstance,
    solutions: Sequence[FleetSolution],
    baselines: Sequence[Baseline],
    solve: Solve,
    *,
    deadline: float,
) -> tuple[Sensitivity, ...]:
    """The price rows of the staged plan ``solutions`` on ``base`` (the module docstring) until
    ``deadline``; ``solve`` is a staged re-solve of a base instance, its plan as ``horizon_fleet``."""

    def alternative_of(planned: list[GpuId]) -> GpuId | None:
        outside = [
            (b.horizon_tco.amount, b.gpu)
            for b in baselines
            if b.feasible and b.horizon_tco is not None and b.gpu not in planned
        ]
        return min(outside)[1] if outside else None

    return sensitivity_rows(
        base, horizon_fleet(solutions), (), solve, deadline, alternative_of=alternative_of, linear=False
    )
