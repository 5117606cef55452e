"""Properties of the optimizer on small random instances (hypothesis) and on the real models."""

from __future__ import annotations

import dataclasses
import logging

import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opt_factories import candidate, option

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
)
from solver.optimizer import Caps, FleetInstance, FleetSolution, SolveStatus, check_solution, optimize, solve
from solver.optimizer.instance import Bucket, InferenceDemand

REL = 1e-3  # solver gap 1e-4 plus float noise
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw: st.DrawFn) -> FleetInstance:
    gpus = ["g0", "g1", "g2"][: draw(st.integers(2, 3))]
    options = []
    candidates = []
    for g in gpus:
        per_server = draw(st.sampled_from([1, 2, 4]))
        options.append(
            option(
                g,
                capex=draw(st.floats(50, 500)),
                per_server=per_server,
                domain=per_server,
                busy_hourly=draw(st.floats(0, 0.05)),
                power_kw=draw(st.floats(0.2, 1.5)),
            )
        )
        if draw(st.booleans()):
            options.append(option(g, mode=AcquisitionMode.ON_DEMAND, busy_hourly=draw(st.floats(0.01, 0.2))))
    two_buckets = draw(st.booleans())
    buckets = (
        (Bucket(0, tuple(range(12))), Bucket(1, tuple(range(12, 24))))
        if two_buckets
        else (Bucket(0, tuple(range(24))),)
    )
    demands = []
    for i in range(draw(st.integers(1, 3))):
        name = f"w{i}"
        rates = tuple(draw(st.floats(0.5, 40)) for _ in buckets)
        demands.append(
            InferenceDemand(name=name, rate_req_s=rates, redundancy=draw(st.sampled_from([0, 0, 1])))
        )
        for g in gpus:
            for tp in (1, 2):
                cand = candidate(name, g, draw(st.floats(1, 15)) * tp, tp=tp)
                candidates.append(cand)
    return FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=buckets,
        options=tuple(options),
        inference=tuple(demands),
        candidates=tuple(candidates),
    )


def cost(sol: FleetSolution) -> float:
    assert sol.status is SolveStatus.OPTIMAL, sol.stats
    assert sol.stats.objective is not None
    return sol.stats.objective


def run(inst: FleetInstance) -> FleetSolution:
    return solve(inst, time_limit_s=10, explain=False)


@FAST
@given(instances())
def test_every_plan_passes_the_evaluator(inst: FleetInstance) -> None:
    sol = run(inst)
    assert sol.has_plan
    assert check_solution(inst, sol) == []


@FAST
@given(instances(), st.floats(1.0, 3.0))
def test_more_demand_never_lowers_cost(inst: FleetInstance, factor: float) -> None:
    more = dataclasses.replace(
        inst,
        inference=tuple(
            dataclasses.replace(w, rate_req_s=tuple(r * factor for r in w.rate_req_s)) for w in inst.inference
        ),
    )
    assert cost(run(more)) >= cost(run(inst)) * (1 - REL)


@FAST
@given(instances(), st.floats(1.0, 2.0))
def test_more_capacity_per_replica_never_raises_cost(inst: FleetInstance, factor: float) -> None:
    # A relaxed SLA lets every deployment sustain at least the same request rate.
    relaxed = dataclasses.replace(
        inst,
        candidates=tuple(
            dataclasses.replace(c, capacity_req_s=c.capacity_req_s * factor) for c in inst.candidates
        ),
    )
    assert cost(run(relaxed)) <= cost(run(inst)) * (1 + REL)


@FAST
@given(instances(), st.floats(1.0, 2.0))
def test_bigger_budget_never_raises_cost(inst: FleetInstance, factor: float) -> None:
    free = run(inst)
    budget = free.usage["capex"] * 0.9 + 1.0  # a budget that may bind
    tight = run(dataclasses.replace(inst, caps=Caps(capex_budget=budget)))
    loose = run(dataclasses.replace(inst, caps=Caps(capex_budget=budget * factor)))
    if tight.has_plan:
        assert loose.has_plan
        assert cost(loose) <= cost(tight) * (1 + REL)
    if loose.has_plan:
        assert cost(loose) >= cost(free) * (1 - REL)


@FAST
@given(instances())
def test_removing_a_gpu_never_lowers_cost(inst: FleetInstance) -> None:
    full = cost(run(inst))
    dropped = "g0"
    fewer = dataclasses.replace(
        inst,
        options=tuple(o for o in inst.options if o.gpu != dropped),
        candidates=tuple(c for c in inst.candidates if c.gpu != dropped),
    )
    sol = run(fewer)
    assert sol.status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE)
    if sol.has_plan:
        assert cost(sol) >= full * (1 - REL)


@pytest.fixture(scope="module")
def book():  # type: ignore[no-untyped-def]
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return load_default()


@pytest.mark.parametrize(("strict_tpot", "relaxed_tpot"), [(25.0, 50.0), (40.0, 80.0)])
def test_relaxed_sla_never_raises_cost_with_real_models(
    book, strict_tpot: float, relaxed_tpot: float
) -> None:  # type: ignore[no-untyped-def]
    def request(tpot: float, allowed: tuple[str, ...] = ("H100", "L40S", "RTX PRO 6000")) -> PlanRequest:
        w = InferenceWorkload(
            name="chat",
            model=ModelRef(model_id="Qwen/Qwen3-8B"),
            precision=Precision.FP8,
            input_tokens=1500,
            output_tokens=300,
            peak_request_rate_per_s=6.0,
            sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=tpot),
        )
        return PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=allowed))

    strict = optimize(request(strict_tpot), book, time_limit_s=10)
    relaxed = optimize(request(relaxed_tpot), book, time_limit_s=10)
    assert strict.cost is not None and relaxed.cost is not None
    assert relaxed.cost.total <= strict.cost.total * (1 + REL)
    fewer = optimize(request(relaxed_tpot, ("L40S", "RTX PRO 6000")), book, time_limit_s=10)
    assert not fewer.has_plan or (
        fewer.cost is not None and fewer.cost.total >= relaxed.cost.total * (1 - REL)
    )
