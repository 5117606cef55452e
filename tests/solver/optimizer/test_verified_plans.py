"""Property (issue 28 item 13): a returned plan always passes the independent verification, over
random small requests on the real pricebook that mix serving and training, tiny and large runs,
bought and rented GPUs, repeated modes and minimum counts (hypothesis; fixed seeds in CI). The
planner never raises for its own plan: a plan it returns is re-checked here from scratch, and no
answer is a plan discarded for failing the check."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    CountBound,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
    TrainingMethod,
    TrainingWorkload,
)
from solver.optimizer import check_solution, optimize
from solver.optimizer.candidates import build_instance, perf_capacity_checker

BOOK = load_default()
GPUS = ("h100-sxm", "l40s", "rtx-pro-6000-ws", "h200-sxm")
BUY, ON_DEMAND = AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND
OPTIONS = SolverOptions(time_limit_s=10, compute_baselines=False, compute_sensitivity=False)


@st.composite
def requests(draw: st.DrawFn) -> PlanRequest:
    gpus = tuple(draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True)))
    modes = draw(st.sampled_from(((BUY,), (ON_DEMAND,), (BUY, ON_DEMAND), (BUY, ON_DEMAND, ON_DEMAND))))
    serving = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        input_tokens=2000,
        output_tokens=300,
        daily_tokens=draw(st.integers(10_000_000, 2_000_000_000)),
        sla=draw(st.sampled_from((Sla(), Sla(ttft_p95_ms=2000, tpot_p95_ms=60)))),
    )
    training = TrainingWorkload(
        name="ft",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        method=TrainingMethod.LORA,
        tokens_per_run=draw(st.sampled_from((1.0, 5.0, 20.0, 1e4, 1e8, 5e8))),
        runs_per_month=draw(st.sampled_from((1.0, 4.0))),
        deadline_hours=48.0,
    )
    bounds = ()
    if draw(st.booleans()):
        bounds = (CountBound(gpu=gpus[0], min_count=draw(st.integers(1, 4))),)
    constraints = Constraints(currency="USD", allowed_gpus=gpus, allowed_modes=modes, count_bounds=bounds)
    return PlanRequest(inference=(serving,), training=(training,), constraints=constraints, options=OPTIONS)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests())
def test_a_returned_plan_always_passes_independent_verification(request: PlanRequest) -> None:
    plan = optimize(request, BOOK, time_limit_s=10)
    messages = plan.diagnosis.messages if plan.diagnosis is not None else ()
    assert not any("failed the independent check" in m for m in messages), messages
    if not plan.has_plan:
        return
    instance = build_instance(request, BOOK)
    assert check_solution(instance, plan, perf_capacity_checker(request, BOOK)) == []
