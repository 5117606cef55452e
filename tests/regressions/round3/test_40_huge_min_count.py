"""Found by ``bench.independent_checks`` (its mutation fuzzer, seed 28): a ``count_bounds``
minimum of 2,147,483,647 GPUs was planned — a fleet of more GPUs than a fleet line's count
(int32) holds — and answering it failed with INTERNAL ("Value out of range" while encoding the
fleet line). A minimum is now limited like every GPU count a request gives (at most 100,000), so
such a request is INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import grpc
import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlanError, FleetPlannerClient
from tests.reliability.mutation import SITE_AND_TRAINING, _parse

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("minimum", [2**31 - 1, 100_001])
def test_a_minimum_beyond_any_fleet_is_refused_naming_the_field(
    client: FleetPlannerClient, minimum: int
) -> None:
    request = _parse(SITE_AND_TRAINING, api.PlanFleetRequest())
    assert isinstance(request, api.PlanFleetRequest)
    request.constraints.count_bounds[0].min_count = minimum
    with pytest.raises(FleetPlanError) as refused:
        client.plan_fleet(request)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT, refused.value
    fields = [v.field for v in refused.value.violations]
    assert "constraints.count_bounds[0].min_count" in fields, fields
