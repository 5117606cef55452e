"""Explanations: infeasibility diagnoses, runner-ups (full and local), rejection reasons."""

from __future__ import annotations

import dataclasses

import pytest
from opt_factories import (
    proven_plan,
    random_portfolio,
    two_gpu_instance,
)

from bench.solver_scaling import seed_500m_krw_request
from pricebook.loader import load_default
from solver.domain import Constraints, PlanRequest, Precision
from solver.optimizer import Caps, SolveStatus, solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.explain import (
    NEEDED_TOLERANCE,
    _cheaper_than_plan,
    _cheapest_alone,
    _describe,
    explain_local_runner_ups,
    explain_runner_ups,
    rejection_reasons,
)
from solver.optimizer.instance import (
    CandidateRejection,
)
from solver.optimizer.results import CapRelaxation, RunnerUp


def test_budget_cap_diagnosis_names_smallest_budget() -> None:
    # Cheapest plan costs 500, so a 450 budget is short by exactly 50.
    sol = solve(two_gpu_instance(55.0, Caps(capex_budget=450)), time_limit_s=10)
    assert sol.status is SolveStatus.INFEASIBLE
    assert sol.diagnosis is not None
    (relax,) = sol.diagnosis.binding_caps
    assert relax.cap == "capex_budget"
    assert relax.needed == pytest.approx(500)
    assert relax.shortfall == pytest.approx(50)
    assert "short by 50" in relax.message


def test_power_cap_smallest_relaxation_may_differ_from_cheapest_plan() -> None:
    # Power: a 1 kW, b 2 kW. 55 req/s: b×2 = 4 kW; a×6 = 6 kW; b×1+a×3 = 5 kW. Cap 3 kW → needs 4 kW.
    sol = solve(two_gpu_instance(55.0, Caps(power_cap_kw=3.0)), time_limit_s=10)
    assert sol.diagnosis is not None
    (relax,) = sol.diagnosis.binding_caps
    assert relax.needed == pytest.approx(4.0)
    assert "power cap 3.0 kW is short by 1.0 kW" in relax.message


@pytest.mark.parametrize("rate", [5.0, 25.0, 55.0, 95.0, 140.0])
@pytest.mark.parametrize("cap", ["capex_budget", "power_cap_kw"])
def test_a_needed_figure_is_the_brute_force_least_and_says_so(rate: float, cap: str) -> None:
    # GPU a: 100, 1 kW, 10 req/s; b: 250, 2 kW, 30 req/s. The least capex / power over every
    # count pair that serves the rate, by enumeration; the cap is set just below it.
    per_gpu = {"capex_budget": (100.0, 250.0), "power_cap_kw": (1.0, 2.0)}[cap]
    least = min(
        per_gpu[0] * a + per_gpu[1] * b for a in range(20) for b in range(10) if 10 * a + 30 * b >= rate
    )
    caps = Caps(**{cap: least * 0.9})
    sol = solve(two_gpu_instance(rate, caps), time_limit_s=20)
    assert sol.status is SolveStatus.INFEASIBLE and sol.diagnosis is not None
    (relax,) = sol.diagnosis.binding_caps
    assert relax.needed == pytest.approx(least)
    assert relax.needed_at_least is not None and relax.needed_at_least <= relax.needed * (1 + 1e-9)
    assert relax.needed <= relax.needed_at_least * (1 + NEEDED_TOLERANCE)  # proven, so no bound wording
    assert "at most" not in relax.message and "(needs " in relax.message
    assert relax.fleet and "no other cap binds" in relax.message
    assert len(set(sol.diagnosis.messages)) == len(sol.diagnosis.messages)


def test_a_figure_not_proven_within_the_tolerance_is_worded_as_a_bound() -> None:
    # 359 found, only 300 proven (the repro 03 shape): "short by at most", with the proven range.
    found = CapRelaxation("capex_budget", 300.0, 359.0, "", needed_at_least=300.0, fleet="h100-nvl ×6 buy")
    text = _describe(found, "KRW", "; no other cap binds at that fleet")
    assert text.startswith("capex budget 300 KRW is short by at most 59 KRW: a fleet within 359 KRW")
    assert "between 300 KRW and 359 KRW" in text and "h100-nvl ×6 buy" in text
    proven = dataclasses.replace(found, needed_at_least=350.0)  # 359 ≤ 1.05 × 350
    assert _describe(proven, "KRW", "").startswith("capex budget 300 KRW is short by 59 KRW (needs 359 KRW")


