"""Every eligible offer is an option (issue 28 item 1), checked over random small requests on the
real pricebook (hypothesis; fixed seeds in CI): pinning an eligible offer never makes a plan
cheaper, and the planner's own fleet — its lines naming their offers, or as a user types it
(GPU, count, mode) — is always accepted by EvaluateFleet and priced at the plan's TCO."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from pricebook.schema import OfferKind, label_rank
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.optimizer import FleetSolution, SolveStatus, evaluate_fleet, optimize

BOOK = load_default()
# GPUs whose on-demand or reserved offers rent instances of different sizes (1 and 8 GPUs).
GPUS = ("a100-sxm-80gb", "h100-sxm", "l40s", "l4", "h200-sxm", "b200")
MODELS = ("Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "meta-llama/Llama-3.1-70B")
PROFILE = tuple(0.2 + (h if h < 12 else 24 - h) / 12 for h in range(24))
EXACT = SolverOptions(relative_gap=0.0, time_limit_s=30, compute_baselines=False, compute_sensitivity=False)
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
KIND = {AcquisitionMode.ON_DEMAND: OfferKind.ON_DEMAND, AcquisitionMode.RESERVED: OfferKind.RESERVED}

pytestmark = pytest.mark.slow


@st.composite
def requests(draw: st.DrawFn) -> PlanRequest:
    workload = InferenceWorkload(
        name="w",
        model=ModelRef(model_id=draw(st.sampled_from(MODELS))),
        input_tokens=draw(st.sampled_from((512, 2000))),
        output_tokens=draw(st.sampled_from((128, 400))),
        daily_tokens=draw(st.sampled_from((10**7, 10**8, 10**9, 5 * 10**9, 2 * 10**10))),
        hourly_profile=PROFILE if draw(st.booleans()) else None,
        sla=draw(st.sampled_from((Sla(), Sla(ttft_p95_ms=3000, tpot_p95_ms=60)))),
    )
    gpus = draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True))
    od, rsv = AcquisitionMode.ON_DEMAND, AcquisitionMode.RESERVED
    modes = draw(st.sampled_from(((od,), (rsv,), (od, rsv))))
    return PlanRequest(
        inference=(workload,),
        constraints=Constraints(
            currency="USD", horizon_months=24, allowed_gpus=tuple(gpus), allowed_modes=modes
        ),
        options=EXACT,
    )


def _plan(request: PlanRequest) -> FleetSolution:
    return optimize(request, BOOK, time_limit_s=30, options_override=EXACT)


def _tco(solution: FleetSolution) -> Decimal:
    assert solution.cost is not None
    return Decimal(str(solution.cost.total))


def most_reliable_offers(gpu: str, mode: AcquisitionMode) -> list[str]:
    """The offers the default policy lets a plan use: the best price label among the GPU's offers
    of that kind (no provider or region filter in these requests)."""
    offers = [o for o in BOOK.offers if o.gpu == gpu and o.kind is KIND[mode]]
    if not offers:
        return []
    best = min(label_rank(o.label) for o in offers)
    return sorted(o.id for o in offers if label_rank(o.label) == best)


@settings(PROPERTY_SETTINGS, max_examples=150)  # with fewer, the fixed seed misses the offers that break it
@given(request=requests(), data=st.data())
def test_pinning_an_eligible_offer_never_makes_a_plan_cheaper(
    request: PlanRequest, data: st.DataObject
) -> None:
    limits = request.constraints
    eligible = [
        o for g in limits.allowed_gpus for m in limits.allowed_modes for o in most_reliable_offers(g, m)
    ]
    if not eligible:
        return
    pinned_offer = data.draw(st.sampled_from(eligible), label="pinned offer")
    free = _plan(request)
    event(f"free plan: {free.status.value}")
    pinned = _plan(
        request.model_copy(
            update={"constraints": limits.model_copy(update={"pinned_offers": (pinned_offer,)})}
        )
    )
    event(f"pinned plan: {pinned.status.value}")
    if pinned.status is SolveStatus.OPTIMAL:
        # A pinned plan is a plan of the free request: the free optimum is never dearer.
        assert free.status is SolveStatus.OPTIMAL
        assert _tco(free) <= _tco(pinned) + Decimal("0.01"), (pinned_offer, _tco(free), _tco(pinned))


def _as_typed(fleet: Fleet) -> Fleet:
    """The fleet as a user types it: GPU, count and mode per line, lines of one GPU and mode merged."""
    counts: dict[tuple[str, AcquisitionMode], int] = {}
    for item in fleet.items:
        counts[(item.gpu, item.mode)] = counts.get((item.gpu, item.mode), 0) + item.count
    return Fleet(items=tuple(FleetItem(gpu=g, mode=m, count=n) for (g, m), n in counts.items()))


@PROPERTY_SETTINGS
@given(request=requests())
def test_the_planners_own_fleet_is_accepted_and_priced_at_the_plans_tco(request: PlanRequest) -> None:
    plan = _plan(request)
    event(f"plan: {plan.status.value}")
    fleet = plan.fleet()
    if fleet is None or plan.status is not SolveStatus.OPTIMAL:
        return
    assert all(item.offer for item in fleet.items)
    for given_fleet in (fleet, _as_typed(fleet)):
        evaluation = evaluate_fleet(given_fleet, request, BOOK, time_limit_s=30, compare_optimal=False)
        assert evaluation.feasible, (given_fleet, evaluation.messages)
        assert evaluation.tco is not None
        assert abs(Decimal(str(evaluation.tco)) - _tco(plan)) <= Decimal("0.01"), (
            given_fleet,
            evaluation.tco,
        )
