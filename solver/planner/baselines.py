"""Baselines of a plan: what is owned plus the best fleet of each allowed GPU type alone (or why
none exists), priced exactly like the plan, and the plan's saving over the best of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pricebook.schema import GpuId, Money
from solver.analysis.cash_flows import cash_flows, lease_by_year
from solver.analysis.tco import FleetTco
from solver.analysis.whatif import BaselineRun, Solve, describe_fleet, run_baselines
from solver.domain import CostObjective, PlanRequest
from solver.errors import SolveCancelled
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.assemble import fleet_lines, plan_fleet_lines, solution_tco
from solver.planner.results import Baseline, BaselineSaving, PlanFleetLine


def solve_baselines(
    instance: FleetInstance,
    gpus: tuple[GpuId, ...],
    solve: Solve,
    deadline: float,
    warnings: list[str],
    *,
    diagnose: Solve | None = None,
) -> tuple[BaselineRun, ...]:
    """The single-GPU re-solves within ``deadline``; none (and a warning) when the call is cancelled.
    ``diagnose`` explains a type no fleet of which meets the request (the caps it binds)."""
    try:
        return run_baselines(instance, gpus, solve, deadline=deadline, diagnose=diagnose)
    except SolveCancelled:
        warnings.append("baselines not computed: the call was cancelled")
        return ()


def _measure(request: PlanRequest) -> Callable[[FleetSolution, FleetInstance, FleetTco], Money]:
    """What the plans are compared on: the horizon TCO, or under objective npv (a rate given) the
    NPV of the yearly cash flows, as the plan was chosen."""
    constraints = request.constraints
    rate = constraints.objective_discount_rate
    if not rate:  # the nominal objective, or 0 %: the NPV is the TCO
        return lambda _solution, _instance, tco: tco.total.horizon_total

    def npv(solution: FleetSolution, instance: FleetInstance, tco: FleetTco) -> Money:
        leases = lease_by_year(fleet_lines(solution, instance), constraints.currency)
        return cash_flows(tco.total, rate, CostObjective.NPV, leases).npv

    return npv


def price_baselines(
    runs: Sequence[BaselineRun], solution: FleetSolution, request: PlanRequest, instance: FleetInstance
) -> tuple[tuple[Baseline, ...], BaselineSaving | None]:
    """Baselines priced exactly like the plan (the same rounded TCO report), and the saving on the
    plan's own measure (``_measure``: the TCO, or the NPV under objective npv)."""
    currency = request.constraints.currency
    measure = _measure(request)
    plan_total = measure(solution, instance, solution_tco(solution, instance, currency))
    result: list[Baseline] = []
    for run in runs:
        fleet: tuple[PlanFleetLine, ...] = ()
        total: Money | None = None
        capex: Money | None = None
        if run.feasible and run.solution is not None and run.instance is not None:
            tco = solution_tco(run.solution, run.instance, currency)
            fleet = plan_fleet_lines(run.solution, run.instance, tco, currency)
            total = tco.total.horizon_total
            value = measure(run.solution, run.instance, tco)
            capex = tco.total.capex
        result.append(
            Baseline(
                gpu=run.gpu,
                feasible=run.feasible,
                fleet=fleet,
                horizon_tco=total,
                extra_cost=Money(amount=value.amount - plan_total.amount, currency=currency)
                if total
                else None,
                reason=run.reason,
                fleet_summary=describe_fleet(run.solution) if run.solution is not None else "",
                capex=capex,
                binding_caps=run.binding,
            )
        )
    return tuple(result), saving_over(result, plan_total, request)


def saving_over(
    baselines: Sequence[Baseline], plan_total: Money, request: PlanRequest
) -> BaselineSaving | None:
    """The plan's saving over the cheapest priced baseline (each priced as plan + its extra cost)."""
    priced = [(b.extra_cost.amount + plan_total.amount, b.gpu) for b in baselines if b.extra_cost is not None]
    if not priced:
        return None
    best_total, best_gpu = min(priced)
    saving = best_total - plan_total.amount
    return BaselineSaving(
        best_baseline_gpu=best_gpu,
        saving=Money(amount=saving, currency=plan_total.currency),
        saving_fraction=float(saving / best_total) if best_total > 0 else 0.0,
        in_npv=bool(request.constraints.objective_discount_rate),  # at 0 % the NPV is the TCO
    )
