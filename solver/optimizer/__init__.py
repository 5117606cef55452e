"""Fleet optimizer: the MIP that picks GPUs, counts and acquisition modes (DESIGN §4).

Public API (``solver.optimizer``): ``optimize``, ``evaluate_fleet``, ``solve`` (on a built
``FleetInstance``), ``check_solution`` (the independent evaluator), ``CancelToken`` and the
result types in ``solver.optimizer.results``.

Modules, in the order a request meets them: ``candidates`` (request → ``instance.FleetInstance``:
deployments measured by the performance model, options priced), ``model`` (the MIP's builder and
its mathematics), ``driver`` (backend, run, status, tie-break; ``lp_guided`` beside it),
``solution`` (values → ``FleetSolution``), ``evaluate`` (the independent check), ``explain``
(diagnoses, runner-ups), ``fleet_eval`` (a given fleet), ``api`` (the entry points above);
``caps`` names the caps. Benchmarks and what was tried: ``docs/optimizer.md``.
"""

from solver.optimizer.api import evaluate_fleet, optimize, solve
from solver.optimizer.cancel import CancelToken
from solver.optimizer.evaluate import check_solution
from solver.optimizer.instance import (
    Bucket,
    Candidate,
    CandidateRejection,
    Caps,
    CountLimit,
    FleetInstance,
    InferenceDemand,
    TrainingChoice,
    TrainingDemand,
)
from solver.optimizer.results import (
    Assignment,
    CapRelaxation,
    ChosenOption,
    CostSplit,
    DeploymentUse,
    Diagnosis,
    FleetEvaluation,
    FleetSolution,
    LimitFired,
    RunnerUp,
    SolverStats,
    SolveStatus,
    TrainingAllocation,
    UnservableWorkload,
    Violation,
    ViolationKind,
    WorkloadFit,
)

__all__ = [
    "Assignment",
    "Bucket",
    "CancelToken",
    "Candidate",
    "CandidateRejection",
    "CapRelaxation",
    "Caps",
    "ChosenOption",
    "CostSplit",
    "CountLimit",
    "DeploymentUse",
    "Diagnosis",
    "FleetEvaluation",
    "FleetInstance",
    "FleetSolution",
    "InferenceDemand",
    "LimitFired",
    "RunnerUp",
    "SolveStatus",
    "SolverStats",
    "TrainingAllocation",
    "TrainingChoice",
    "TrainingDemand",
    "UnservableWorkload",
    "Violation",
    "ViolationKind",
    "WorkloadFit",
    "check_solution",
    "evaluate_fleet",
    "optimize",
    "solve",
]
