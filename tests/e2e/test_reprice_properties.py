"""RepricePlan is EvaluateFleet of the saved fleet at today's prices (issue 28): for any change of
the fleet's offer price, the re-priced TCO and verdict are EvaluateFleet's on the new pricebook,
the TCO is always shown, and a fleet pushed over its capex budget is told by how much."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlannerClient
from tests.e2e.pricebook_copies import with_offer_price
from tests.e2e.servers import fleet_of, plan_and_save, store_server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "60m_krw_single_gpu.yaml"
pytestmark = pytest.mark.slow
Saved = tuple[str, api.PlanFleetRequest, api.PlanFleetResponse]
"""The store, the request and the saved plan's answer."""


@pytest.fixture(scope="module")
def saved(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, api.PlanFleetRequest, api.PlanFleetResponse]]:
    store = str(tmp_path_factory.mktemp("store") / "plans.db")
    request, planned = plan_and_save(store, EXAMPLE)
    yield store, request, planned


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(factor=st.decimals(min_value="0.80", max_value="1.60", places=2))
@example(factor=Decimal("1.50"))  # over the budget (capex 49.7 of 60 million KRW today)
@example(factor=Decimal("0.90"))
def test_reprice_is_evaluate_fleet_at_todays_prices(
    saved: Saved,
    tmp_path_factory: pytest.TempPathFactory,
    factor: Decimal,
) -> None:
    store, request, planned = saved
    offer = next(line.offer_id for line in planned.plan.fleet if line.offer_id)
    book, _ = with_offer_price(tmp_path_factory.mktemp("book"), offer, factor)
    evaluate = api.EvaluateFleetRequest(
        fleet=fleet_of(planned.plan, with_offers=True),
        workloads=request.workloads,
        constraints=request.constraints,
        pricebook_overrides=request.pricebook_overrides,
        solver_options=request.solver_options,
        compare_with_optimal=False,
    )
    with (
        store_server(store, pricebook_dir=book) as server,
        FleetPlannerClient(server.address, timeout_s=120) as client,
    ):
        repriced = client.reprice_plan(planned.plan_id)
        today = client.evaluate_fleet(evaluate)

    assert repriced.HasField("current_horizon_tco")
    assert repriced.current_horizon_tco == today.fleet_horizon_tco
    assert repriced.still_feasible == today.feasible
    budget = Decimal(request.constraints.capex_budget.amount)
    capex = Decimal(today.plan.cost.capex.amount)
    assert today.feasible == (capex <= budget)  # every workload is served whatever the price
    if capex > budget:
        overage = f"over the capex budget by {capex - budget:,.0f} KRW"
        assert any(overage in reason for reason in repriced.reasons), list(repriced.reasons)
    else:
        assert not any("over the capex budget" in reason for reason in repriced.reasons)
