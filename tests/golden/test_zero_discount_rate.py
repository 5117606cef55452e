"""A zero discount rate plans every example exactly as no rate (issue 32): the answers equal the
recorded ones once the fields a rate adds (the yearly cash flows, the NPV, the rate and objective)
are set aside — at 0 % every discounted amount is its nominal one and the NPV is the TCO."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from tests.golden.example_plans import RECORDED, plans_json

ADDED = frozenset({"cash_flows_by_year", "npv", "objective", "discount_rate_annual"})
"""What a rate adds to ``plan.cost``."""


def _without_rate_fields(answer: dict[str, Any]) -> dict[str, Any]:
    plan = dict(answer["plan"])
    if "cost" in plan:
        plan["cost"] = {k: v for k, v in plan["cost"].items() if k not in ADDED}
    return {**answer, "plan": plan}


@pytest.mark.slow
def test_a_zero_rate_reproduces_every_recorded_plan() -> None:
    compared = 0
    for name, text in plans_json(discount_rate=0.0):
        answer = json.loads(text)
        recorded = json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))
        if ADDED & set(recorded["plan"].get("cost", {})):
            continue  # an example that states its own rate is recorded at that rate, not at none
        compared += 1
        assert _without_rate_fields(answer) == recorded, name
        cost = answer["plan"].get("cost")
        if cost is None:
            continue
        flows = cost["cash_flows_by_year"]
        assert all(y["nominal"] == y["discounted"] for y in flows), name
        assert Decimal(cost["npv"]["amount"]) == Decimal(cost["horizon_tco"]["amount"]), name
    assert compared >= 5  # every example planned without a rate
