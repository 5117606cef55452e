"""Assembling a plan (``solver.planner.assemble``): unit costs that cover the fleet, and the
deployments turned away."""

from __future__ import annotations

import pytest
from planner_factories import GPUS

from solver.planner import PlanResult


def test_unit_costs_cover_the_fleet(full_plan: PlanResult) -> None:
    tco = full_plan.tco
    assert tco is not None
    # Workload shares split the exact (unrounded) TCO; each share is rounded to the cent.
    shares = sum(c.horizon_cost.amount for c in full_plan.unit_costs)
    assert float(shares) == pytest.approx(tco.total_float, abs=0.005 * len(full_plan.unit_costs))
    chat = next(c for c in full_plan.unit_costs if c.workload == "chat")
    # 2e9 tokens a day, 500 of every 2,500 are output, 365/12 days a month.
    output_per_month = 2e9 * 500 / 2500 * 365 / 12
    assert chat.per_million_output_tokens is not None
    expected = float(chat.monthly_cost.amount) / output_per_month * 1e6
    assert float(chat.per_million_output_tokens.amount) == pytest.approx(expected, abs=0.006)


def test_turned_away_deployments_are_reported_per_workload(full_plan: PlanResult) -> None:
    rejected = dict(full_plan.rejected)
    assert rejected, "a 70B chat SLA turns some deployments away on these GPUs"
    for reasons in rejected.values():
        assert reasons and all(r.split(" ")[0] in GPUS for r in reasons)
