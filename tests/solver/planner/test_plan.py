"""PlanFleet (``solver.planner.plan``): a consistent TCO, overrides reaching the plan, and when an
answer is complete."""

from __future__ import annotations

from decimal import Decimal

import pytest
from planner_factories import BARE, request

from pricebook import catalog
from pricebook.overrides import OfferOverride, PricebookOverrides
from pricebook.schema import Money, OfferKind, Pricebook
from solver.domain import Constraints
from solver.optimizer.cancel import CancelToken
from solver.optimizer.results import SolveStatus
from solver.planner import PlanResult, plan
from solver.resolve import resolve


def test_plan_carries_consistent_tco(full_plan: PlanResult) -> None:
    assert full_plan.status is SolveStatus.OPTIMAL
    tco = full_plan.tco
    assert tco is not None and full_plan.solution.cost is not None
    # The breakdown reproduces the MIP objective (to the cent after rounding each line).
    assert float(tco.total.horizon_total.amount) == pytest.approx(full_plan.solution.cost.total, abs=1.0)
    # Components add up to the horizon TCO.
    assert sum(c.horizon_amount.amount for c in full_plan.cost_components) == tco.total.horizon_total.amount
    # Fleet lines add up too. Each line rounds its 5 monthly items to the cent (±0.005 each)
    # before multiplying by 36 months, and its 2 purchase items and residual once.
    lines_total = sum(line.horizon_cost.amount for line in full_plan.fleet)
    per_line = Decimal("0.005") * (5 * 36 + 3)
    assert abs(lines_total - tco.total.horizon_total.amount) <= per_line * (len(full_plan.fleet) + 1)
    assert all(m.currency == "USD" for m in (tco.total.capex, tco.total.opex_monthly))
    assert full_plan.pricebook_version and full_plan.pricebook_hash


def test_pricebook_overrides_reach_the_plan(book: Pricebook) -> None:
    base = request(**BARE).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm",))}
    )
    before = plan(resolve(base, book), time_limit_s=10)
    bought = next(line for line in before.fleet if line.mode == "buy")
    assert bought.price_per_gpu is not None and bought.server_id is not None
    offer = catalog.offer(book, bought.offer_id)
    assert offer.price.currency == "USD"
    doubled = Money(amount=offer.price.amount * 2, currency="USD")
    overridden = base.model_copy(
        update={
            "overrides": PricebookOverrides(offers=(OfferOverride(offer_id=bought.offer_id, price=doubled),))
        }
    )
    after = plan(resolve(overridden, book), time_limit_s=10)
    line = next(line for line in after.fleet if line.offer_id == bought.offer_id)
    # A whole-server price covers the host too: the GPUs take what is left of it.
    server = catalog.server(book, bought.server_id)
    host = server.host_cost.amount if offer.kind is OfferKind.PURCHASE_SERVER else Decimal(0)
    slots = server.gpus_per_server if offer.kind is OfferKind.PURCHASE_SERVER else 1
    per_gpu = (doubled.amount - host) / slots
    assert line.price_per_gpu is not None
    assert line.price_per_gpu.amount == per_gpu.quantize(Decimal("0.01"))
    assert after.overrides_applied and after.pricebook_hash != before.pricebook_hash
    assert after.tco is not None and before.tco is not None
    assert line.gpus == bought.gpus
    assert after.tco.total.purchase_gpus.amount == (per_gpu * line.gpus).quantize(Decimal("0.01"))


class _ExpiredToken(CancelToken):
    """What the service hands the planner once the caller's deadline (or a shutdown) wrapped up."""

    @property
    def expired(self) -> bool:
        return True


def test_an_expired_call_skips_baselines_and_sensitivity(book: Pricebook) -> None:
    result = plan(resolve(request(), book), time_limit_s=30, cancel=_ExpiredToken())
    assert result.solution.has_plan
    assert result.baselines == () and result.sensitivity == ()
    assert any("skipped" in w for w in result.warnings)
    assert not result.complete  # an early-ended answer is never reused for later identical requests


def test_a_plan_that_finished_everything_is_complete(full_plan: PlanResult) -> None:
    # Two workloads, three GPU types, 30 s: the main solve, baselines and sensitivity all finish.
    assert full_plan.status is SolveStatus.OPTIMAL
    assert full_plan.baselines and full_plan.sensitivity
    assert not any("cut short" in w or "skipped" in w for w in full_plan.warnings)
    assert full_plan.complete


def test_answer_says_what_each_stage_used(full_plan: PlanResult) -> None:
    stages = [s.stage for s in full_plan.stages]
    assert stages[0] == "main_solve"
    assert {"baselines", "headroom", "sensitivity"} <= set(stages)
    assert all(s.wall_s >= 0 and s.cpu_s >= 0 for s in full_plan.stages)
    # The stages ran one after another inside the call.
    assert sum(s.wall_s for s in full_plan.stages) <= full_plan.seconds + 0.05
