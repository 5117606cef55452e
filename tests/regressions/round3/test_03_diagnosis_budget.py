"""Round 3, reproduction 03: a 300,000,000 KRW buyer was told to raise the budget to 6.05억 (4.0억,
3.59억 or, with a 4 s limit, 22억 on other runs): the figure came from a minimise-capex relaxation
stopped by its time limit, and the "Why no plan" section printed it twice.

Now a "needs X" figure is the least capex within 5 % (proven by the bound it reports), or it is
labelled a bound ("short by at most") with the proven range. Either way the fleet it names meets
every workload with exactly that capex (EvaluateFleet, without the budget), it is never above the
capex of a fleet known to serve everything (h100-nvl ×6, EvaluateFleet) by more than 5 % unless it
says it is a bound, and each line of the diagnosis is printed once."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from api.fleetplan.v1 import common_pb2, plan_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlannerClient
from clients.render.plan import render_plan
from clients.scenario import load_scenario

REPRO = Path(__file__).parent / "repro"
TOLERANCE = Decimal("0.05")
KNOWN = "h100-nvl:6:buy"
"""A fleet the reproduction found to serve every workload (capex 359,115,654 KRW)."""
pytestmark = pytest.mark.slow


def _request(name: str) -> api.PlanFleetRequest:
    request = load_scenario(REPRO / name, api.PlanFleetRequest)
    request.solver_options.compute_baselines = False
    request.solver_options.compute_sensitivity = False
    return request


def _fleet(text: str) -> scenario_pb2.Fleet:
    """``h100-nvl ×4 buy (pcie-h100-nvl-4gpu) + …`` (a diagnosis' fleet in words) as fleet lines."""
    fleet = scenario_pb2.Fleet()
    for part in text.split(" + "):
        match = re.fullmatch(r"(\S+) ×(\d+) (\w+)(?: \((\S+)\))?", part)
        assert match, part
        gpu, count, mode, server = match.groups()
        item = fleet.items.add(gpu_id=gpu, count=int(count), server_id=server or "")
        item.mode = common_pb2.AcquisitionMode.Value(f"ACQUISITION_MODE_{mode.upper()}")
    return fleet


def _capex_serving_all(
    client: FleetPlannerClient, request: api.PlanFleetRequest, fleet: scenario_pb2.Fleet
) -> Decimal:
    """The fleet's capex, checking that it serves every workload when the budget is lifted."""
    unbudgeted = api.EvaluateFleetRequest(
        fleet=fleet,
        workloads=request.workloads,
        constraints=request.constraints,
        pricebook_overrides=request.pricebook_overrides,
        solver_options=request.solver_options,
        compare_with_optimal=False,
    )
    unbudgeted.constraints.ClearField("capex_budget")
    answer = client.evaluate_fleet(unbudgeted)
    assert answer.feasible, list(answer.messages)
    return Decimal(answer.plan.cost.capex.amount)


@pytest.mark.parametrize(
    "name", ["03-diagnosis-overstates-budget.yaml", "03-diagnosis-overstates-budget-4s.yaml"]
)
def test_the_budget_diagnosis_is_the_least_within_5_percent_or_says_it_is_a_bound(
    client: FleetPlannerClient, name: str
) -> None:
    request = _request(name)
    answer = client.plan_fleet(request)
    if answer.plan.status == plan_pb2.PLAN_STATUS_NO_SOLUTION:
        pytest.skip("the main solve found no proof of infeasibility in its time (a loaded machine)")
    assert answer.plan.status == plan_pb2.PLAN_STATUS_INFEASIBLE
    (budget,) = [c for c in answer.plan.diagnosis.binding_caps if c.cap == "capex_budget"]
    assert budget.limit == 300_000_000
    needed = Decimal(repr(budget.needed))
    assert budget.HasField("needed_at_least") and budget.limit <= budget.needed_at_least <= budget.needed

    # The fleet named needs exactly that capex and meets everything else.
    assert abs(_capex_serving_all(client, request, _fleet(budget.fleet)) - needed) <= 1
    known = _capex_serving_all(client, request, _fleet_of_spec(KNOWN))
    proven = budget.needed <= budget.needed_at_least * (1 + float(TOLERANCE))
    if proven:
        assert needed <= known * (1 + TOLERANCE)
        assert "short by at most" not in budget.message
    else:
        assert "short by at most" in budget.message and "not narrowed" in budget.message
    assert "other cap" in budget.message  # which other caps bind (none here)

    why = render_plan(answer.plan, answer.provenance).split("Why no plan", 1)[1].split("\n\n", 1)[0]
    lines = [line for line in why.splitlines() if line.startswith("- ")]
    assert lines and len(lines) == len(set(lines))


def _fleet_of_spec(spec: str) -> scenario_pb2.Fleet:
    gpu, count, mode = spec.split(":")
    return _fleet(f"{gpu} ×{count} {mode}")
