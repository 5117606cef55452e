"""EvaluateFleet (``solver.planner.evaluate``): a given fleet against the optimum."""

from __future__ import annotations

from decimal import Decimal

from planner_factories import BARE, request

from pricebook.schema import Pricebook
from solver.domain import Fleet, FleetItem
from solver.planner import PlanResult, evaluate
from solver.resolve import resolve


def test_evaluate_a_given_fleet(book: Pricebook, full_plan: PlanResult) -> None:
    fleet = Fleet(items=(FleetItem(gpu="h200-sxm", mode="buy", count=24),))
    result = evaluate(fleet, resolve(request(**BARE), book), time_limit_s=10)
    assert result.feasible
    assert result.fleet_horizon_tco is not None and result.optimal_horizon_tco is not None
    assert result.saving_of_optimal is not None
    assert (
        result.saving_of_optimal.amount == result.fleet_horizon_tco.amount - result.optimal_horizon_tco.amount
    )
    assert result.saving_of_optimal.amount > 0  # 24 H200s are more than the optimum needs
    assert {line.gpu for line in result.plan.fleet} == {"h200-sxm"}
    # The optimum is priced like a plan (same rounded report): it is the plan's TCO up to the
    # rounding of its lines (the re-solve may split the same GPUs over other options; each line's
    # monthly amounts are rounded to the cent, then times the horizon), and the message quotes the
    # same saving as the field.
    assert full_plan.horizon_tco is not None
    lines = len(full_plan.fleet) + len(result.plan.fleet)
    rounding = Decimal("0.005") * (full_plan.horizon_months + 1) * lines
    assert abs(result.optimal_horizon_tco.amount - full_plan.horizon_tco.amount) <= rounding
    saving_text = f"{result.saving_of_optimal.amount:,} {result.saving_of_optimal.currency}"
    assert f"the optimal plan costs {saving_text} less over the horizon" in result.messages
