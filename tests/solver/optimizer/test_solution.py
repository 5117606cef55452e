"""Raw MIP values turned into a FleetSolution, and its statistics in the plan's own terms."""

from __future__ import annotations

from opt_factories import (
    two_gpu_instance,
)

from solver.optimizer import SolveStatus, solve


def test_reported_objective_is_the_plans_tco_without_the_tie_break_term() -> None:
    # The MIP adds 1e-7 cost units per GPU to break ties; the plan's statistics must not show it.
    sol = solve(two_gpu_instance(25.0), time_limit_s=10)
    assert sol.status is SolveStatus.OPTIMAL and sol.cost is not None
    assert sol.stats.objective == sol.cost.total
    assert sol.stats.best_bound == sol.cost.total
