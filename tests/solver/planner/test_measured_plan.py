"""A plan given measurements showing a deployment 25 % faster than predicted sizes with that
capacity and says so (issue 29, "Done when")."""

from __future__ import annotations

import math

from pricebook import catalog
from pricebook.schema import Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    LengthBucket,
    MeasuredPoint,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
    SolverOptions,
)
from solver.optimizer.results import SolveStatus
from solver.perf import ClosedLoop, Deployment, WorkloadShape, estimate_inference, resolve_model
from solver.planner import PlanResult, evaluate, plan
from solver.resolve import resolve

MODEL = "meta-llama/Llama-3.1-8B"


def _request(measurements: tuple[MeasuredPoint, ...] = (), rate: float = 300.0) -> PlanRequest:
    return PlanRequest(
        inference=(
            InferenceWorkload(
                name="chat",
                model=ModelRef(model_id=MODEL),
                precision=Precision.FP8,
                allowed_tp=(1,),
                allow_mig=False,
                input_tokens=1000,
                output_tokens=200,
                peak_request_rate_per_s=rate,
                sla=Sla(ttft_p95_ms=1500, tpot_p95_ms=30),
            ),
        ),
        constraints=Constraints(currency="USD", allowed_gpus=("h100-sxm",)),
        options=SolverOptions(time_limit_s=10, compute_baselines=False, compute_sensitivity=False),
        measurements=measurements,
    )


def _faster_point(book: Pricebook) -> MeasuredPoint:
    model = resolve_model(ModelRef(model_id=MODEL), book)
    deployment = Deployment(catalog.gpu(book, "h100-sxm"), 1, Precision.FP8)
    est = estimate_inference(model, deployment, WorkloadShape(1000, 200), ClosedLoop(32))
    return MeasuredPoint(
        gpu="H100 SXM",
        model=MODEL,
        precision=Precision.FP8,
        input_len=1000,
        output_len=200,
        concurrency=32,
        measured_output_tok_s=est.output_tok_s * 1.25,
        measured_tpot_ms=est.tpot_ms / 1.25,
        measured_ttft_ms=est.ttft_ms / 1.25,
        label="rented hour",
    )


def _gpus(result: PlanResult) -> int:
    return sum(line.gpus for line in result.fleet)


def test_faster_measurement_is_used_and_marked(book: Pricebook) -> None:
    before = plan(resolve(_request(), book), time_limit_s=10)
    after = plan(resolve(_request((_faster_point(book),)), book), time_limit_s=10)
    assert _gpus(after) <= _gpus(before)
    (old,) = before.solution.assignments
    (new,) = after.solution.assignments
    primary = new.primary.candidate
    assert primary.measured_by == ("rented hour",) and "rented hour" in primary.measured_note
    assert old.primary.candidate.measured_by == ()
    # One replica carries ≥ 1.25 × as much at the same SLA (less the one-point shrinkage).
    assert primary.rated_req_s >= old.primary.candidate.rated_req_s * 1.25 * 0.97
    # Fewer replicas carry the same demand: demand ÷ the sized capacity of one, rounded up.
    replicas_before, replicas_after = (max(u.replicas) for a in (old, new) for u in a.uses)
    assert replicas_after == math.ceil(300.0 / primary.capacity_req_s - 1e-9)
    assert replicas_before == math.ceil(300.0 / old.primary.candidate.capacity_req_s - 1e-9)
    assert replicas_after < replicas_before


def test_a_fleet_sized_by_measurements_is_evaluated_with_them(book: Pricebook) -> None:
    """EvaluateFleet checks a fleet with the measured capacities the plan used: one 8-GPU server
    carries a demand of 7.6 measured replicas with the points, and falls short without them."""
    point = _faster_point(book)
    planned = plan(resolve(_request((point,)), book), time_limit_s=10)
    per_replica = planned.solution.assignments[0].primary.candidate.capacity_req_s
    rate = 7.6 * per_replica
    fleet = Fleet(items=(FleetItem(gpu="h100-sxm", mode=AcquisitionMode.BUY, count=8),))
    with_points = evaluate(fleet, resolve(_request((point,), rate), book), compare_with_optimal=False)
    without = evaluate(fleet, resolve(_request((), rate), book), compare_with_optimal=False)
    assert with_points.feasible and not without.feasible
    (use,) = (u for a in with_points.plan.solution.assignments for u in a.uses)
    assert use.candidate.measured_by == ("rented hour",)


def test_a_measured_pool_of_two_request_sizes_is_checked_on_the_measured_clock(book: Pricebook) -> None:
    """Two request sizes share the measured deployment's replicas: the mix is timed on the measured
    clock, so the pool carries the demand with fewer (or as many) replicas as without the points."""
    mix = (
        LengthBucket(input_tokens=1000, output_tokens=200, share=0.5),
        LengthBucket(input_tokens=3000, output_tokens=400, share=0.5),
    )
    base = _request()
    workload = base.inference[0].model_copy(update={"length_mix": mix})
    unmeasured = base.model_copy(update={"inference": (workload,)})
    measured = unmeasured.model_copy(update={"measurements": (_faster_point(book),)})
    before = plan(resolve(unmeasured, book), time_limit_s=10)
    after = plan(resolve(measured, book), time_limit_s=10)
    assert after.status is before.status is SolveStatus.OPTIMAL
    replicas = [sum(max(u.replicas) for a in p.solution.assignments for u in a.uses) for p in (before, after)]
    assert replicas[1] < replicas[0]
    assert all(
        u.candidate.measured_by == ("rented hour",) for a in after.solution.assignments for u in a.uses
    )
