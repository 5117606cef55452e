"""Static deployments (``constraints.deployment_policy``, ``solver.optimizer.static``): held GPUs
keep one set of replicas all day, on-demand replicas may follow the hours; static is the default
for buy-only requests, and a static plan is never cheaper than the hourly plan of the same request
(hypothesis; fixed seeds in CI)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    DeploymentPolicy,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    SolverOptions,
)
from solver.optimizer import FleetSolution, SolveStatus, evaluate_fleet, optimize
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution
from solver.optimizer.results import ViolationKind

BOOK = load_default()
BUY, OD, RSV = AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND, AcquisitionMode.RESERVED
PROFILE = tuple(0.2 + (h if h < 12 else 24 - h) / 12 for h in range(24))
EXACT = SolverOptions(relative_gap=0.0, time_limit_s=30, compute_baselines=False, compute_sensitivity=False)
GPUS = ("h100-sxm", "l40s", "a100-sxm-80gb", "rtx-pro-6000-server")
MODELS = ("Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-8B")
SMALL_MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B")
SMALL_DEMAND = 2 * 10**7
"""Tokens a day a fraction of one card serves: such a small model may be a guest on another's card."""


def _request(
    workloads: tuple[InferenceWorkload, ...],
    gpus: tuple[str, ...],
    modes: tuple[AcquisitionMode, ...],
    policy: DeploymentPolicy | None,
) -> PlanRequest:
    limits = Constraints(currency="USD", allowed_gpus=gpus, allowed_modes=modes, deployment_policy=policy)
    return PlanRequest(inference=workloads, constraints=limits, options=EXACT)


def _plan(request: PlanRequest) -> FleetSolution:
    return optimize(request, BOOK, time_limit_s=30, options_override=EXACT)


def _tco(solution: FleetSolution) -> Decimal:
    assert solution.cost is not None
    return Decimal(str(solution.cost.total))


def _chat(
    name: str, model: str, daily_tokens: int, profile: tuple[float, ...] = PROFILE, redundancy: int = 0
) -> InferenceWorkload:
    return InferenceWorkload(
        name=name,
        model=ModelRef(model_id=model),
        input_tokens=1000,
        output_tokens=300,
        daily_tokens=daily_tokens,
        hourly_profile=profile,
        redundancy=redundancy,
    )


TWO = (
    _chat("day", "Qwen/Qwen3-14B", 3_000_000_000),
    _chat("night", "meta-llama/Llama-3.1-70B", 1_000_000_000, tuple(reversed(PROFILE))),
)


def test_static_is_the_default_for_buy_only_requests() -> None:
    assert Constraints(allowed_modes=(BUY,)).static_deployment
    assert not Constraints(allowed_modes=(BUY, OD)).static_deployment
    assert not Constraints(allowed_modes=(RSV,)).static_deployment
    assert not Constraints(allowed_modes=(BUY,), deployment_policy=DeploymentPolicy.HOURLY).static_deployment
    assert Constraints(allowed_modes=(BUY, OD), deployment_policy=DeploymentPolicy.STATIC).static_deployment


def test_a_buy_only_plan_runs_the_same_replicas_every_hour() -> None:
    request = _request(TWO, ("h100-sxm", "l40s"), (BUY,), None)
    plan = _plan(request)
    assert plan.status is SolveStatus.OPTIMAL
    uses = [use for a in plan.assignments for use in a.uses]
    assert uses
    assert all(len(set(use.replicas)) == 1 for use in uses), [(u.candidate.id, u.replicas) for u in uses]
    assert not check_solution(build_instance(request, BOOK), plan)


def test_a_static_plan_rents_the_hourly_replicas_on_demand() -> None:
    request = _request(TWO, ("h100-sxm", "l40s"), (BUY, OD), DeploymentPolicy.STATIC)
    plan = _plan(request)
    assert plan.status is SolveStatus.OPTIMAL
    held = {o.gpu for o in plan.options if o.mode is BUY and o.gpus}
    assert held
    for a in plan.assignments:
        for use in a.uses:
            fixed = plan.static_replicas.get(use.candidate.id, 0)
            assert all(count >= fixed for count in use.replicas)
    assert not check_solution(build_instance(request, BOOK), plan)


