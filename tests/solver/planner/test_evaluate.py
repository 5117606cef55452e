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


def test_a_fleet_that_does_not_fill_whole_servers_says_so(book: Pricebook) -> None:
    # H100 SXM is bought only as 8-GPU HGX servers: 9 GPUs cannot be held, and without training
    # workloads the answer must not blame training (it did after the round-3 merges).
    inference_only = request(**BARE).model_copy(update={"training": ()})
    fleet = Fleet(items=(FleetItem(gpu="h100-sxm", mode="buy", count=9),))
    result = evaluate(fleet, resolve(inference_only, book), time_limit_s=10)
    assert not result.feasible
    assert not any("training" in m for m in result.messages)
    assert any("whole servers" in m for m in result.messages)
    whole = Fleet(items=(FleetItem(gpu="h100-sxm", mode="buy", count=16),))
    assert not any(
        "whole servers" in m for m in evaluate(whole, resolve(inference_only, book), time_limit_s=10).messages
    )
