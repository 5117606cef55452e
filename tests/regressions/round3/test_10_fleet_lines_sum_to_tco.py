"""Reproduction 10's side of issue 28 item 9: the public-sector bid's fleet lines summed to 59 KRW
more than its horizon TCO (the TCO was rounded once from unrounded sums, each line on its own).
One rounding rule now: the lines are rounded once and the TCO is their sum."""

from __future__ import annotations

from decimal import Decimal

import pytest

from clients import FleetPlannerClient
from tests.regressions.round3.robust_support import scenario, without_extras

pytestmark = pytest.mark.slow


def test_the_bids_fleet_lines_add_up_to_its_tco(client: FleetPlannerClient) -> None:
    request = without_extras(scenario("10-pooled-replicas-shown-zero"))
    request.solver_options.time_limit_s = 20  # any plan of several lines shows it
    # At most four H100 NVL: the bid then needs a second GPU type, so the fleet has several lines
    # (all on one H100 NVL server since cards share: one line alone rounds to the TCO trivially).
    request.constraints.count_bounds.add(gpu_id="h100-nvl", max_count=4)
    plan = client.plan_fleet(request).plan
    assert len(plan.fleet) >= 2  # several lines, each rounded on its own
    lines = sum((Decimal(f.horizon_cost.amount) for f in plan.fleet), Decimal(0))
    assert lines == Decimal(plan.cost.horizon_tco.amount)
    components = sum((Decimal(c.horizon_amount.amount) for c in plan.cost.components), Decimal(0))
    assert components == Decimal(plan.cost.horizon_tco.amount)
