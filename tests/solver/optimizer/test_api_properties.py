"""Properties of whole plans over random small requests on the real pricebook (hypothesis; fixed
seeds in CI): owned GPUs never make a plan dearer, a portfolio is never dearer than its parts
planned apart, and HiGHS agrees with SCIP on proven optima."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    OwnedGpus,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.optimizer import FleetSolution, SolveStatus, evaluate_fleet, optimize

BOOK = load_default()
GPUS = ("h100-sxm", "l40s", "rtx-pro-6000-server", "rtx-5090", "h200-sxm")
MODELS = ("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B", "Qwen/Qwen3-14B")
PROFILE = tuple(0.3 + (h if h < 12 else 24 - h) / 12 for h in range(24))
EXACT = SolverOptions(relative_gap=0.0, time_limit_s=30, compute_baselines=False, compute_sensitivity=False)
PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@st.composite
def workloads(draw: st.DrawFn, name: str) -> InferenceWorkload:
    profiled = draw(st.booleans())
    return InferenceWorkload(
        name=name,
        model=ModelRef(model_id=draw(st.sampled_from(MODELS))),
        input_tokens=draw(st.sampled_from((512, 2000))),
        output_tokens=draw(st.sampled_from((128, 400))),
        daily_tokens=draw(st.integers(50_000_000, 4_000_000_000)),
        hourly_profile=(PROFILE if draw(st.booleans()) else tuple(reversed(PROFILE))) if profiled else None,
        sla=draw(st.sampled_from((Sla(), Sla(ttft_p95_ms=3000, tpot_p95_ms=80)))),
        redundancy=draw(st.sampled_from((0, 0, 1))),
    )


@st.composite
def constraints(draw: st.DrawFn) -> Constraints:
    gpus = draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True))
    buy, on_demand = AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND
    modes = draw(st.sampled_from(((buy,), (buy, on_demand), (on_demand,))))
    return Constraints(currency="USD", allowed_gpus=tuple(gpus), allowed_modes=modes)


def _plan(request: PlanRequest, backend: str = "scip") -> FleetSolution:
    options = EXACT.model_copy(update={"backend": backend})
    return optimize(request, BOOK, time_limit_s=30, options_override=options)


def _tco(solution: FleetSolution) -> Decimal:
    assert solution.cost is not None
    return Decimal(str(solution.cost.total))


@PROPERTY_SETTINGS
@given(workload=workloads("w"), limits=constraints(), owned=st.integers(1, 6))
def test_owning_gpus_never_makes_the_optimum_dearer(
    workload: InferenceWorkload, limits: Constraints, owned: int
) -> None:
    base = PlanRequest(inference=(workload,), constraints=limits, options=EXACT)
    without = _plan(base)
    event(f"plan without owned GPUs: {without.status.value}")
    if without.status is not SolveStatus.OPTIMAL:
        return  # nothing to compare (no GPU allowed serves it)
    gpu = limits.allowed_gpus[0]
    with_owned = base.model_copy(
        update={"constraints": limits.model_copy(update={"owned": (OwnedGpus(gpu=gpu, count=owned),)})}
    )
    plan = _plan(with_owned)
    assert plan.status is SolveStatus.OPTIMAL
    assert _tco(plan) <= _tco(without) + Decimal("0.01")


@PROPERTY_SETTINGS
@given(first=workloads("a"), second=workloads("b"), limits=constraints())
def test_a_portfolio_is_never_dearer_than_its_parts_planned_apart(
    first: InferenceWorkload, second: InferenceWorkload, limits: Constraints
) -> None:
    parts = [_plan(PlanRequest(inference=(w,), constraints=limits, options=EXACT)) for w in (first, second)]
    event(f"parts: {[p.status.value for p in parts]}")
    if any(p.status is not SolveStatus.OPTIMAL for p in parts):
        return
    whole = _plan(PlanRequest(inference=(first, second), constraints=limits, options=EXACT))
    assert whole.status is SolveStatus.OPTIMAL
    assert _tco(whole) <= sum(_tco(p) for p in parts) + Decimal("0.02")


@PROPERTY_SETTINGS
@given(workload=workloads("w"), limits=constraints())
def test_highs_agrees_with_scip_on_proven_optima(workload: InferenceWorkload, limits: Constraints) -> None:
    request = PlanRequest(inference=(workload,), constraints=limits, options=EXACT)
    scip = _plan(request, "scip")
    highs = _plan(request, "highs")
    assert highs.status is scip.status
    if scip.status is SolveStatus.OPTIMAL:
        assert abs(_tco(highs) - _tco(scip)) <= max(Decimal("0.02"), _tco(scip) * Decimal("1e-6"))


@PROPERTY_SETTINGS
@given(workload=workloads("w"), limits=constraints())
def test_every_plan_evaluates_feasible_at_exactly_its_tco(
    workload: InferenceWorkload, limits: Constraints
) -> None:
    request = PlanRequest(inference=(workload,), constraints=limits, options=EXACT)
    plan = _plan(request)
    fleet = plan.fleet()
    event(f"plan: {plan.status.value}")
    if fleet is None:
        return
    evaluation = evaluate_fleet(fleet, request, BOOK, time_limit_s=30, compare_optimal=False)
    assert evaluation.feasible, evaluation.messages
    assert evaluation.tco is not None
    assert abs(Decimal(str(evaluation.tco)) - _tco(plan)) <= Decimal("0.01"), (evaluation.tco, _tco(plan))
