"""Found by ``bench.independent_checks`` (metamorphic, seed 29003): the static plan (2 × RTX PRO 6000
bought, Llama-3.1-8B on 1/8 and Qwen3-14B on 7/8 of each card, 13,217.74 USD) was cheaper than the
hourly plan of the same request (18,449.51 USD, an L40S added), both OPTIMAL, and EvaluateFleet
under the hourly policy said the same two cards serve only 93.1 % of wl-1's peak.

Static is a restriction of hourly, so every static use of a fleet must also be an hourly one. Here
the off-peak hours need one Qwen3-14B host card for their demand but two for the two Llama guests
(one plus its spare); the hourly model bounded each bucket's host replicas by its own demand and so
left the guests without cards. Checked without the planner's figures: the static plan's use of the
two cards, replayed hour by hour, is a valid hourly use (``check_solution`` of the hourly instance),
so the hourly optimum can be no dearer and the hourly evaluator must accept the fleet."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from pricebook.loader import load_default
from pricebook.schema import Money
from solver.domain import (
    AcquisitionMode,
    Constraints,
    DeploymentPolicy,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.optimizer import FleetSolution, SolveStatus, evaluate_fleet, optimize
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution
from solver.resolve import resolve

pytestmark = pytest.mark.slow

BOOK = load_default()
OFFICE = tuple(1.0 if 9 <= h < 18 else 0.35 for h in range(24))
WORKLOADS = (
    InferenceWorkload(
        name="wl-0",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_tokens=256,
        output_tokens=400,
        peak_request_rate_per_s=0.493,
        hourly_profile=OFFICE,
        sla=Sla(ttft_p95_ms=3000.0, tpot_p95_ms=60.0),
        redundancy=1,
    ),
    InferenceWorkload(
        name="wl-1",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        input_tokens=2000,
        output_tokens=400,
        peak_request_rate_per_s=2.63,
        hourly_profile=OFFICE,
        sla=Sla(ttft_p95_ms=3000.0, tpot_p95_ms=40.0),
    ),
)
PINS = (
    "rtx-pro-6000-server.od.aws-g7e-2xlarge",
    "rtx-pro-6000-server.od.aws-g7e-48xlarge",
    "l40s.od.aws-g6e-xlarge",
    "l40s.od.aws-g6e-xlarge-seoul",
    "h100-nvl.rsv36.azure-ncads-h100-v5",
    "h100-sxm.od.aws-p5-seoul",
    "h100-sxm.od.lambda-1x",
)
OPTIONS = SolverOptions(time_limit_s=30, relative_gap=0.0, compute_baselines=False, compute_sensitivity=False)


def _request(policy: DeploymentPolicy) -> PlanRequest:
    constraints = Constraints(
        currency="USD",
        horizon_months=24,
        monthly_opex_cap=Money(amount=Decimal(8000), currency="USD"),
        allowed_gpus=("rtx-pro-6000-server", "l40s", "h100-nvl", "h100-sxm"),
        allowed_modes=(AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND),
        include_host_costs=False,
        pinned_offers=PINS,
        deployment_policy=policy,
    )
    return resolve(PlanRequest(inference=WORKLOADS, constraints=constraints, options=OPTIONS), BOOK).request


def _plan(policy: DeploymentPolicy) -> FleetSolution:
    plan = optimize(_request(policy), BOOK, time_limit_s=30, options_override=OPTIONS)
    assert plan.status is SolveStatus.OPTIMAL, plan.status
    return plan


def _tco(solution: FleetSolution) -> Decimal:
    assert solution.cost is not None
    return Decimal(str(solution.cost.total))


@pytest.fixture(scope="module")
def static() -> FleetSolution:
    return _plan(DeploymentPolicy.STATIC)


def test_the_static_plan_co_locates_and_is_an_hourly_use_too(static: FleetSolution) -> None:
    uses = [u.candidate for a in static.assignments for u in a.uses if any(u.replicas)]
    assert any(c.guest for c in uses) and any(c.host for c in uses), [c.id for c in uses]
    hourly_instance = build_instance(_request(DeploymentPolicy.HOURLY), BOOK)
    replayed = dataclasses.replace(static, static_replicas={})
    assert not check_solution(hourly_instance, replayed)


def test_the_hourly_plan_is_no_dearer_than_the_static_one(static: FleetSolution) -> None:
    hourly = _plan(DeploymentPolicy.HOURLY)
    assert _tco(hourly) <= _tco(static) + Decimal("0.01"), (_tco(hourly), _tco(static))


def test_the_hourly_evaluator_accepts_the_static_plans_fleet(static: FleetSolution) -> None:
    fleet = static.fleet()
    assert fleet is not None
    request = _request(DeploymentPolicy.HOURLY)
    evaluation = evaluate_fleet(fleet, request, BOOK, time_limit_s=30, compare_optimal=False)
    assert evaluation.feasible, evaluation.messages
    assert evaluation.tco is not None
    assert Decimal(str(evaluation.tco)) <= _tco(static) + Decimal("0.01")
