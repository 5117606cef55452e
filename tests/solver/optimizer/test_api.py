"""The public entry points: verified plans, cancellation, the choice of runner-ups, real
requests, and properties of the optimizer on small random instances (hypothesis)."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opt_factories import (
    candidate,
    chat_workload,
    option,
    random_portfolio,
    two_gpu_instance,
)

from bench.solver_scaling import portfolio
from pricebook.schema import Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
    money,
)
from solver.errors import SolveCancelled
from solver.optimizer import (
    CancelToken,
    Caps,
    FleetInstance,
    FleetSolution,
    SolveStatus,
    api,
    check_solution,
    evaluate_fleet,
    optimize,
    solve,
)
from solver.optimizer.candidates import build_instance
from solver.optimizer.driver import solve_mip
from solver.optimizer.instance import Bucket, InferenceDemand
from solver.optimizer.model import MipResult
from solver.optimizer.results import LimitFired, Violation, ViolationKind


def test_a_plan_failing_verification_is_discarded_not_raised() -> None:
    inst = two_gpu_instance(55.0)
    plan = solve(inst, time_limit_s=5, capacity_of=lambda c: c.capacity_req_s / 2)
    assert plan.status is SolveStatus.NO_SOLUTION and not plan.options
    assert plan.diagnosis is not None and "failed the independent check" in plan.diagnosis.messages[0]
    assert "capacity" in plan.diagnosis.messages[0]


def test_a_plan_failing_verification_once_is_replaced_by_the_plain_models_verified_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first plan is refused (as a wrong reduction would make it); the re-solve by the plain
    # model passes the same check and is the answer.
    inst = two_gpu_instance(55.0)
    honest = solve(inst, time_limit_s=5, explain=False)
    calls: list[int] = []
    real = api.check_solution

    def refuse_first(*args: Any, **kwargs: Any) -> list[Any]:
        calls.append(1)
        if len(calls) == 1:
            return [Violation(ViolationKind.DEMAND, "w", "planted")]
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "check_solution", refuse_first)
    plan = solve(inst, time_limit_s=5, explain=False)
    assert len(calls) == 2
    assert plan.has_plan and plan.cost is not None and honest.cost is not None
    assert plan.cost.total == pytest.approx(honest.cost.total, rel=1e-6)


def test_cancelled_token_stops_the_solve() -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(SolveCancelled):
        solve(two_gpu_instance(55.0), time_limit_s=5, cancel=token)


def test_evaluate_fleet_with_real_models_compares_with_the_optimum(book) -> None:  # type: ignore[no-untyped-def]
    w = chat_workload(4.0)
    request = PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=("h100-sxm", "l40s")))
    proposal = Fleet(items=(FleetItem(gpu="h100-sxm", mode=AcquisitionMode.BUY, count=16),))
    ev = evaluate_fleet(proposal, request, book, time_limit_s=10)
    assert ev.feasible
    assert ev.fits[0].headroom_fraction > 0
    assert ev.tco is not None and ev.optimal_tco is not None
    assert ev.optimal_tco <= ev.tco * (1 + 1e-3)
    assert ev.solution.gpu_counts() == {"h100-sxm": 16}


@pytest.mark.slow
def test_cancel_interrupts_a_running_solve(book) -> None:  # type: ignore[no-untyped-def]
    instance = build_instance(portfolio(5), book)  # takes SCIP well over 10 s to prove optimal
    token = CancelToken()
    timer = threading.Timer(0.5, token.cancel)
    started = time.perf_counter()
    timer.start()
    with pytest.raises(SolveCancelled):
        solve(instance, time_limit_s=60, cancel=token)
    assert time.perf_counter() - started < 5.0


def test_large_portfolios_get_local_runner_ups_largest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "RUNNER_UP_MAX_WORKLOADS", 3)
    inst = random_portfolio(4, workloads=6)
    sol = solve(inst, time_limit_s=40, relative_gap=1e-6)
    assert sol.has_plan
    with_runner_up = [a for a in sol.assignments if a.runner_up is not None]
    assert with_runner_up, [a.runner_up_note for a in sol.assignments]
    assert all("kept as planned" in a.runner_up_note for a in with_runner_up)
    assert all(a.runner_up is not None or a.runner_up_note for a in sol.assignments)


def _stopped_at_time_limit(mip: MipResult) -> MipResult:
    """``mip`` as if its time limit had fired 1 % from the bound (a plan that is not proven)."""
    stats = dataclasses.replace(mip.stats, status=SolveStatus.FEASIBLE, gap=0.01, limit_fired=LimitFired.TIME)
    return dataclasses.replace(mip, stats=stats)


def test_a_small_portfolio_whose_plan_is_not_proven_gets_local_runner_ups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = random_portfolio(4, workloads=4)
    main_solves: list[float] = []

    def main_then_runner_ups(instance: FleetInstance, **kwargs: Any) -> MipResult:
        if not main_solves:
            main_solves.append(kwargs["time_limit_s"])
            return _stopped_at_time_limit(solve_mip(instance, **kwargs))
        return solve_mip(instance, **kwargs)

    monkeypatch.setattr(api, "solve_mip", main_then_runner_ups)
    sol = solve(inst, time_limit_s=40)
    assert sol.status is SolveStatus.FEASIBLE
    # The main solve left the runner-ups their share of the time limit.
    assert main_solves == [pytest.approx(40 * (1 - api.LOCAL_RUNNER_UP_SHARE))]
    with_runner_up = [a for a in sol.assignments if a.runner_up is not None]
    assert with_runner_up
    assert all("kept as planned" in a.runner_up_note for a in with_runner_up)


def test_a_model_no_allowed_gpu_holds_is_named_with_reasons(book: Pricebook) -> None:
    # Llama-3.1-405B at BF16 is ~810 GB of weights; 8 RTX 5090 hold 8 × 32 GB = 256 GB.
    w = InferenceWorkload(
        name="huge",
        model=ModelRef(model_id="meta-llama/Llama-3.1-405B"),
        precision=Precision.BF16,
        input_tokens=1000,
        output_tokens=200,
        peak_request_rate_per_s=1.0,
        sla=Sla(ttft_p95_ms=5000),
    )
    sol = optimize(
        PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=("rtx-5090",))),
        book,
        time_limit_s=10,
    )
    assert sol.status is SolveStatus.INFEASIBLE
    assert sol.diagnosis is not None
    (unservable,) = sol.diagnosis.unservable
    assert unservable.workload == "huge"
    assert any("GB" in reason for reason in unservable.reasons)


def test_binding_budget_reports_the_smallest_sufficient_budget(book: Pricebook) -> None:
    w = chat_workload(20.0)

    def request(budget: float | None) -> PlanRequest:
        cap = money(budget, "USD") if budget is not None else None
        return PlanRequest(
            inference=(w,), constraints=Constraints(allowed_gpus=("l40s", "h100-sxm"), capex_budget=cap)
        )

    free = optimize(request(None), book, time_limit_s=10)
    assert free.has_plan
    cheapest_capex = free.usage["capex"]
    short = optimize(request(cheapest_capex / 4), book, time_limit_s=10)
    assert short.status is SolveStatus.INFEASIBLE and short.diagnosis is not None
    (relax,) = short.diagnosis.binding_caps
    assert relax.cap == "capex_budget"
    # The smallest budget that works is at most the capex of the cheapest-TCO plan.
    assert cheapest_capex / 4 < relax.needed <= cheapest_capex * (1 + 1e-6)
    assert optimize(request(relax.needed * (1 + 1e-9)), book, time_limit_s=10).has_plan


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


@pytest.mark.parametrize(("strict_tpot", "relaxed_tpot"), [(25.0, 50.0), (40.0, 80.0)])
def test_relaxed_sla_never_raises_cost_with_real_models(
    book, strict_tpot: float, relaxed_tpot: float
) -> None:  # type: ignore[no-untyped-def]
    def request(
        tpot: float, allowed: tuple[str, ...] = ("h100-sxm", "l40s", "rtx-pro-6000-ws")
    ) -> PlanRequest:
        w = chat_workload(6.0, tpot_ms=tpot)
        return PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=allowed))

    strict = optimize(request(strict_tpot), book, time_limit_s=10)
    relaxed = optimize(request(relaxed_tpot), book, time_limit_s=10)
    assert strict.cost is not None and relaxed.cost is not None
    assert relaxed.cost.total <= strict.cost.total * (1 + REL)
    fewer = optimize(request(relaxed_tpot, ("l40s", "rtx-pro-6000-ws")), book, time_limit_s=10)
    assert not fewer.has_plan or (
        fewer.cost is not None and fewer.cost.total >= relaxed.cost.total * (1 - REL)
    )


def _opposite_profiles_request() -> PlanRequest:
    """Two workloads busy at opposite ends of the day, rented by the hour: clustering their hours
    at the busiest one overpays."""
    day = tuple(0.2 + (h if h < 12 else 24 - h) / 12 for h in range(24))
    night = tuple(reversed(day))
    chat = chat_workload(20.0)
    return PlanRequest(
        inference=(
            chat.model_copy(update={"name": "day", "hourly_profile": day}),
            chat.model_copy(update={"name": "night", "hourly_profile": night}),
        ),
        constraints=Constraints(
            currency="USD", allowed_gpus=("h100-sxm", "l40s"), allowed_modes=(AcquisitionMode.ON_DEMAND,)
        ),
    )


def test_clustered_hours_never_claim_an_optimum_they_cannot_prove(
    book: Pricebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _opposite_profiles_request()
    exact_instance = build_instance(request, book)
    assert not exact_instance.hours_clustered
    exact = solve(exact_instance, time_limit_s=30, relative_gap=0.0, explain=False)
    assert exact.status is SolveStatus.OPTIMAL and exact.stats.objective is not None
    monkeypatch.setattr("solver.optimizer.candidates.EXACT_BUCKET_REPLICA_VARIABLES", 0)
    clustered_instance = build_instance(request, book)
    assert clustered_instance.hours_clustered
    assert len(clustered_instance.buckets) < len(exact_instance.buckets)
    clustered = solve(clustered_instance, time_limit_s=30, relative_gap=0.0, explain=False)
    stats = clustered.stats
    assert stats.objective is not None and stats.best_bound is not None
    # The clustered plan covers every hour, so it costs at least the exact optimum; the reported
    # bound is a bound of the request itself, so it is at most the exact optimum.
    assert stats.objective >= exact.stats.objective * (1 - 1e-9)
    assert stats.best_bound <= exact.stats.objective * (1 + 1e-9)
    assert stats.objective > exact.stats.objective * (1 + 1e-6), "this instance overpays when clustered"
    assert clustered.status is SolveStatus.FEASIBLE and stats.gap is not None and stats.gap > 0
