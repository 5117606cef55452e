"""Reproduction 05: ``allowed_modes`` listing on_demand twice made PlanFleet answer INTERNAL (its
own plan failed verification). A repeated mode is the same set of modes: the answer is the plan of
the request with each mode once."""

from __future__ import annotations

from decimal import Decimal

import pytest

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients import FleetPlannerClient
from tests.regressions.round3.robust_support import scenario, without_extras

pytestmark = pytest.mark.slow


def test_a_repeated_mode_plans_as_the_modes_once(client: FleetPlannerClient) -> None:
    repeated = without_extras(scenario("05-duplicate-mode-training-internal-minimal"))
    modes = list(repeated.constraints.allowed_modes)
    assert modes.count(common_pb2.ACQUISITION_MODE_ON_DEMAND) == 2
    once = without_extras(scenario("05-duplicate-mode-training-internal-minimal"))
    del once.constraints.allowed_modes[:]
    once.constraints.allowed_modes.extend(dict.fromkeys(modes))

    answer = client.plan_fleet(repeated).plan
    reference = client.plan_fleet(once).plan

    assert reference.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert answer.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert Decimal(answer.cost.horizon_tco.amount) == Decimal(reference.cost.horizon_tco.amount)
    assert [(f.gpu_id, f.mode, f.gpu_count) for f in answer.fleet] == [
        (f.gpu_id, f.mode, f.gpu_count) for f in reference.fleet
    ]
