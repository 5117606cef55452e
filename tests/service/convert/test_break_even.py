"""AnalyzeBreakEven requests: a GPU type or a fleet (not both), a utilization in (0, 1]."""

from __future__ import annotations

import pytest
from convert_support import chat

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.break_even import break_even_request_from_proto
from solver.errors import InvalidRequest


def test_gpu_aliases_resolve_and_utilization_passes_through(book: Pricebook) -> None:
    query = break_even_request_from_proto(
        api.AnalyzeBreakEvenRequest(workloads=[chat()], gpu_id="H200 SXM", utilization=0.5), book
    )
    assert (query.gpu, query.fleet, query.utilization) == ("h200-sxm", None, 0.5)


def test_a_gpu_and_a_fleet_together_and_a_bad_utilization_are_refused(book: Pricebook) -> None:
    fleet = scenario_pb2.Fleet(
        items=[scenario_pb2.FleetItem(gpu_id="h200-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, count=1)]
    )
    request = api.AnalyzeBreakEvenRequest(workloads=[chat()], gpu_id="h200-sxm", fleet=fleet, utilization=1.5)
    with pytest.raises(InvalidRequest) as info:
        break_even_request_from_proto(request, book)
    assert [v.field for v in info.value.violations] == ["fleet", "utilization"]
