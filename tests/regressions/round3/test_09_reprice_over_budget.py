"""Round 3, reproduction 09: re-pricing a saved plan whose price rise (the HGX H200 server +20 %)
pushes its capex over the 500,000,000 KRW budget said "NO LONGER FEASIBLE … no longer serves every
workload at its SLA", with no TCO and no price change, while every workload was still served.

Checked against EvaluateFleet on the new pricebook alone: the re-priced TCO is the fleet's TCO
there (without the budget, the fleet is feasible and priced), the reasons say every workload is
still served and name the capex budget with its overage (capex − budget), and the price change of
the offer is listed."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlannerClient
from pricebook import loader
from pricebook.money import find_rate
from tests.e2e.servers import fleet_of, plan_and_save, store_server

SCENARIO = Path(__file__).parent / "repro" / "09-reprice-over-budget.yaml"
OFFER = "hgx-h200-8gpu.buy-server.archive-2025"
OLD_PRICE, NEW_PRICE = "312667 USD", "375200 USD"
BUDGET = Decimal(500_000_000)
pytestmark = pytest.mark.slow


def _dearer_book(tmp_path: Path) -> Path:
    """The repository's pricebook with only that offer's price raised (as the reproduction does)."""
    book = tmp_path / "pb9"
    shutil.copytree(Path(loader.__file__).resolve().parent / "data", book)
    offers = book / "offers.yaml"
    text = offers.read_text(encoding="utf-8")
    assert text.count(f"  price: {OLD_PRICE}\n") == 1
    offers.write_text(text.replace(f"  price: {OLD_PRICE}\n", f"  price: {NEW_PRICE}\n"), encoding="utf-8")
    return book


def test_reprice_over_the_budget_shows_the_tco_the_price_change_and_the_overage(tmp_path: Path) -> None:
    store = str(tmp_path / "plans.db")
    request, planned = plan_and_save(store, SCENARIO)
    assert any(line.offer_id == OFFER for line in planned.plan.fleet)

    unbudgeted = api.EvaluateFleetRequest(
        fleet=fleet_of(planned.plan),
        workloads=request.workloads,
        constraints=request.constraints,
        solver_options=request.solver_options,
        compare_with_optimal=False,
    )
    unbudgeted.constraints.ClearField("capex_budget")
    with (
        store_server(store, pricebook_dir=_dearer_book(tmp_path)) as server,
        FleetPlannerClient(server.address, timeout_s=300) as client,
    ):
        repriced = client.reprice_plan(planned.plan_id)
        today = client.evaluate_fleet(unbudgeted)

    assert today.feasible  # without the budget the fleet still does everything
    assert not repriced.still_feasible
    assert repriced.current_horizon_tco == today.fleet_horizon_tco
    change = Decimal(repriced.current_horizon_tco.amount) - Decimal(repriced.saved_horizon_tco.amount)
    assert Decimal(repriced.horizon_tco_change.amount) == change > 0

    # The server's price rises by (375,200 − 312,667) USD; its host is priced apart, so each of its
    # 8 GPUs carries an eighth of the rise, at the book's USD→KRW rate.
    (price,) = [p for p in repriced.price_changes if p.offer_id == OFFER]
    rate, _ = find_rate(loader.load_default(), "USD", "KRW")
    rise = Decimal(price.current_price.amount) - Decimal(price.saved_price.amount)
    assert abs(rise * 8 - (Decimal(375200) - Decimal(312667)) * rate) <= 8  # whole KRW per GPU
    assert any(OFFER in reason for reason in repriced.reasons)

    capex = Decimal(today.plan.cost.capex.amount)
    overage = f"over the capex budget by {capex - BUDGET:,.0f} KRW"
    assert capex > BUDGET
    assert any(overage in reason for reason in repriced.reasons), list(repriced.reasons)
    assert "every workload is still served at its SLA" in repriced.reasons
    assert not any("no longer serves every workload" in reason for reason in repriced.reasons)
