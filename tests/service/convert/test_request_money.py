"""On the wire an amount is a plain decimal with its currency (the client reads "3억" and bare
amounts, issue 30 item 12): anything else is refused naming the field, never guessed."""

from __future__ import annotations

import pytest
from convert_support import chat, violations

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook


@pytest.mark.parametrize(
    ("money", "field"),
    [
        (common_pb2.Money(amount="3억", currency_code="KRW"), "constraints.capex_budget.amount"),
        (common_pb2.Money(amount="300000000"), "constraints.capex_budget.currency_code"),
    ],
)
def test_a_korean_or_currencyless_amount_names_its_field(
    book: Pricebook, money: common_pb2.Money, field: str
) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat()], constraints=scenario_pb2.Constraints(currency_code="KRW", capex_budget=money)
    )
    assert list(violations(request, book)) == [field]
