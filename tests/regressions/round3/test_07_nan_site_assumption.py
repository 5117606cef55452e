"""Reproduction 07: a NaN or infinite value in ``pricebook_overrides.site_assumptions`` made
PlanFleet answer INTERNAL (the struct could not be turned into JSON). It is INVALID_ARGUMENT
naming the field, as other bad site values are."""

from __future__ import annotations

import grpc
import pytest

from clients import FleetPlanError, FleetPlannerClient
from tests.regressions.round3.robust_support import scenario

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_site_assumption_is_invalid_argument(client: FleetPlannerClient, value: float) -> None:
    request = scenario("07-nan-site-assumption-internal")
    request.pricebook_overrides.site_assumptions["pue"] = value
    with pytest.raises(FleetPlanError) as caught:
        client.plan_fleet(request)
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    fields = {v.field: v.description for v in caught.value.violations}
    assert fields == {"pricebook_overrides.site_assumptions.pue": "must be a finite number"}


def test_a_nested_non_finite_number_is_named_by_its_path(client: FleetPlannerClient) -> None:
    request = scenario("07-nan-site-assumption-internal")
    del request.pricebook_overrides.site_assumptions["pue"]
    request.pricebook_overrides.site_assumptions.get_or_create_struct("power")["price"] = float("nan")
    with pytest.raises(FleetPlanError) as caught:
        client.plan_fleet(request)
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in caught.value.violations] == ["pricebook_overrides.site_assumptions.power.price"]
