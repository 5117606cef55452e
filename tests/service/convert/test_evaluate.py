"""EvaluateFleet requests: the fleet's violations carry proto paths next to the scenario's."""

from __future__ import annotations

import pytest
from convert_support import chat

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from pricebook.schema import Pricebook
from service.convert.evaluate import evaluate_request_from_proto
from solver.errors import InvalidRequest


def test_fleet_items_need_a_mode_and_a_known_gpu(book: Pricebook) -> None:
    request = api.EvaluateFleetRequest(
        fleet=scenario_pb2.Fleet(items=[scenario_pb2.FleetItem(gpu_id="h999", count=2)]), workloads=[chat()]
    )
    with pytest.raises(InvalidRequest) as info:
        evaluate_request_from_proto(request, book)
    fields = {v.field for v in info.value.violations}
    assert fields == {"fleet.items[0].gpu_id", "fleet.items[0].mode"}


def test_an_empty_fleet_and_a_bad_scenario_are_reported_together(book: Pricebook) -> None:
    request = api.EvaluateFleetRequest(workloads=[chat(daily_tokens=-1)])
    with pytest.raises(InvalidRequest) as info:
        evaluate_request_from_proto(request, book)
    assert [v.field for v in info.value.violations] == ["fleet.items", "workloads[0].inference.daily_tokens"]
