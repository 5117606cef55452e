"""The rows of real plans (the default pricebook, the real performance model and MIP) over random
two-workload requests on one model, so that they may share pools (hypothesis, fixed seeds): every
fleet line names the workloads it serves, no group occupies more GPUs than the fleet holds, a
group's shares sum to 1, and each workload's tok/s is its capacity × the request's output tokens."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.planner.plan import plan_request
from solver.planner.rows import gpus_by_hour
from solver.resolve import resolve

BOOK = load_default()
GPUS = ("h100-sxm", "l40s", "h200-sxm", "rtx-pro-6000-server")
PROFILE = tuple(0.2 + (h if h < 13 else 24 - h) / 10 for h in range(24))
OPTIONS = SolverOptions(time_limit_s=20, compute_baselines=False, compute_sensitivity=False)

pytestmark = pytest.mark.slow


@st.composite
def requests(draw: st.DrawFn) -> PlanRequest:
    model = ModelRef(model_id=draw(st.sampled_from(("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"))))
    workloads = tuple(
        InferenceWorkload(
            name=name,
            model=model,
            input_tokens=draw(st.sampled_from((300, 2000))),
            output_tokens=draw(st.sampled_from((100, 400))),
            daily_tokens=draw(st.integers(20_000_000, 3_000_000_000)),
            hourly_profile=PROFILE if draw(st.booleans()) else None,
            sla=draw(st.sampled_from((Sla(), Sla(ttft_p95_ms=2000, tpot_p95_ms=60)))),
        )
        for name in ("a", "b")
    )
    gpus = tuple(draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True)))
    modes = draw(st.sampled_from(((AcquisitionMode.BUY,), (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND))))
    return PlanRequest(
        inference=workloads,
        constraints=Constraints(currency="USD", allowed_gpus=gpus, allowed_modes=modes),
        options=OPTIONS,
    )


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests())
def test_the_rows_of_a_real_plan_agree_with_its_fleet_and_request(request: PlanRequest) -> None:
    result = plan_request(resolve(request, BOOK), time_limit_s=30, cancel=None, with_extras=False)
    event(f"plan: {result.status.value}, shared groups: {sum(g.shared for g in result.deployment_lines)}")
    if not result.solution.has_plan:
        return
    output_tokens = {w.name: w.output_tokens for w in request.inference}
    for w in result.workload_lines:
        assert w.served and w.replicas > 0
        assert w.capacity_req_s >= w.demand_req_s * (1 - 1e-9)
        assert w.output_tok_s == pytest.approx(w.capacity_req_s * output_tokens[w.workload], rel=1e-6)
    for g in result.deployment_lines:
        assert g.replicas_peak > 0
        assert sum(s.share for s in g.shares) == pytest.approx(1.0)
    for line in result.fleet:
        assert line.workloads, f"{line.gpu} serves no workload"
    for gpu in {line.gpu for line in result.fleet}:
        used = gpus_by_hour(result.deployment_lines, gpu)
        held = [
            sum(
                (f.on_demand_gpus_by_hour[h] if f.on_demand_gpus_by_hour else f.gpus)
                for f in result.fleet
                if f.gpu == gpu
            )
            for h in range(24)
        ]
        assert all(math.ceil(u - 1e-6) <= n for u, n in zip(used, held, strict=True))
        assert max(used) > 0
    assert not [w for w in result.warnings if "serves no workload" in w or "groups occupy" in w]
