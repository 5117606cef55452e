"""Money in scenario files (issue 30 item 12): a bare amount is read in the request's currency,
Korean units are accepted, every such reading is echoed in the accepted form, and a malformed
amount names its field."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import ScenarioError, load_scenario, parse_scenario


def scenario(tmp_path: Path, constraints: str) -> Path:
    path = tmp_path / "bid.yaml"
    path.write_text(f"constraints:\n{constraints}", encoding="utf-8")
    return path


def read(tmp_path: Path, constraints: str) -> tuple[api.PlanFleetRequest, list[str]]:
    echo = io.StringIO()
    request = load_scenario(scenario(tmp_path, constraints), api.PlanFleetRequest, echo=echo)
    return request, echo.getvalue().splitlines()


def krw(amount: str) -> common_pb2.Money:
    return common_pb2.Money(amount=amount, currency_code="KRW")


def test_a_bare_budget_is_in_the_requests_currency(tmp_path: Path) -> None:
    request, said = read(tmp_path, "  currency_code: KRW\n  capex_budget: 300000000\n")
    assert request.constraints.capex_budget == krw("300000000")
    assert said == [f"{tmp_path / 'bid.yaml'}: constraints.capex_budget: read 300000000 as '300000000 KRW'"]


def test_without_a_currency_code_the_request_is_in_usd(tmp_path: Path) -> None:
    request, _ = read(tmp_path, "  monthly_opex_cap: 12500.50\n")
    assert request.constraints.monthly_opex_cap == common_pb2.Money(amount="12500.5", currency_code="USD")


@pytest.mark.parametrize(
    ("written", "amount"),
    [
        ("3억", "300000000"),
        ("3억 5천만", "350000000"),
        ("3억 5천만 원", "350000000"),
        ("'2.5억'", "250000000"),
    ],
)
def test_korean_amounts_are_accepted_and_echoed(tmp_path: Path, written: str, amount: str) -> None:
    request, said = read(tmp_path, f"  currency_code: KRW\n  capex_budget: {written}\n")
    assert request.constraints.capex_budget == krw(amount)
    assert said[0].endswith(f"as '{amount} KRW'")


def test_the_canonical_form_is_not_echoed(tmp_path: Path) -> None:
    _, said = read(tmp_path, "  currency_code: KRW\n  capex_budget: '300000000 KRW'\n")
    assert said == []


@pytest.mark.parametrize(
    ("constraints", "path", "reason"),
    [
        ("  currency_code: KRW\n  capex_budget: 3억억\n", "constraints.capex_budget", "money must look like"),
        ("  capex_budget: 3억\n", "constraints.capex_budget", "in a USD request"),
        (
            "  currency_code: KRW\n  installation_per_server: '5만 3억'\n",
            "constraints.installation_per_server",
            "largest first",
        ),
        ("  currency_code: KRW\n  capex_budget: .inf\n", "constraints.capex_budget", "finite"),
    ],
)
def test_a_malformed_amount_names_its_field(tmp_path: Path, constraints: str, path: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(scenario(tmp_path, constraints), api.PlanFleetRequest, echo=io.StringIO())
    assert info.value.path == path
    assert reason in info.value.reason


def test_amounts_elsewhere_in_the_request_are_read_alike() -> None:
    notes: list[str] = []
    data = {
        "constraints": {"currency_code": "KRW"},
        "pricebook_overrides": {"offers": [{"offer_id": "x", "price": "4천만"}]},
    }
    request = parse_scenario(data, api.PlanFleetRequest, "f", notes)
    assert request.pricebook_overrides.offers[0].price == krw("40000000")
    assert notes == ["f: pricebook_overrides.offers[0].price: read '4천만' as '40000000 KRW'"]
