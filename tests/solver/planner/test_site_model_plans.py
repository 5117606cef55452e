"""A plan on the buyer's own site without the residual credit (issue 30 item 7): no colocation fee,
power at the tariff, the residual line at zero saying why, the TCO still the solver's objective;
and turning the credit off never makes the plan cheaper."""

from __future__ import annotations

from planner_factories import h200_l40s_request

from pricebook.schema import Pricebook, SiteModel
from solver.analysis.tco import NO_RESIDUAL_CREDIT, OWN_SITE_POWER, CostComponentName
from solver.domain import AcquisitionMode
from solver.planner import PlanResult, plan
from solver.resolve import resolve


def _plan(book: Pricebook, **constraints: object) -> PlanResult:
    req = h200_l40s_request({"allowed_modes": (AcquisitionMode.BUY,), **constraints})
    return plan(resolve(req, book), time_limit_s=20)


def test_an_own_site_plan_without_residual_credit(book: Pricebook) -> None:
    result = _plan(book, site_model=SiteModel.OWN_SITE, residual_value_credit=False)
    assert result.tco is not None
    total = result.tco.total
    assert total.colocation_monthly.amount == 0  # no colocation fee and no space price in the book
    assert total.power_monthly.amount > 0
    assert total.residual_value.amount == 0
    parts = {c.name: c for c in result.cost_components}
    assert parts[CostComponentName.POWER].explanation == OWN_SITE_POWER
    assert parts[CostComponentName.RESIDUAL_VALUE].explanation == NO_RESIDUAL_CREDIT
    assert CostComponentName.COLOCATION not in parts
    assert not [w for w in result.warnings if w.startswith("internal")]


def test_no_residual_credit_never_makes_the_plan_cheaper(book: Pricebook) -> None:
    for model in SiteModel:
        credited = _plan(book, site_model=model)
        uncredited = _plan(book, site_model=model, residual_value_credit=False)
        assert credited.tco is not None and uncredited.tco is not None
        assert uncredited.tco.total.horizon_total.amount >= credited.tco.total.horizon_total.amount
