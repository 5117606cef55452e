"""Baselines (``solver.planner.baselines``): single-GPU fleets priced like the plan, and why one
is missing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from planner_factories import BARE, GPUS, request

from pricebook.schema import OfferKind, Pricebook
from solver.domain import Constraints
from solver.planner import PlanResult, plan
from solver.resolve import resolve


def test_baselines_match_independent_single_gpu_plans(full_plan: PlanResult, book: Pricebook) -> None:
    assert {b.gpu for b in full_plan.baselines} == set(GPUS)
    plan_total = full_plan.horizon_tco
    assert plan_total is not None
    for baseline in full_plan.baselines:
        assert baseline.feasible, baseline.reason
        assert baseline.horizon_tco is not None and baseline.extra_cost is not None
        # The chosen plan can use every baseline, so it is never dearer (up to the rounding).
        assert baseline.horizon_tco.amount >= plan_total.amount - Decimal("0.01")
        assert {line.gpu for line in baseline.fleet} == {baseline.gpu}
    # One baseline re-derived through the public entry point with only that GPU allowed.
    gpu = "h200-sxm"
    alone = request(**BARE).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=(gpu,))}
    )
    independent = plan(resolve(alone, book), time_limit_s=10)
    baseline = next(b for b in full_plan.baselines if b.gpu == gpu)
    assert independent.horizon_tco is not None and baseline.horizon_tco is not None
    assert abs(independent.horizon_tco.amount - baseline.horizon_tco.amount) <= Decimal("0.05")
    # Saving over the best baseline, in money and as a share of it.
    best = min(
        full_plan.baselines, key=lambda b: b.horizon_tco.amount if b.horizon_tco else Decimal("Infinity")
    )
    saving = full_plan.baseline_saving
    assert saving is not None and best.horizon_tco is not None
    assert saving.best_baseline_gpu == best.gpu
    assert abs(saving.saving.amount - (best.horizon_tco.amount - plan_total.amount)) <= Decimal("0.02")
    assert saving.saving_fraction == pytest.approx(
        float(saving.saving.amount / best.horizon_tco.amount), abs=1e-6
    )


def test_allowed_gpu_without_offers_gets_a_baseline_row(book: Pricebook) -> None:
    # Only purchases allowed, and no purchase offer for H100 SXM: its baseline row says why.
    purchases = (OfferKind.PURCHASE_GPU, OfferKind.PURCHASE_SERVER)
    offers = tuple(o for o in book.offers if not (o.gpu == "h100-sxm" and o.kind in purchases))
    unsold = book.model_copy(update={"offers": offers})
    req = request(compute_sensitivity=False).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm", "h100-sxm"))}
    )
    result = plan(resolve(req, unsold), time_limit_s=20)
    rows = {b.gpu: b for b in result.baselines}
    assert set(rows) == {"h200-sxm", "h100-sxm"}
    assert not rows["h100-sxm"].feasible and "no offer" in rows["h100-sxm"].reason
    assert rows["h200-sxm"].feasible
