"""Properties of disaggregated serving in the plan (issue 33), with the performance model.

Hypothesis with fixed seeds over random long-prompt MoE chat requests (Qwen3-235B-A22B on B200 and
H200, and Qwen3-30B-A3B on one GPU type; FP8, buy only): allowing disaggregation never makes a plan
dearer; a plan with disaggregated units passes the independent check (capacities recomputed by
``estimate_disagg``, not the candidates'); on one GPU type with a loose TTFT the plan is the cheaper
of aggregated-only and disaggregated-only serving, and aggregated when that is cheaper."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pricebook.schema import Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Engine,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
)
from solver.optimizer.api import solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution, perf_capacity_checker
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.planner.evaluate import evaluate
from solver.planner.plan import plan
from solver.resolve import resolve

pytestmark = pytest.mark.slow
GAP = 1e-6
MOE = "Qwen/Qwen3-235B-A22B"


def _request(
    rate: float, sla: Sla, gpus: tuple[str, ...], *, allow: bool, model: str = "Qwen/Qwen3-30B-A3B"
) -> PlanRequest:
    chat = InferenceWorkload(
        name="rag",
        model=ModelRef(model_id=model),
        precision=Precision.FP8,
        engine=Engine.TRTLLM,
        input_tokens=6000,
        output_tokens=300,
        peak_request_rate_per_s=rate,
        sla=sla,
        allow_disaggregation=allow,
    )
    return PlanRequest(
        inference=(chat,),
        constraints=Constraints(allowed_gpus=gpus, allowed_modes=(AcquisitionMode.BUY,)),
    )


def _solved(instance: FleetInstance, request: PlanRequest, book: Pricebook) -> FleetSolution:
    checker = perf_capacity_checker(request, book)
    solution = solve(instance, time_limit_s=60, relative_gap=GAP, capacity_of=checker, explain=False)
    assert solution.status is SolveStatus.OPTIMAL, solution.stats
    return solution


def _units_used(solution: FleetSolution) -> bool:
    return any(u.candidate.unit is not None and any(u.replicas) for a in solution.assignments for u in a.uses)


def _only(instance: FleetInstance, *, units: bool) -> FleetInstance:
    kept = tuple(c for c in instance.candidates if (c.unit is not None) == units)
    return dataclasses.replace(instance, candidates=kept)


@seed(3301)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rate=st.floats(1.0, 40.0),
    ttft_ms=st.floats(1500.0, 6000.0),
    tpot_ms=st.floats(12.0, 40.0),
)
def test_allowing_disaggregation_never_makes_a_plan_dearer_and_its_plan_passes_the_check(
    book: Pricebook, rate: float, ttft_ms: float, tpot_ms: float
) -> None:
    sla = Sla(ttft_p95_ms=ttft_ms, tpot_p95_ms=tpot_ms)
    gpus = ("b200", "h200-sxm")
    allowed = _request(rate, sla, gpus, allow=True, model=MOE)
    instance = build_instance(allowed, book)
    with_units = _solved(instance, allowed, book)
    forbidden = _request(rate, sla, gpus, allow=False, model=MOE)
    without = _solved(build_instance(forbidden, book), forbidden, book)
    assert with_units.cost is not None and without.cost is not None
    assert with_units.cost.total <= without.cost.total * (1 + 2 * GAP)
    assert check_solution(instance, with_units, perf_capacity_checker(allowed, book)) == []


@seed(3302)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rate=st.floats(0.5, 30.0), tpot_ms=st.floats(20.0, 60.0))
def test_on_one_gpu_type_with_a_loose_ttft_the_plan_is_the_cheaper_way_aggregated_when_cheaper(
    book: Pricebook, rate: float, tpot_ms: float
) -> None:
    request = _request(rate, Sla(ttft_p95_ms=30_000, tpot_p95_ms=tpot_ms), ("h200-sxm",), allow=True)
    instance = build_instance(request, book)
    plan = _solved(instance, request, book)
    aggregated = _solved(_only(instance, units=False), request, book)
    disaggregated = _solved(_only(instance, units=True), request, book)
    assert plan.cost is not None and aggregated.cost is not None and disaggregated.cost is not None
    cheapest = min(aggregated.cost.total, disaggregated.cost.total)
    assert plan.cost.total == pytest.approx(cheapest, rel=2 * GAP)
    if aggregated.cost.total < disaggregated.cost.total * (1 - 2 * GAP):
        assert not _units_used(plan)


def test_a_long_prompt_moe_chat_plan_disaggregates_and_passes_the_check(book: Pricebook) -> None:
    """The case the properties are about happens: a plan with units, checked afresh."""
    sla = Sla(ttft_p95_ms=3000, tpot_p95_ms=15)
    request = _request(20.0, sla, ("b200", "h200-sxm"), allow=True, model=MOE)
    instance = build_instance(request, book)
    plan = _solved(instance, request, book)
    assert _units_used(plan)
    assert check_solution(instance, plan, perf_capacity_checker(request, book)) == []


def test_evaluate_fleet_accepts_the_fleet_of_a_disaggregated_plan(book: Pricebook) -> None:
    """EvaluateFleet on the plan's own fleet: feasible, served by units, at the plan's TCO."""
    sla = Sla(ttft_p95_ms=3000, tpot_p95_ms=15)
    request = _request(20.0, sla, ("b200", "h200-sxm"), allow=True, model=MOE)
    resolved = resolve(request, book)
    planned = plan(resolved, time_limit_s=60)
    assert planned.disaggregation is not None and planned.disaggregation.saving is not None
    assert planned.disaggregation.saving.amount > 0
    items = tuple(
        FleetItem(gpu=f.gpu, mode=f.mode, count=f.gpus, server=f.server_id, offer=f.offer_id)
        for f in planned.fleet
    )
    evaluated = evaluate(Fleet(items=items), resolved, time_limit_s=60)
    assert evaluated.feasible, evaluated.messages
    assert _units_used(evaluated.plan.solution)
    assert evaluated.fleet_horizon_tco == planned.horizon_tco
