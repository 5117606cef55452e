"""EstimatePerformance cases with an SLA: one replica's capacity there and what binds (issue 20)."""

from __future__ import annotations

import pytest

from api.fleetplan.v1 import common_pb2, performance_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import catalog, load_default
from service.convert.performance import performance_cases_from_proto, performance_results_to_proto
from solver.domain import ModelRef, Precision, Sla
from solver.perf import Deployment, WorkloadShape, resolve_model
from solver.perf.cases import EstimateCase, estimate_case
from solver.perf.inference import build_replica, open_loop_timing

BOOK = load_default()


@pytest.mark.parametrize(
    ("sla", "binds"),
    [(Sla(tpot_p95_ms=30), "tpot_p95_ms"), (Sla(ttft_p95_ms=300, tpot_p95_ms=60), "ttft_p95_ms")],
)
def test_the_capacity_meets_the_sla_and_just_above_it_the_binding_target_fails(sla: Sla, binds: str) -> None:
    case = EstimateCase(
        gpu="h100-sxm",
        num_gpus=4,
        tp=4,
        model="meta-llama/Llama-3.1-70B",
        precision=Precision.FP8,
        input_len=1000,
        output_len=200,
        sla_ttft_p95_ms=sla.ttft_p95_ms,
        sla_tpot_p95_ms=sla.tpot_p95_ms,
    )
    row = estimate_case(case, BOOK)
    assert row["sla_feasible"] and row["sla_binding"] == binds
    rate = row["sla_req_s_per_replica"]
    assert row["sla_output_tok_s_per_replica"] == pytest.approx(rate * 200)
    model = resolve_model(ModelRef(model_id="meta-llama/Llama-3.1-70B"), BOOK)
    replica = build_replica(model, Deployment(catalog.gpu(BOOK, "h100-sxm"), 4, Precision.FP8), None)
    shape = WorkloadShape(1000, 200)
    at = open_loop_timing(replica, shape, rate)
    above = open_loop_timing(replica, shape, rate * 1.02)
    assert at is not None and above is not None
    if sla.tpot_p95_ms is not None:
        assert at.tpot_s * 1e3 <= sla.tpot_p95_ms
    if sla.ttft_p95_ms is not None:
        assert at.ttft_p95_s * 1e3 <= sla.ttft_p95_ms
    missed = (
        above.tpot_s * 1e3 > (sla.tpot_p95_ms or 1e18)
        if binds == "tpot_p95_ms"
        else (above.ttft_p95_s * 1e3 > (sla.ttft_p95_ms or 1e18))
    )
    assert missed


def test_an_sla_case_needs_no_load_and_comes_back_through_the_service() -> None:
    case = performance_pb2.PerformanceCase(
        gpu_id="h100-sxm",
        model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_len=1000,
        output_len=200,
        sla=scenario_pb2.Sla(tpot_p95_ms=40),
    )
    request = api.EstimatePerformanceRequest(cases=[case])
    cases = performance_cases_from_proto(request, BOOK)
    rows = [estimate_case(EstimateCase.model_validate(c), BOOK) for c in cases if isinstance(c, dict)]
    (result,) = performance_results_to_proto(request, cases, rows).results
    assert result.WhichOneof("outcome") == "inference", result
    cap = result.inference.capacity_at_sla
    assert cap.feasible and cap.req_s_per_replica == pytest.approx(rows[0]["sla_req_s_per_replica"])
    assert cap.binding in {"tpot_p95_ms", "throughput"}
