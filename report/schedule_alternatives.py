"""The alternatives of a multi-year plan: the plan and its rent-only plan, each planned year by
year, compared over the whole horizon — by the NPV of their cash when the plan minimised the NPV,
else by their nominal TCO — with the capex of every purchase of the horizon. Their answers' cost
lines are their final year's alone, for its months: comparing those would set a plan's purchases
against a rent-only fleet's last year. The amounts are the planner's (``PlanResult.cash_flows``,
``PlanResult.schedule``). The per-token API, priced at the stated demand over one period, is not
compared (the section's note says so)."""

from __future__ import annotations

from decimal import Decimal

from pricebook.schema import Money
from report.data import Alternative, AlternativeKind
from solver.analysis.whatif import describe_fleet
from solver.domain import CostObjective
from solver.planner.results import PlanResult


def horizon_cost(result: PlanResult) -> Money | None:
    """What the multi-year plan minimised, over the horizon: the NPV of its yearly cash (with a
    rate and the NPV objective), else its nominal TCO; None without a schedule."""
    if result.schedule is None:
        return None
    flows = result.cash_flows
    if flows is None:
        return result.schedule.nominal_tco
    return flows.npv if flows.objective is CostObjective.NPV else flows.nominal_total


def _capex(result: PlanResult) -> Money | None:
    if result.schedule is None:
        return None
    years = result.schedule.years
    total = sum((y.capex.amount for y in years), Decimal(0))
    return Money(amount=total, currency=years[0].capex.currency) if years else None


def _alternative(kind: AlternativeKind, result: PlanResult, plan: Money | None) -> Alternative:
    cost = horizon_cost(result)
    extra: Money | None = None
    fraction: float | None = None
    if kind is not AlternativeKind.RECOMMENDED and cost is not None and plan is not None:
        extra = Money(amount=cost.amount - plan.amount, currency=cost.currency)
        fraction = float(extra.amount / plan.amount) if plan.amount else None
    return Alternative(
        kind=kind,
        name="",
        feasible=result.solution.has_plan,
        horizon_tco=cost,
        capex=_capex(result),
        gpus=sum(line.gpus for line in result.fleet),
        fleet_summary=describe_fleet(result.solution),
        extra_cost=extra,
        extra_fraction=fraction,
        reason="" if result.solution.has_plan else result.summary,
    )


def staged_alternatives(
    result: PlanResult, rent_only: PlanResult | None, *, rentals_allowed: bool
) -> tuple[Alternative, ...]:
    """The plan, then its rent-only plan (which meets the request only when it allows renting)."""
    plan = horizon_cost(result)
    out = [_alternative(AlternativeKind.RECOMMENDED, result, None)]
    if rent_only is not None:
        rent = _alternative(AlternativeKind.RENT_ONLY, rent_only, plan)
        out.append(rent.model_copy(update={"meets_requirement": rentals_allowed}))
    return tuple(out)
