"""``plans reprice`` keeps the saved offers (issue 28): each saved line is re-priced on the offer it
was saved with, even when another offer of the same GPU and mode is cheaper today; an offer gone
from today's pricebook leaves its lines to today's cheapest valid mix, and the answer says so in
English and Korean (notice ``offers_withdrawn``).

The saved plan (the 60M KRW example) buys rtx-pro-6000-ws on ``rtx-pro-6000-ws.buy.hf-catalog``;
the pricebook also has ``rtx-pro-6000-ws.buy.seed000-krw`` (15,000,000 KRW per GPU). Expected
prices come from the pricebook files the test writes, not from the service."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_store_pb2 as store_api
from clients import FleetPlannerClient
from tests.e2e.pricebook_copies import PRICEBOOK_DATA, with_offer_price
from tests.e2e.servers import plan_and_save, store_server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "60m_krw_single_gpu.yaml"
SAVED_OFFER = "rtx-pro-6000-ws.buy.hf-catalog"
OTHER_OFFER = "rtx-pro-6000-ws.buy.seed000-krw"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, api.PlanFleetResponse]]:
    store = str(tmp_path_factory.mktemp("store") / "plans.db")
    _, planned = plan_and_save(store, EXAMPLE)
    assert {line.offer_id for line in planned.plan.fleet} == {SAVED_OFFER}
    yield store, planned


def _reprice(store: str, book: Path, plan_id: str) -> store_api.RepricePlanResponse:
    with (
        store_server(store, pricebook_dir=book) as server,
        FleetPlannerClient(server.address, timeout_s=120) as client,
    ):
        return client.reprice_plan(plan_id)


def _unit_prices(response: store_api.RepricePlanResponse) -> dict[str, Decimal]:
    return {
        line.offer_id: Decimal(line.price_per_gpu.amount)
        for line in response.evaluation.plan.fleet
        if line.offer_id
    }


def test_a_saved_offer_dearer_than_another_today_is_kept(
    saved: tuple[str, api.PlanFleetResponse], tmp_path: Path
) -> None:
    store, planned = saved
    book, _ = with_offer_price(tmp_path, SAVED_OFFER, Decimal(2))  # now dearer than the other offer
    repriced = _reprice(store, book, planned.plan_id)
    assert set(_unit_prices(repriced)) == {SAVED_OFFER}
    assert not repriced.notices
    saved_capex = Decimal(planned.plan.cost.capex.amount)
    assert Decimal(repriced.evaluation.plan.cost.capex.amount) > saved_capex  # the GPUs cost 2× today


def test_a_withdrawn_offer_is_priced_at_the_cheapest_mix_and_said(
    saved: tuple[str, api.PlanFleetResponse], tmp_path: Path
) -> None:
    store, planned = saved
    book = tmp_path / "pricebook"
    shutil.copytree(PRICEBOOK_DATA, book)
    offers_file = book / "offers.yaml"
    data = yaml.safe_load(offers_file.read_text(encoding="utf-8"))
    (other,) = [o for o in data["offers"] if o["id"] == OTHER_OFFER]
    data["offers"] = [o for o in data["offers"] if o["id"] != SAVED_OFFER]
    offers_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    repriced = _reprice(store, book, planned.plan_id)
    prices = _unit_prices(repriced)
    amount, currency = str(other["price"]).split()
    assert prices == {OTHER_OFFER: Decimal(amount)} and currency == "KRW"
    (notice,) = repriced.notices
    assert notice.code == "offers_withdrawn"
    assert notice.params["offers"] == SAVED_OFFER and notice.params["gpus"] == "rtx-pro-6000-ws"
    assert SAVED_OFFER in notice.message and "no longer in today's pricebook" in notice.message
    assert SAVED_OFFER in notice.message_ko and "현재 가격표" in notice.message_ko
    assert notice.message in repriced.reasons
    assert repriced.HasField("current_horizon_tco")
