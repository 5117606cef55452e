"""A given fleet's lines as the MIP's groups of options (``solver.optimizer.fleet_lines``): counts
priced with a valid mix of whole rental instances, named offers, and the lines refused."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

from pricebook.loader import load_default
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    FleetItem,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    SolverOptions,
)
from solver.errors import InvalidRequest
from solver.optimizer import evaluate_fleet
from solver.optimizer.candidates import build_instance
from solver.optimizer.fleet_lines import whole_instances

BOOK = load_default()
OD = AcquisitionMode.ON_DEMAND
HOURS = Decimal(8760) / 12
MONTHS = 24
EXACT = SolverOptions(relative_gap=0.0, time_limit_s=30, compute_baselines=False, compute_sensitivity=False)


def price(offer_id: str) -> Decimal:
    offer = next(o for o in BOOK.offers if o.id == offer_id)
    assert offer.price.currency == "USD"
    return offer.price.amount


def a100_request(rate: float) -> PlanRequest:
    return PlanRequest(
        inference=(
            InferenceWorkload(
                name="chat",
                model=ModelRef(model_id="Qwen/Qwen3-8B"),
                input_tokens=512,
                output_tokens=256,
                peak_request_rate_per_s=rate,
            ),
        ),
        constraints=Constraints(
            currency="USD", horizon_months=MONTHS, allowed_gpus=("a100-sxm-80gb",), allowed_modes=(OD,)
        ),
        options=EXACT,
    )


@pytest.mark.parametrize("units", [(8,), (1, 8), (2, 8), (3, 8), (4, 6)])
def test_whole_instances_agrees_with_brute_force(units: tuple[int, ...]) -> None:
    for count in range(60):
        sums = {
            sum(n * u for n, u in zip(ns, units, strict=True))
            for ns in itertools.product(range(61), repeat=len(units))
        }
        assert whole_instances(count, units) is (count in sums), (count, units)


def test_nine_a100_on_demand_are_eight_on_the_8_gpu_offer_and_one_on_the_1_gpu_offer() -> None:
    # A demand that needs 9 GPUs every hour: 8.5 × the most a GPU serves on any deployment.
    probe = build_instance(a100_request(1.0), BOOK)
    per_gpu = max(c.capacity_req_s / c.gpus_per_replica for c in probe.candidates)
    request = a100_request(8.5 * per_gpu)
    fleet = Fleet(items=(FleetItem(gpu="a100-sxm-80gb", mode=OD, count=9),))
    evaluation = evaluate_fleet(fleet, request, BOOK, time_limit_s=30, compare_optimal=False)
    assert evaluation.feasible, evaluation.messages
    lines = {o.option_id: o.on_demand_gpus for o in evaluation.solution.options}
    assert lines == {
        "a100-sxm-80gb/on_demand/a100-sxm-80gb.od.lambda-8x": (8,),
        "a100-sxm-80gb/on_demand/a100-sxm-80gb.od.runpod-secure": (1,),
    }
    mix = (8 * price("a100-sxm-80gb.od.lambda-8x") + price("a100-sxm-80gb.od.runpod-secure")) * HOURS * MONTHS
    assert evaluation.tco is not None
    assert abs(Decimal(str(evaluation.tco)) - mix) <= Decimal("0.01")
    assert mix < 9 * price("a100-sxm-80gb.od.runpod-secure") * HOURS * MONTHS


def test_a_line_naming_its_offer_is_priced_on_it_even_when_the_policy_drops_it() -> None:
    # Lambda's 8-GPU H100 instance costs what RunPod's single GPU does: the policy drops it.
    assert price("h100-sxm.od.lambda-8x") == price("h100-sxm.od.runpod-secure")
    request = a100_request(1.0).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h100-sxm",), allowed_modes=(OD,))}
    )
    assert "h100-sxm/on_demand/h100-sxm.od.lambda-8x" not in {
        o.id for o in build_instance(request, BOOK).options
    }
    fleet = Fleet(items=(FleetItem(gpu="h100-sxm", mode=OD, count=8, offer="h100-sxm.od.lambda-8x"),))
    instance = build_instance(request, BOOK, fleet=fleet)
    assert [o.offer_id for o in instance.options] == ["h100-sxm.od.lambda-8x"]


@pytest.mark.parametrize(
    ("item", "field", "reason"),
    [
        (FleetItem(gpu="b200", mode=OD, count=3), "fleet.items[0].count", "3 is not a multiple of 8"),
        (
            FleetItem(gpu="a100-sxm-80gb", mode=OD, count=2, offer="nope"),
            "fleet.items[0].offer",
            "unknown offer",
        ),
        (
            FleetItem(gpu="a100-sxm-80gb", mode=OD, count=8, offer="a100-sxm-80gb.rsv12.aws-p4de"),
            "fleet.items[0].offer",
            "is a reserved offer for a100-sxm-80gb, not on_demand a100-sxm-80gb",
        ),
    ],
)
def test_lines_no_offer_can_price_are_refused_naming_them(item: FleetItem, field: str, reason: str) -> None:
    request = a100_request(1.0).model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=(item.gpu,), allowed_modes=(OD,))}
    )
    with pytest.raises(InvalidRequest) as refused:
        build_instance(request, BOOK, fleet=Fleet(items=(item,)))
    (violation,) = refused.value.violations
    assert violation.field == field
    assert reason in violation.reason


def test_offers_are_named_on_every_line_of_a_gpu_and_mode_or_on_none() -> None:
    with pytest.raises(
        ValueError, match="name the offer on every line of a100-sxm-80gb on_demand or on none"
    ):
        Fleet(
            items=(
                FleetItem(gpu="a100-sxm-80gb", mode=OD, count=8, offer="a100-sxm-80gb.od.lambda-8x"),
                FleetItem(gpu="a100-sxm-80gb", mode=OD, count=1),
            )
        )
    with pytest.raises(ValueError, match="an owned line names no offer"):
        FleetItem(gpu="h200-sxm", mode=AcquisitionMode.BUY, count=8, owned=True, offer="x")
