"""SweepPlans (``solver.planner.sweep``): streamed points, cancellation, validation and the Pareto
frontier."""

from __future__ import annotations

import threading
from dataclasses import replace
from decimal import Decimal

import pytest
from planner_factories import BARE, GPUS, budget_request, request, small_chat_request

from pricebook.schema import Money, Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    ModelRef,
    PlanRequest,
    TrainingMethod,
    TrainingWorkload,
)
from solver.errors import InvalidRequest, SolveCancelled
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import SolveStatus
from solver.planner import (
    PlanResult,
    PreparedSweep,
    SweepAxis,
    SweepFrontier,
    SweepPoint,
    frontier,
    prepare_sweep,
    sweep,
    sweep_request,
)
from solver.resolve import resolve


def _prepared(
    req: PlanRequest, book: Pricebook, axis: SweepAxis, values: list[float], workload: str | None = None
) -> PreparedSweep:
    return prepare_sweep(resolve(req, book), axis, values, workload)


def test_sweep_streams_points_with_progress_and_a_monotone_frontier(
    book: Pricebook, full_plan: PlanResult
) -> None:
    assert full_plan.tco is not None
    capex = float(full_plan.tco.total.capex.amount)
    budgets = [capex * f for f in (0.6, 0.8, 1.0, 1.3, 1.8)]
    events = list(
        sweep(_prepared(budget_request(), book, SweepAxis.CAPEX_BUDGET, budgets), time_limit_s_per_point=10)
    )
    points = [e for e in events if isinstance(e, SweepPoint)]
    assert len(points) == len(budgets)
    assert [p.points_done for p in points] == list(range(1, len(budgets) + 1))
    assert all(p.points_total == len(budgets) for p in points)
    assert sorted(p.index for p in points) == list(range(len(budgets)))
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    assert [p.value for p in frontier.points] == sorted(budgets)
    # A bigger budget never forces a dearer plan: TCO is non-increasing in the budget.
    costs = [p.horizon_tco.amount for p in frontier.points if p.horizon_tco is not None]
    assert costs == sorted(costs, reverse=True)
    # The unconstrained optimum's capex fits the budgets ≥ 1.0×, which all cost the optimum's TCO.
    for p in frontier.points:
        if p.value >= capex and p.horizon_tco is not None and full_plan.horizon_tco is not None:
            assert abs(p.horizon_tco.amount - full_plan.horizon_tco.amount) <= Decimal("0.05")
    pareto = frontier.pareto
    assert pareto and [p.value for p in pareto] == sorted(p.value for p in pareto)


def test_cancelled_sweep_stops_early(book: Pricebook) -> None:
    cancel = CancelToken()
    values = [1.0 + 0.1 * i for i in range(12)]
    seen: list[SweepPoint] = []
    with pytest.raises(SolveCancelled):
        for event in sweep(
            _prepared(budget_request(), book, SweepAxis.DEMAND_MULTIPLIER, values), cancel=cancel
        ):
            if isinstance(event, SweepPoint):
                seen.append(event)
                cancel.cancel()
    assert 1 <= len(seen) < len(values)
    assert not [t for t in threading.enumerate() if t.name.startswith("sweep")]


def test_sla_sweep_rebuilds_candidates(book: Pricebook) -> None:
    req = small_chat_request(BARE)
    events = list(sweep(_prepared(req, book, SweepAxis.TPOT_P95_MS, [15.0, 50.0])))
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    strict, loose = frontier.points
    assert strict.horizon_tco is not None and loose.horizon_tco is not None
    # A looser latency target can only widen the deployments that qualify: never dearer.
    assert loose.horizon_tco.amount <= strict.horizon_tco.amount
    # The strict target needs different (more) hardware here, so the SLA really reached the model.
    assert strict.fleet_summary != loose.fleet_summary


def test_sweep_refuses_meaningless_input(book: Pricebook) -> None:
    with pytest.raises(InvalidRequest) as bad:
        _prepared(request(**BARE), book, SweepAxis.TPOT_P95_MS, [30.0, -5.0], workload="nope")
    fields = {v.field for v in bad.value.violations}
    assert fields == {"values[1]", "workload_name"}


def test_sweep_refuses_points_beyond_the_request_limits(book: Pricebook) -> None:
    # 1e300 × 2e9 daily tokens overflows every limit: refused before any solve, per point.
    with pytest.raises(InvalidRequest) as bad:
        _prepared(request(**BARE), book, SweepAxis.DEMAND_MULTIPLIER, [1.0, 1e300])
    assert {v.field for v in bad.value.violations} == {"values[1]"}
    assert "daily_tokens" in bad.value.violations[0].reason


def test_frontier_marks_pareto_points(full_plan: PlanResult) -> None:
    def at(cost: int | None) -> PlanResult:
        if cost is None:
            return replace(full_plan, tco=None, status=SolveStatus.INFEASIBLE)
        assert full_plan.tco is not None
        total = replace(full_plan.tco.total, horizon_total=Money(amount=Decimal(cost), currency="USD"))
        return replace(full_plan, tco=replace(full_plan.tco, total=total))

    # Capex budget: less capital is better. 300 buys nothing over 200; 400 has no plan.
    budget = frontier(
        SweepAxis.CAPEX_BUDGET, [(300.0, at(40)), (100.0, at(50)), (200.0, at(40)), (400.0, at(None))]
    )
    assert [(p.value, p.pareto_optimal) for p in budget.points] == [
        (100.0, True),
        (200.0, True),
        (300.0, False),
        (400.0, False),
    ]
    # Demand: more demand served is better. ×2 costs as much as ×3, so only ×1 and ×3 are efficient.
    demand = frontier(SweepAxis.DEMAND_MULTIPLIER, [(1.0, at(10)), (2.0, at(15)), (3.0, at(15))])
    assert [p.pareto_optimal for p in demand.points] == [True, False, True]


def test_frontier_point_without_a_plan_says_why(book: Pricebook, full_plan: PlanResult) -> None:
    assert full_plan.tco is not None
    capex = float(full_plan.tco.total.capex.amount)
    buy_only = budget_request().model_copy(
        update={
            "constraints": Constraints(
                currency="USD", allowed_gpus=GPUS, allowed_modes=(AcquisitionMode.BUY,)
            )
        }
    )
    events = list(
        sweep(_prepared(buy_only, book, SweepAxis.CAPEX_BUDGET, [capex * 0.2]), time_limit_s_per_point=10)
    )
    frontier = events[-1]
    assert isinstance(frontier, SweepFrontier)
    (point,) = frontier.points
    assert point.horizon_tco is None
    assert point.fleet_summary.startswith("No plan (infeasible).") and "capex budget" in point.fleet_summary


def test_demand_multiplier_scales_inference_and_leaves_training_as_it_is() -> None:
    tuning = TrainingWorkload(
        name="tune",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        method=TrainingMethod.LORA,
        tokens_per_run=1e9,
        runs_per_month=2.0,
    )
    base = request().model_copy(update={"training": (tuning,)})
    scaled = sweep_request(base, SweepAxis.DEMAND_MULTIPLIER, 2.0)
    assert scaled.training == base.training
    for before, after in zip(base.inference, scaled.inference, strict=True):
        if before.daily_tokens is not None:
            assert after.daily_tokens == before.daily_tokens * 2
        else:
            assert after.peak_request_rate_per_s == pytest.approx(2 * (before.peak_request_rate_per_s or 0))
