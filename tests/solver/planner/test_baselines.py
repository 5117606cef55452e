"""Baselines (``solver.planner.baselines``): single-GPU fleets priced like the plan, and why one
is missing."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from planner_factories import BARE, GPUS, request

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario
from pricebook.schema import OfferKind, Pricebook
from service.convert.scenario import scenario_request
from solver.domain import AcquisitionMode, Constraints, Fleet, FleetItem
from solver.planner import PlanResult, evaluate, plan
from solver.resolve import resolve

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


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


def _fleet_from_words(text: str) -> Fleet:
    """``h100-sxm ×8 buy (hgx-h100-8gpu) + …`` (a fleet in words) as a domain fleet."""
    items = []
    for part in text.split(" + "):
        match = re.fullmatch(r"(\S+) ×(\d+) (\w+)(?: \((\S+)\))?", part)
        assert match, part
        gpu, count, mode, server = match.groups()
        items.append(FleetItem(gpu=gpu, mode=AcquisitionMode(mode), count=int(count), server=server))
    return Fleet(items=tuple(items))


def test_a_missing_baseline_names_the_cap_it_exceeds_and_what_it_needs(book: Pricebook) -> None:
    # 60M KRW buys RTX PRO 6000 workstations; one HGX server of H100 or H200 costs far more.
    message = load_scenario(EXAMPLES / "60m_krw_single_gpu.yaml", api.PlanFleetRequest)
    resolved = scenario_request(message, book)
    req = resolved.request.model_copy(
        update={"options": resolved.request.options.model_copy(update={"compute_sensitivity": False})}
    )
    result = plan(resolve(req, book), time_limit_s=60)
    missing = [b for b in result.baselines if not b.feasible]
    assert missing
    unbudgeted = req.model_copy(
        update={"constraints": req.constraints.model_copy(update={"capex_budget": None})}
    )
    for b in missing:
        assert "caps and bounds" not in b.reason
        (cap,) = b.binding_caps
        assert cap.cap == "capex_budget" and cap.limit == 60_000_000 < cap.needed
        assert b.reason.startswith("capex budget 60,000,000 KRW < ") and f"{cap.needed:,.0f} KRW" in b.reason
        # The fleet it names serves every workload and needs exactly that capex (EvaluateFleet).
        named = evaluate(_fleet_from_words(cap.fleet), resolve(unbudgeted, book), compare_with_optimal=False)
        assert named.feasible and named.plan.tco is not None
        assert abs(float(named.plan.tco.total.capex.amount) - cap.needed) <= 1
        assert cap.needed_at_least is not None and cap.limit <= cap.needed_at_least <= cap.needed
        proven = cap.needed <= cap.needed_at_least * 1.05
        assert proven or "at most" in b.reason