@pytest.mark.parametrize("modes", [(BUY,), (BUY, OD)])
def test_a_static_plans_own_fleet_evaluates_at_its_tco(modes: tuple[AcquisitionMode, ...]) -> None:
    request = _request(TWO, ("h100-sxm", "l40s"), modes, DeploymentPolicy.STATIC)
    plan = _plan(request)
    fleet = plan.fleet()
    assert plan.status is SolveStatus.OPTIMAL and fleet is not None
    evaluation = evaluate_fleet(fleet, request, BOOK, time_limit_s=30, compare_optimal=False)
    assert evaluation.feasible, evaluation.messages
    assert evaluation.tco is not None
    assert abs(Decimal(str(evaluation.tco)) - _tco(plan)) <= Decimal("0.01")


def test_the_evaluator_refuses_an_hourly_plan_where_static_is_asked() -> None:
    hourly = _plan(_request(TWO, ("h100-sxm", "l40s"), (BUY,), DeploymentPolicy.HOURLY))
    assert hourly.status is SolveStatus.OPTIMAL
    assert any(len(set(use.replicas)) > 1 for a in hourly.assignments for use in a.uses)
    static_instance = build_instance(
        _request(TWO, ("h100-sxm", "l40s"), (BUY,), DeploymentPolicy.STATIC), BOOK
    )
    kinds = {v.kind for v in check_solution(static_instance, hourly)}
    assert ViolationKind.STATIC in kinds
    # Claiming more static replicas than an hour runs is refused too.
    static = _plan(_request(TWO, ("h100-sxm", "l40s"), (BUY,), DeploymentPolicy.STATIC))
    key, count = next(iter(static.static_replicas.items()))
    inflated = dataclasses.replace(static, static_replicas={**static.static_replicas, key: count + 1})
    assert ViolationKind.STATIC in {v.kind for v in check_solution(static_instance, inflated)}


@st.composite
def requests(
    draw: st.DrawFn,
) -> tuple[tuple[InferenceWorkload, ...], tuple[str, ...], tuple[AcquisitionMode, ...]]:
    count = draw(st.integers(1, 2))
    profile = PROFILE if draw(st.booleans()) else tuple(reversed(PROFILE))
    workloads = tuple(
        _chat(
            f"w{i}",
            draw(st.sampled_from(MODELS)),
            draw(st.sampled_from((SMALL_DEMAND, 10**8, 10**9, 5 * 10**9))),
            profile if i == 0 or draw(st.booleans()) else tuple(reversed(profile)),
            draw(st.integers(0, 1)),
        )
        for i in range(count)
    )
    if count == 2 and draw(st.booleans()):
        # A small model with a spare beside a busier one: a guest on the other's cards (issue 28).
        host = _chat("w1", draw(st.sampled_from(MODELS)), draw(st.sampled_from((10**9, 5 * 10**9))), profile)
        workloads = (_chat("w0", draw(st.sampled_from(SMALL_MODELS)), SMALL_DEMAND, profile, 1), host)
    gpus = tuple(draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True)))
    modes = draw(st.sampled_from(((BUY,), (BUY, OD), (RSV, OD), (BUY, RSV, OD))))
    return workloads, gpus, modes


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(drawn=requests())
def test_a_static_plan_is_never_cheaper_than_the_hourly_plan(
    drawn: tuple[tuple[InferenceWorkload, ...], tuple[str, ...], tuple[AcquisitionMode, ...]],
) -> None:
    workloads, gpus, modes = drawn
    hourly = _plan(_request(workloads, gpus, modes, DeploymentPolicy.HOURLY))
    static_request = _request(workloads, gpus, modes, DeploymentPolicy.STATIC)
    static = _plan(static_request)
    event(f"hourly {hourly.status.value}, static {static.status.value}")
    if static.status is SolveStatus.OPTIMAL:
        assert hourly.status is SolveStatus.OPTIMAL
        assert _tco(static) >= _tco(hourly) - Decimal("0.01"), (_tco(static), _tco(hourly))
        assert not check_solution(build_instance(static_request, BOOK), static)
        if any(u.candidate.guest and any(u.replicas) for a in static.assignments for u in a.uses):
            event("static plan co-locates")
            # Its fleet is an hourly fleet too: the hourly evaluator finds a use of it.
            fleet = static.fleet()
            assert fleet is not None
            hourly_request = _request(workloads, gpus, modes, DeploymentPolicy.HOURLY)
            evaluation = evaluate_fleet(fleet, hourly_request, BOOK, time_limit_s=30, compare_optimal=False)
            assert evaluation.feasible, evaluation.messages
