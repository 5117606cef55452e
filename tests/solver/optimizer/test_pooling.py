"""Shared replica pools, length mixes, restrictions, headroom and capacity quantiles (issue 20)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pricebook import load_default
from solver.domain import (
    AcquisitionMode,
    CapacityQuantile,
    Constraints,
    InferenceWorkload,
    Isolation,
    LengthBucket,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
)
from solver.optimizer import FleetSolution, SolveStatus, optimize
from solver.optimizer.candidates import build_instance
from solver.optimizer.evaluate import check_solution
from solver.optimizer.results import ViolationKind
from tests.golden.example_plans import plans_json

BOOK = load_default()
LIMITS = Constraints(
    currency="USD", allowed_gpus=("h100-sxm", "l40s"), allowed_modes=(AcquisitionMode.ON_DEMAND,)
)


def _workload(name: str, rate: float, inp: int, out: int, sla: Sla, **extra: object) -> InferenceWorkload:
    return InferenceWorkload(
        name=name,
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        precision=Precision.FP8,
        input_tokens=inp,
        output_tokens=out,
        peak_request_rate_per_s=rate,
        sla=sla,
        **extra,  # type: ignore[arg-type]
    )


def _plan(*workloads: InferenceWorkload, constraints: Constraints = LIMITS) -> FleetSolution:
    plan = optimize(PlanRequest(inference=workloads, constraints=constraints), BOOK, time_limit_s=30)
    assert plan.status is SolveStatus.OPTIMAL
    return plan


def _dedicated(*workloads: InferenceWorkload) -> tuple[InferenceWorkload, ...]:
    return tuple(w.model_copy(update={"isolation": Isolation.DEDICATED}) for w in workloads)


def _tco(plan: FleetSolution) -> float:
    assert plan.cost is not None
    return plan.cost.total


PORTFOLIOS = [
    # Two small chat workloads, each with a partly idle replica of its own.
    (
        _workload("a", 1.3, 500, 200, Sla(ttft_p95_ms=2000, tpot_p95_ms=50)),
        _workload("b", 0.9, 500, 200, Sla(ttft_p95_ms=2000, tpot_p95_ms=50)),
    ),
    # Different SLAs and sizes: the shared pool is sized at the stricter SLA.
    (
        _workload("a", 3.0, 300, 200, Sla(ttft_p95_ms=1000, tpot_p95_ms=40)),
        _workload("b", 2.0, 2000, 300, Sla(ttft_p95_ms=4000, tpot_p95_ms=80)),
        _workload("c", 5.0, 1000, 100, Sla(), interactive=False),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("workloads", PORTFOLIOS)
def test_pooling_never_raises_cost_versus_dedicated_replicas(
    workloads: tuple[InferenceWorkload, ...],
) -> None:
    pooled = _plan(*workloads)
    dedicated = _plan(*_dedicated(*workloads))
    assert _tco(pooled) <= _tco(dedicated) * (1 + 1e-9)


@pytest.mark.slow
def test_two_small_workloads_share_one_replica() -> None:
    """1.3 + 0.9 req/s of the same model and SLA: separately two partly idle replicas, pooled the
    replicas their summed load needs (checked against the candidates' own capacities)."""
    a, b = PORTFOLIOS[0]
    pooled = _plan(a, b)
    dedicated = _plan(*_dedicated(a, b))
    assert _tco(pooled) < _tco(dedicated)
    (pool,) = pooled.pools
    assert set(pool.members) == {"a", "b"}
    capacity = pool.deployment.capacity_req_s
    assert max(pool.replicas) == -(-(1.3 + 0.9) // capacity)  # ⌈Σ demand / capacity⌉
    shares = [u.shared_load[0] for asg in pooled.assignments for u in asg.uses if u.pooled]
    assert sum(shares) <= max(pool.replicas) + 1e-9


def test_the_evaluator_refuses_an_overloaded_pool() -> None:
    a, b = PORTFOLIOS[0]
    request = PlanRequest(inference=(a, b), constraints=LIMITS)
    instance = build_instance(request, BOOK)
    plan = optimize(request, BOOK, time_limit_s=30)
    assert plan.pools
    pool = plan.pools[0]
    short = dataclasses.replace(pool, replicas=tuple(max(0, r - 1) for r in pool.replicas))
    broken = dataclasses.replace(plan, pools=(short, *plan.pools[1:]))
    assert any(
        v.kind is ViolationKind.GPUS and v.subject == pool.id for v in check_solution(instance, broken)
    )


@pytest.mark.slow
@pytest.mark.parametrize("workloads", PORTFOLIOS)
def test_a_looser_quantile_never_raises_cost(workloads: tuple[InferenceWorkload, ...]) -> None:
    costs = [
        _tco(_plan(*workloads, constraints=LIMITS.model_copy(update={"capacity_quantile": q})))
        for q in (CapacityQuantile.P95, CapacityQuantile.P80, CapacityQuantile.P50)
    ]
    assert costs[0] >= costs[1] * (1 - 1e-9) >= costs[2] * (1 - 1e-9)


def test_restrictions_keep_deployments_out() -> None:
    w = _workload("a", 2.0, 500, 200, Sla(ttft_p95_ms=2000, tpot_p95_ms=50), max_tp=1, allow_mig=False)
    request = PlanRequest(inference=(w,), constraints=LIMITS)
    instance = build_instance(request, BOOK)
    assert instance.candidates
    assert all(c.tp == 1 and not c.mig_slice for c in instance.candidates)
    reasons = [r.reason for r in instance.rejections]
    assert any("allowed_tp / max_tp" in r for r in reasons) and any("allow_mig" in r for r in reasons)
    only_two = w.model_copy(update={"max_tp": None, "allowed_tp": (2,)})
    two = build_instance(PlanRequest(inference=(only_two,), constraints=LIMITS), BOOK)
    assert {c.tp for c in two.candidates if not c.mig_slice} == {2}


def test_headroom_scales_capacity_by_the_target_utilization() -> None:
    full = _workload("a", 2.0, 500, 200, Sla(ttft_p95_ms=2000, tpot_p95_ms=50), target_utilization=1.0)
    default = full.model_copy(update={"target_utilization": None})
    batch = full.model_copy(update={"target_utilization": None, "interactive": False})
    built = {
        name: build_instance(PlanRequest(inference=(w,), constraints=LIMITS), BOOK).candidates
        for name, w in (("full", full), ("default", default), ("batch", batch))
    }
    caps = {name: {c.id: c.capacity_req_s for c in cands} for name, cands in built.items()}
    assert caps["full"].keys() == caps["default"].keys()
    # Batch work is never disaggregated: the same deployments but the interactive units.
    assert caps["batch"].keys() == {c.id for c in built["full"] if c.unit is None}
    for cid, cap in caps["full"].items():
        assert caps["default"][cid] == pytest.approx(0.85 * cap)
        assert caps["batch"].get(cid, cap) == pytest.approx(cap)


def test_a_length_mix_is_served_size_by_size() -> None:
    mix = (
        LengthBucket(input_tokens=300, output_tokens=200, share=0.8),
        LengthBucket(input_tokens=6000, output_tokens=300, share=0.2),
    )
    w = InferenceWorkload(
        name="mixed",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        precision=Precision.FP8,
        length_mix=mix,
        peak_request_rate_per_s=20.0,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
    )
    assert (w.input_tokens, w.output_tokens) == (round(0.8 * 300 + 0.2 * 6000), round(0.8 * 200 + 0.2 * 300))
    plan = _plan(w)
    (a,) = plan.assignments
    for k, share in enumerate((0.8, 0.2)):
        served = sum(u.serving(0) * u.candidate.capacity_req_s for u in a.uses if u.candidate.load == k)
        assert served >= 20.0 * share * (1 - 1e-6)
    assert {u.candidate.input_tokens for u in a.uses} == {300, 6000}


RECORDED_BEFORE = Path(__file__).resolve().parents[2] / "golden" / "plans_before_headroom"


def _essentials(plan: dict) -> tuple:  # type: ignore[type-arg]
    """Fleet, deployments and TCO of a recorded PlanFleet answer."""
    fleet = sorted(
        (f["gpu_id"], f.get("mode", ""), f.get("gpu_count", 0), f.get("server_count", 0))
        for f in plan.get("fleet", [])
    )
    deployments = sorted(
        (d["workload_name"], d.get("gpu_id", ""), d.get("tp", 0), d.get("replicas", 0))
        for d in plan.get("deployments", [])
    )
    tco = float(plan["cost"]["horizon_tco"]["amount"]) if "cost" in plan else None
    return fleet, deployments, tco


@pytest.mark.slow
def test_headroom_one_reproduces_the_plans_recorded_before_headroom() -> None:
    """Every example at ``target_utilization: 1`` answers with the fleet, replicas and TCO recorded
    before issue 20 (``tests/golden/plans_before_headroom``)."""
    answers = dict(plans_json(target_utilization=1.0))
    recorded = sorted(p.stem for p in RECORDED_BEFORE.glob("*.json"))
    assert set(recorded) <= set(answers)  # examples added since have no answer from before
    for name in recorded:
        text = answers[name]
        now = _essentials(json.loads(text)["plan"])
        before = _essentials(
            json.loads((RECORDED_BEFORE / f"{name}.json").read_text(encoding="utf-8"))["plan"]
        )
        assert now[:2] == before[:2], name
        assert (now[2] is None) == (before[2] is None)
        if now[2] is not None and before[2] is not None:
            assert now[2] == pytest.approx(before[2], rel=1e-9), name
