"""NVL72 rack GPUs (GB200, GB300; issue 33) are rental_only: a plan allowed to buy them still only
rents them, whole racks of 72 GPUs at a time, through their offers, at the offer's price; the plan
warns that GB300's price is an estimate; owning one is refused."""

from __future__ import annotations

from decimal import Decimal

import pytest
from planner_factories import BARE, request

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, Fleet, FleetItem, OwnedGpus
from solver.errors import InvalidRequest
from solver.planner import PlanResult, evaluate, plan
from solver.resolve import resolve

HOURS_PER_MONTH = Decimal(24 * 365) / 12
"""730: a reservation bills every hour of the month."""


def _rack_plan(book: Pricebook, gpu: str) -> PlanResult:
    base = request(**BARE)
    modes = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)
    constraints = base.constraints.model_copy(update={"allowed_gpus": (gpu,), "allowed_modes": modes})
    return plan(resolve(base.model_copy(update={"constraints": constraints}), book), time_limit_s=20)


def test_gb200_is_rented_as_whole_racks_at_the_aws_capacity_block_price(book: Pricebook) -> None:
    result = _rack_plan(book, "gb200")
    assert result.fleet, result.summary
    offer = next(o for o in book.offers if o.id == "gb200.rsv1.aws-u-p6e-gb200x72-capacity-block")
    for line in result.fleet:
        assert line.mode is AcquisitionMode.RESERVED and line.offer_id == offer.id
        assert line.gpus % 72 == 0 and line.gpus_per_instance == 72 and line.server_id is None
        expected = line.gpus * offer.price.amount * HOURS_PER_MONTH * result.horizon_months
        assert line.horizon_cost.amount == expected.quantize(Decimal("0.01"))
    assert result.solution.usage.get("capex", 0) == 0


def test_gb300_is_rented_at_its_labelled_estimate(book: Pricebook) -> None:
    result = _rack_plan(book, "gb300")
    (line,) = result.fleet
    assert line.gpu == "gb300" and line.mode is AcquisitionMode.RESERVED and line.gpus % 72 == 0
    assert line.price_label is not None and line.price_label.value == "estimate"
    assert any("gb300.rsv36.est-semianalysis-survey" in w and "estimate" in w for w in result.warnings)


def test_owning_a_rental_only_gpu_is_refused_naming_the_field(book: Pricebook) -> None:
    """No server model holds an NVL72 rack GPU here, so owned ones could not be priced honestly
    (host power, space): the request and a given fleet are refused, naming the field."""
    base = request(**BARE)
    owned = base.constraints.model_copy(update={"owned": (OwnedGpus(gpu="GB200 NVL72", count=72),)})
    with pytest.raises(InvalidRequest) as caught:
        resolve(base.model_copy(update={"constraints": owned}), book)
    (violation,) = caught.value.violations
    assert violation.field == "constraints.owned[0].gpu" and "rental_only" in violation.reason
    resolved = resolve(base, book)
    fleet = Fleet(items=(FleetItem(gpu="gb200", mode=AcquisitionMode.BUY, count=72, owned=True),))
    with pytest.raises(InvalidRequest) as caught:
        evaluate(fleet, resolved, time_limit_s=10, compare_with_optimal=False)
    (violation,) = caught.value.violations
    assert violation.field == "fleet.items[0].owned" and "rental_only" in violation.reason
