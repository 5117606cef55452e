"""Request builders shared by the converter tests."""

from __future__ import annotations

from typing import Any

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.scenario import plan_request_from_proto
from solver.errors import InvalidRequest


def chat(name: str = "chat", **inference: Any) -> scenario_pb2.Workload:
    fields: dict[str, Any] = {
        "model": common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        "input_tokens": 1000,
        "output_tokens": 200,
        "daily_tokens": 50_000_000,
    }
    fields.update(inference)
    return scenario_pb2.Workload(name=name, inference=scenario_pb2.InferenceWorkload(**fields))


def lora(name: str = "ft", **training: Any) -> scenario_pb2.Workload:
    fields: dict[str, Any] = {
        "model": common_pb2.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
        "method": common_pb2.TRAINING_METHOD_LORA,
        "tokens_per_run": 1e8,
    }
    fields.update(training)
    return scenario_pb2.Workload(name=name, training=scenario_pb2.TrainingWorkload(**fields))


def violations(request: api.PlanFleetRequest, book: Pricebook) -> dict[str, str]:
    """Field path → reason of every violation converting ``request`` raises."""
    with pytest.raises(InvalidRequest) as info:
        plan_request_from_proto(request, book)
    return {v.field: v.reason for v in info.value.violations}
