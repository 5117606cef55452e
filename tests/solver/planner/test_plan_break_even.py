"""The plan's break-even section (``solver.planner.plan_break_even``)."""

from __future__ import annotations

from solver.planner import PlanResult


def test_break_even_rows(full_plan: PlanResult) -> None:
    gpus_in_plan = {line.gpu for line in full_plan.fleet}
    assert {row.gpu for row in full_plan.break_even.buy_vs_rent} == gpus_in_plan
    assert {row.workload for row in full_plan.break_even.api} == {"chat", "batch"}
    for row in full_plan.break_even.api:
        assert row.api_per_million_tokens is not None and row.self_hosted_per_million_tokens is not None
        cheaper = row.self_hosted_per_million_tokens.amount < row.api_per_million_tokens.amount
        assert row.self_hosting_cheaper is cheaper or (
            row.self_hosted_per_million_tokens.amount == row.api_per_million_tokens.amount
        )
