"""The planner: what the service calls for PlanFleet, EvaluateFleet, AnalyzeBreakEven, SweepPlans.

One module per pipeline, all answering with the frozen dataclasses of ``results`` (money is
Decimal ``Money``). Every entry point takes a ``solver.resolve.ResolvedRequest`` (aliases → ids,
overrides applied, references checked: once, by ``solver.resolve.resolve``); nothing here
resolves or applies overrides again.

``plan.plan(resolved, *, time_limit_s, cancel)`` — PlanFleet:

1. build the optimizer instance once (performance model → candidates, pricing → options);
2. solve it (``solver.optimizer.api.solve``: verified plan, runner-ups, or an infeasibility diagnosis);
3. ``assemble``: TCO breakdown, the plan's rows (``rows``: one per deployment group and per
   workload, which every consumer copies), unit costs, the break-even section (``plan_break_even``: buy vs
   rent, self-host vs API), uncertainty band, what was turned away, ``summary`` text and warnings;
4. ``baselines``: GPUs already owned + the best fleet of each allowed GPU type alone (or why none
   exists), and the plan's saving over the best of them;
5. ``headroom``: how much more demand the plan's fleet carries at the SLA — every workload
   together and each alone — found by the evaluator on that fixed fleet, and the cheapest addition
   for the next step of growth (``solver.analysis.headroom``);
6. ``sensitivity``: how far each planned GPU type's price (and the strongest alternative's) must
   move before the mix changes (``solver.analysis.whatif``): price-flip thresholds, not headroom.

Steps 4–6 re-solve the same instance with small changes, within the caller's time limit, shared
by ``solver.budget.DEFAULT_BUDGET`` (the main solve gets up to ``main_solve`` of it, the rest is
shared by baselines, headroom and sensitivity); what does not fit says so in the result, and the
result's ``stages`` say what each step used.

Also: ``evaluate.evaluate`` (EvaluateFleet: a given fleet vs the optimum),
``break_even.analyze_break_even`` (AnalyzeBreakEven: the break-even section for one GPU type, a
fleet, or the optimal plan) and ``sweep.prepare_sweep`` + ``sweep.sweep`` (SweepPlans: the
sweep checked and every point's request built once, then one plan per value of a capex budget,
demand multiplier or SLA target, ≤ 2 solved at once, streamed with progress, then the Pareto
frontier).

Inside the package each module imports only those listed before it: results; summary,
plan_break_even, rows; assemble; baselines, sensitivity, headroom; plan; evaluate, sweep; break_even.
"""

from solver.analysis.headroom import Headroom, WorkloadHeadroom
from solver.planner.break_even import analyze_break_even
from solver.planner.evaluate import evaluate
from solver.planner.plan import plan
from solver.planner.results import (
    Baseline,
    BaselineSaving,
    BreakEvenAnalysis,
    BreakEvenResult,
    DeploymentLine,
    EvaluationResult,
    FrontierPoint,
    PlanFleetLine,
    PlanResult,
    Sensitivity,
    SweepAxis,
    SweepFrontier,
    SweepPoint,
    UncertaintyBand,
    WorkloadGroupUse,
    WorkloadLine,
)
from solver.planner.sweep import (
    PreparedSweep,
    frontier,
    prepare_sweep,
    sweep,
    sweep_request,
    sweep_values,
    value_violations,
)

__all__ = [
    "Baseline",
    "BaselineSaving",
    "BreakEvenAnalysis",
    "BreakEvenResult",
    "DeploymentLine",
    "EvaluationResult",
    "FrontierPoint",
    "Headroom",
    "PlanFleetLine",
    "PlanResult",
    "PreparedSweep",
    "Sensitivity",
    "SweepAxis",
    "SweepFrontier",
    "SweepPoint",
    "UncertaintyBand",
    "WorkloadGroupUse",
    "WorkloadHeadroom",
    "WorkloadLine",
    "analyze_break_even",
    "evaluate",
    "frontier",
    "plan",
    "prepare_sweep",
    "sweep",
    "sweep_request",
    "sweep_values",
    "value_violations",
]
