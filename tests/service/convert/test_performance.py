"""EstimatePerformance cases: errors name the case field; partial failure keeps the good cases."""

from __future__ import annotations

import pytest

from api.fleetplan.v1 import common_pb2, performance_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.performance import performance_cases_from_proto
from solver import domain
from solver.errors import InvalidRequest


def test_performance_case_errors_name_the_case_field(book: Pricebook) -> None:
    good = api.EstimatePerformanceRequest().cases.add(
        gpu_id="h100-sxm",
        model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_len=100,
        output_len=100,
        concurrency=4,
    )
    request = api.EstimatePerformanceRequest(cases=[good, good.__class__(gpu_id="nope", input_len=10)])
    with pytest.raises(InvalidRequest) as info:
        performance_cases_from_proto(request, book)
    fields = {v.field for v in info.value.violations}
    assert {"cases[1].gpu_id", "cases[1].model", "cases[1].output_len"} <= fields
    assert not any(f.startswith("cases[0]") for f in fields)
    partial = performance_cases_from_proto(
        api.EstimatePerformanceRequest(cases=request.cases, allow_partial_failure=True), book
    )
    assert isinstance(partial[0], dict) and partial[0]["gpu"] == "h100-sxm" and partial[0]["concurrency"] == 4
    assert not isinstance(partial[1], dict)


def test_a_training_case_without_seq_len_uses_the_domain_default(book: Pricebook) -> None:
    case = performance_pb2.PerformanceCase(
        mode=performance_pb2.ESTIMATE_MODE_TRAIN,
        gpu_id="h100-sxm",
        model=common_pb2.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
        method=common_pb2.TRAINING_METHOD_LORA,
        tokens=1e8,
    )
    [data] = performance_cases_from_proto(api.EstimatePerformanceRequest(cases=[case]), book)
    assert isinstance(data, dict)
    assert data["seq_len"] == domain.TrainingWorkload.model_fields["seq_len"].default
    assert (data["mode"], data["method"]) == ("train", "lora")
