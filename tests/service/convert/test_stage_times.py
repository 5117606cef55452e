"""The answer's solver statistics carry what each stage of the call used (``solver.budget``)."""

from __future__ import annotations

from service.convert.plan import solver_stats_to_proto
from solver.budget import StageTime
from solver.optimizer.results import LimitFired, SolverStats, SolveStatus


def test_stage_times_reach_the_wire_in_order() -> None:
    stats = SolverStats(
        backend="scip",
        status=SolveStatus.OPTIMAL,
        objective=100.0,
        best_bound=100.0,
        gap=0.0,
        seconds=1.0,
        limit_fired=LimitFired.NONE,
        variables=1,
        constraints=1,
    )
    stages = (StageTime("main_solve", 1.25, 1.5, 7.0), StageTime("sensitivity", 0.5, 0.75))
    wire = solver_stats_to_proto(stats, 3, stages)
    assert [(s.stage, s.wall_seconds, s.cpu_seconds, s.allotted_seconds) for s in wire.stages] == [
        ("main_solve", 1.25, 1.5, 7.0),
        ("sensitivity", 0.5, 0.75, 0.0),
    ]
    assert not solver_stats_to_proto(stats).stages
