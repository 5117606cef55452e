"""Result types: the cost split's total, peak GPU counts, the plan as a fleet."""

from __future__ import annotations

import pytest
from opt_factories import ALL_DAY

from solver.domain import AcquisitionMode
from solver.optimizer.results import (
    ChosenOption,
    CostSplit,
    FleetSolution,
    LimitFired,
    SolverStats,
    SolveStatus,
)

TWO_BUCKETS = ALL_DAY * 2


def _plan(*options: ChosenOption) -> FleetSolution:
    stats = SolverStats("scip", SolveStatus.OPTIMAL, 1.0, 1.0, 0.0, 0.1, LimitFired.NONE, 1, 1)
    return FleetSolution(
        status=SolveStatus.OPTIMAL,
        stats=stats,
        currency="USD",
        horizon_months=12,
        buckets=TWO_BUCKETS,
        options=options,
    )


def test_cost_split_total_is_capex_less_residual_plus_the_months() -> None:
    split = CostSplit(capex=1000.0, residual=200.0, fixed_monthly=10.0, busy_monthly=5.0, horizon_months=12)
    assert split.total == pytest.approx(1000 - 200 + 15 * 12)


def test_gpu_counts_and_fleet_take_on_demand_at_its_peak_bucket() -> None:
    plan = _plan(
        ChosenOption("a/buy", "a", AcquisitionMode.BUY, owned=False, gpus=2, servers=2),
        ChosenOption(
            "a/od", "a", AcquisitionMode.ON_DEMAND, owned=False, gpus=0, servers=0, on_demand_gpus=(1, 3)
        ),
    )
    assert plan.has_plan
    assert plan.gpu_counts() == {"a": 5}
    fleet = plan.fleet()
    assert fleet is not None
    assert [(i.mode, i.count) for i in fleet.items] == [
        (AcquisitionMode.BUY, 2),
        (AcquisitionMode.ON_DEMAND, 3),
    ]


def _stopped(objective: float, bound: float | None) -> SolverStats:
    """A solve the time limit stopped at ``objective``, asked for a 1e-4 gap."""
    gap = None if bound is None else (objective - bound) / objective
    return SolverStats(
        "scip", SolveStatus.FEASIBLE, objective, bound, gap, 1.0, LimitFired.TIME, 1, 1, 1.0, 1e-4
    )


def test_restated_statistics_recompute_the_gap_against_the_same_bound() -> None:
    stats = _stopped(200.0, 150.0).restated(180.0, 150.0)
    assert (stats.objective, stats.best_bound, stats.status) == (180.0, 150.0, SolveStatus.FEASIBLE)
    assert stats.gap == pytest.approx(30.0 / 180.0)
    assert stats.limit_fired is LimitFired.TIME and stats.seconds == 1.0


def test_a_plan_within_the_requested_gap_of_the_bound_is_optimal_and_the_bound_never_exceeds_it() -> None:
    within = _stopped(200.0, 150.0).restated(150.01, 150.0)
    assert within.status is SolveStatus.OPTIMAL and within.gap == pytest.approx(0.01 / 150.01)
    below = _stopped(200.0, 150.0).restated(149.0, 150.0)  # a bound above the plan is the plan's cost
    assert (below.best_bound, below.gap, below.status) == (149.0, 0.0, SolveStatus.OPTIMAL)


def test_without_a_bound_the_gap_stays_unknown() -> None:
    stats = _stopped(200.0, None).restated(180.0, None)
    assert stats.best_bound is None and stats.gap is None and stats.gap_unknown
    assert stats.status is SolveStatus.FEASIBLE
