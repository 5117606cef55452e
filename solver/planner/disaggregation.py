"""Why disaggregation won: what the same request costs served without disaggregated deployments.

``compare_aggregated`` re-solves the request without the disaggregated candidates (as the
sensitivity pass re-solves without a GPU type) and prices that plan exactly like the main one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pricebook.schema import Currency, Money
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.assemble import solution_tco
from solver.planner.results import DisaggregationComparison

Resolve = Callable[[FleetInstance, float], FleetSolution]
"""Re-solve an instance within a time limit (``plan.ReSolver``)."""


def uses_disaggregation(solution: FleetSolution) -> bool:
    return any(u.candidate.unit is not None and any(u.replicas) for a in solution.assignments for u in a.uses)


def compare_aggregated(
    instance: FleetInstance,
    solution: FleetSolution,
    re_solve: Resolve,
    time_limit_s: float,
    currency: Currency,
) -> DisaggregationComparison | None:
    """The cheapest plan without disaggregated candidates, and the saving against ``solution``
    (None when the plan has no disaggregated deployment)."""
    if not uses_disaggregation(solution):
        return None
    aggregated = dataclasses.replace(
        instance, candidates=tuple(c for c in instance.candidates if c.unit is None)
    )
    alternative = re_solve(aggregated, time_limit_s)
    if not alternative.has_plan:
        return DisaggregationComparison(None, None, "no plan without disaggregated serving meets the SLAs")
    plan_total = solution_tco(solution, instance, currency).total.horizon_total
    other = solution_tco(alternative, aggregated, currency).total.horizon_total
    saving = Money(amount=other.amount - plan_total.amount, currency=currency)
    return DisaggregationComparison(other, saving)
