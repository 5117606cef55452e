"""Measured points in requests (``service.convert.measured``, issue 29): fields copied to the
domain, and a bad point refused as INVALID_ARGUMENT naming its proto field on every RPC."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from convert_support import chat

from api.fleetplan.v1 import common_pb2, performance_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert import sweep
from service.convert.evaluate import evaluate_request_from_proto
from service.convert.performance import performance_cases_from_proto
from service.convert.scenario import plan_request_from_proto
from solver.domain import Engine, Precision
from solver.errors import InvalidRequest


def _point(**fields: object) -> performance_pb2.MeasuredPoint:
    point = performance_pb2.MeasuredPoint(
        gpu_id="H100 SXM",
        model_id="meta-llama/Llama-3.1-8B",
        engine=common_pb2.ENGINE_SGLANG,
        precision=common_pb2.PRECISION_FP8,
        tp=1,
        input_len=1000,
        output_len=200,
        concurrency=16,
        measured_tpot_ms=8.0,
        measured_ttft_ms=90.0,
        ttft_statistic=performance_pb2.TTFT_STATISTIC_P95,
        label="demo",
    )
    for name, value in fields.items():
        setattr(point, name, value)
    return point


def test_plan_request_copies_every_field(book: Pricebook) -> None:
    request = plan_request_from_proto(api.PlanFleetRequest(workloads=[chat()], measurements=[_point()]), book)
    (point,) = request.measurements
    assert (point.gpu, point.model, point.engine, point.precision, point.tp) == (
        "H100 SXM",
        "meta-llama/Llama-3.1-8B",
        Engine.SGLANG,
        Precision.FP8,
        1,
    )
    assert (point.concurrency, point.measured_tpot_ms, point.ttft_statistic, point.label) == (
        16,
        8.0,
        "p95",
        "demo",
    )


BAD = [
    ({"gpu_id": "h999"}, "measurements[0].gpu_id"),
    ({"model_id": "nope/nope"}, "measurements[0].model_id"),
    ({"measured_tpot_ms": -1.0}, "measurements[0].measured_tpot_ms"),
    ({"tp": 3}, "measurements[0].tp"),
]


@pytest.mark.parametrize(("fields", "path"), BAD)
def test_bad_point_is_refused_on_every_rpc(book: Pricebook, fields: dict[str, object], path: str) -> None:
    point = _point(**fields)
    calls: list[tuple[Callable[[], object], str]] = [
        (
            lambda: plan_request_from_proto(
                api.PlanFleetRequest(workloads=[chat()], measurements=[point]), book
            ),
            path,
        ),
        (
            lambda: evaluate_request_from_proto(
                api.EvaluateFleetRequest(
                    workloads=[chat()],
                    measurements=[point],
                    fleet=scenario_pb2.Fleet(items=[scenario_pb2.FleetItem(gpu_id="h100-sxm", count=8)]),
                ),
                book,
            ),
            path,
        ),
        (
            lambda: sweep.sweep_request_from_proto(
                api.SweepPlansRequest(
                    base=api.PlanFleetRequest(workloads=[chat()], measurements=[point]),
                    dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER,
                    values=[1.0],
                ),
                book,
            ),
            f"base.{path}",
        ),
    ]
    for call, expected in calls:
        with pytest.raises(InvalidRequest) as info:
            call()
        assert expected in [v.field for v in info.value.violations]
    estimate = api.EstimatePerformanceRequest(
        cases=[
            performance_pb2.PerformanceCase(gpu_id="h100-sxm", input_len=10, output_len=10, concurrency=1)
        ],
        measurements=[point],
    )
    estimate.cases[0].model.model_id = "meta-llama/Llama-3.1-8B"
    with pytest.raises(InvalidRequest) as info:
        performance_cases_from_proto(estimate, book)
    assert path in [v.field for v in info.value.violations]


def test_points_missing_the_load_name_it(book: Pricebook) -> None:
    point = _point()
    point.ClearField("concurrency")
    with pytest.raises(InvalidRequest) as info:
        plan_request_from_proto(api.PlanFleetRequest(workloads=[chat()], measurements=[point]), book)
    (violation,) = info.value.violations
    assert violation.field.startswith("measurements[0]") and "concurrency" in violation.reason