SEEDS = (0, 1, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_local_runner_up_is_a_real_plan_no_cheaper_than_the_full_re_plan(seed: int) -> None:
    inst, sol = proven_plan(seed, 6)
    assert sol.cost is not None
    local = explain_local_runner_ups(inst, sol, time_limit_s=60)
    full = explain_runner_ups(inst, sol, time_limit_s=60)
    compared = 0
    for a_local, a_full in zip(local.assignments, full.assignments, strict=True):
        assert a_local.workload == a_full.workload
        chosen = a_local.primary.candidate.gpu
        if a_local.runner_up is None:
            assert a_local.runner_up_note  # says why
            continue
        assert a_local.runner_up.gpu != chosen
        # Any plan costs at least the optimum, and the full re-plan is the best plan without that GPU.
        assert a_local.runner_up.total_cost >= sol.cost.total * (1 - 1e-6)
        assert a_full.runner_up is not None
        assert a_full.runner_up.total_cost <= a_local.runner_up.total_cost * (1 + 1e-3)
        assert "kept as planned" in a_local.runner_up_note
        compared += 1
    assert compared >= 3


@pytest.mark.parametrize("seed", SEEDS)
def test_cheapest_alone_start_serves_the_workload_on_one_candidate(seed: int) -> None:
    inst = random_portfolio(seed, workloads=4)
    for w in inst.inference:
        start = _cheapest_alone(inst, w.name)
        assert len(start) == 1
        cid, replicas = start[0]
        cand = next(c for c in inst.candidates if c.id == cid)
        assert cand.workload == w.name
        for lam, count in zip(w.rate_req_s, replicas, strict=True):
            if lam <= 0:
                assert count == 0
                continue
            # Enough replicas for the demand after losing the spares, and one fewer would not do.
            assert (count - w.redundancy) * cand.capacity_req_s >= lam * (1 - 1e-9)
            assert (count - w.redundancy - 1) * cand.capacity_req_s < lam


def test_a_runner_up_cheaper_than_a_plan_stopped_by_its_time_limit_says_so() -> None:
    _, sol = proven_plan(0, 4)
    cheaper = RunnerUp(
        gpu="other", tp=1, precision="fp8", replicas_at_peak=1, total_cost=90.0, cost_difference=-10.0
    )
    assert _cheaper_than_plan(cheaper, sol) == ""  # proven: cheaper only within the solver's gap
    stopped = dataclasses.replace(
        sol,
        status=SolveStatus.FEASIBLE,
        stats=dataclasses.replace(sol.stats, status=SolveStatus.FEASIBLE, gap=0.0123),
    )
    remark = _cheaper_than_plan(cheaper, stopped)
    assert f"costs 10 {sol.currency} less than the plan" in remark and "1.23%" in remark
    dearer = dataclasses.replace(cheaper, total_cost=110.0, cost_difference=10.0)
    assert _cheaper_than_plan(dearer, stopped) == ""


def _r(gpu: str, tp: int, reason: str, dominated_by: str = "") -> CandidateRejection:
    return CandidateRejection("w", gpu, tp, Precision.BF16, reason, dominated_by)


def test_each_gpu_leads_with_its_sla_miss_and_domain_limits_come_last() -> None:
    reasons = rejection_reasons(
        [
            _r("a-gpu", 8, "TP 8 exceeds the largest NVLink/P2P domain on offer (4 GPUs)"),
            _r("a-gpu", 1, "needs 200 GB of weights; holds 75 GB"),
            _r("b-gpu", 4, "21.0 tok/s per user is below the 30 tok/s target"),
            _r("a-gpu", 2, "TPOT 45 ms exceeds the 40 ms target"),
            _r("b-gpu", 2, "works", dominated_by="b-gpu TP4"),
        ]
    )
    assert reasons == (
        "b-gpu TP4 bf16: 21.0 tok/s per user is below the 30 tok/s target",
        "a-gpu TP2 bf16: TPOT 45 ms exceeds the 40 ms target",
        "a-gpu TP1 bf16: needs 200 GB of weights; holds 75 GB",
        "a-gpu TP8 bf16: TP 8 exceeds the largest NVLink/P2P domain on offer (4 GPUs)",
    )


def test_the_list_is_capped() -> None:
    many = [_r(f"gpu-{i:02d}", 1, "needs 1 GB more") for i in range(30)]
    assert len(rejection_reasons(many, limit=5)) == 5


def test_a_mig_slice_is_named_as_a_slice_not_as_tp1() -> None:
    # Qwen3-Embedding-8B at bf16 has 16 GB of weights: more than an H200's 1/7 slice (141 GB / 8
    # memory slices) holds, so the slice is turned away — and must be called one.
    seed_embeddings = next(w for w in seed_500m_krw_request().inference if w.name == "embeddings")
    embeddings = seed_embeddings.model_copy(update={"precision": Precision.BF16})
    request = PlanRequest(inference=(embeddings,), constraints=Constraints(allowed_gpus=("h200-sxm",)))
    instance = build_instance(request, load_default())
    slices = [r for r in instance.rejections_of("embeddings") if r.mig_slice == 7]
    assert slices, "the 1/7 slice should be turned away for its memory"
    assert all(r.label == "h200-sxm MIG 1/7 bf16" for r in slices)
    assert any(line.startswith("h200-sxm MIG 1/7 bf16: ") for line in rejection_reasons(slices))
    whole = [r for r in instance.rejections_of("embeddings") if not r.mig_slice]
    assert all(r.label.startswith(f"h200-sxm TP{r.tp} ") for r in whole)
