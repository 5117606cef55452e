"""Found by ``bench.independent_checks`` (brute force, seed 28009): EvaluateFleet dropped the
request's ``count_bounds``. A fleet without the B200 the request requires (``min_count`` 1) came
back feasible, cheaper than anything PlanFleet may answer (which honours the minimum), and a fleet
over a ``max_count`` too. It also let the evaluator rent fewer on-demand GPUs than a plan's
minimum, so a plan's own fleet evaluated cheaper than the plan. A fleet is now judged against the
bounds like against the caps: one that breaks a bound is not feasible, and says which and by how
much; one that can meet it is used as the bound requires."""

from __future__ import annotations

from decimal import Decimal

import pytest

from clients import FleetPlannerClient
from solver.domain import (
    AcquisitionMode,
    Constraints,
    CountBound,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
)

pytestmark = pytest.mark.slow

BUY, ON_DEMAND = AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND
CHAT = InferenceWorkload(
    name="chat",
    model=ModelRef(model_id="Qwen/Qwen3-8B"),
    input_tokens=512,
    output_tokens=256,
    peak_request_rate_per_s=0.5,
    sla=Sla(ttft_p95_ms=3000, tpot_p95_ms=60),
)
OPTIONS = SolverOptions(time_limit_s=20, compute_baselines=False, compute_sensitivity=False)


def _request(modes: tuple[AcquisitionMode, ...], bound: CountBound) -> PlanRequest:
    constraints = Constraints(
        currency="USD", allowed_gpus=("l40s", "h100-pcie"), allowed_modes=modes, count_bounds=(bound,)
    )
    return PlanRequest(inference=(CHAT,), constraints=constraints, options=OPTIONS)


@pytest.mark.parametrize(
    ("bound", "count", "told"),
    [
        (CountBound(gpu="h100-pcie", min_count=1), 1, "h100-pcie: 0 GPUs in the fleet < minimum 1"),
        (CountBound(gpu="l40s", max_count=1), 2, "l40s: 2 GPUs held > maximum 1"),
    ],
)
def test_a_fleet_breaking_a_count_bound_is_not_feasible(
    client: FleetPlannerClient, bound: CountBound, count: int, told: str
) -> None:
    fleet = Fleet(items=(FleetItem(gpu="l40s", mode=BUY, count=count),))
    answer = client.evaluate_fleet(_request((BUY,), bound), fleet, compare_with_optimal=False)
    assert not answer.feasible
    assert any(told in w for w in answer.plan.warnings), list(answer.plan.warnings)


def test_a_plans_rented_minimum_evaluates_at_the_plans_tco(client: FleetPlannerClient) -> None:
    # One rented L40S serves the chat; the minimum makes the plan rent two at the busiest hour.
    free = client.plan_fleet(_request((ON_DEMAND,), CountBound(gpu="l40s", max_count=100))).plan
    assert sum(line.gpu_count for line in free.fleet if line.gpu_id == "l40s") == 1
    request = _request((ON_DEMAND,), CountBound(gpu="l40s", min_count=2))
    plan = client.plan_fleet(request).plan
    assert sum(line.gpu_count for line in plan.fleet if line.gpu_id == "l40s") == 2
    fleet = Fleet(
        items=tuple(
            FleetItem(gpu=line.gpu_id, mode=ON_DEMAND, count=line.gpu_count, offer=line.offer_id)
            for line in plan.fleet
        )
    )
    answer = client.evaluate_fleet(request, fleet, compare_with_optimal=False)
    assert answer.feasible, list(answer.plan.warnings)
    assert Decimal(answer.fleet_horizon_tco.amount) == Decimal(plan.cost.horizon_tco.amount)
