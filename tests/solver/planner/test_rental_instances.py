"""Rentals come in whole instances: a plan rents multiples of an offer's ``gpus_per_instance``, and
a given fleet that does not is refused naming its line."""

from __future__ import annotations

import pytest

from pricebook.schema import Pricebook
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
from solver.optimizer.candidates import build_instance
from solver.planner import plan
from solver.resolve import resolve


def small_request(modes: tuple[AcquisitionMode, ...]) -> PlanRequest:
    # A 14B batch job one B200 could serve many times over: renting by the GPU would take one.
    return PlanRequest(
        inference=(
            InferenceWorkload(
                name="batch",
                model=ModelRef(model_id="Qwen/Qwen3-14B"),
                input_tokens=2000,
                output_tokens=200,
                daily_tokens=50_000_000,
                interactive=False,
            ),
        ),
        constraints=Constraints(currency="USD", allowed_gpus=("b200",), allowed_modes=modes),
        options=SolverOptions(time_limit_s=10, compute_baselines=False, compute_sensitivity=False),
    )


def test_a_plan_rents_whole_eight_gpu_instances(book: Pricebook) -> None:
    result = plan(resolve(small_request((AcquisitionMode.ON_DEMAND,)), book), time_limit_s=10)
    (line,) = result.fleet
    offer = next(o for o in book.offers if o.id == line.offer_id)
    # Every B200 on-demand offer in the book is an 8-GPU instance (Lambda 8×, AWS p6-b200.48xlarge).
    assert offer.gpus_per_instance == 8 == line.gpus_per_instance
    assert line.gpus == 8
    assert all(count % 8 == 0 for count in line.on_demand_gpus_by_hour)


def test_a_fleet_renting_part_of_an_instance_is_refused(book: Pricebook) -> None:
    resolved = resolve(small_request((AcquisitionMode.ON_DEMAND,)), book)
    fleet = Fleet(items=(FleetItem(gpu="b200", mode=AcquisitionMode.ON_DEMAND, count=3),))
    with pytest.raises(InvalidRequest) as refused:
        build_instance(resolved.request, resolved.book, fleet=fleet)
    (violation,) = refused.value.violations
    assert violation.field == "fleet.items[0].count"
    assert "whole 8-GPU instances: 3 is not a multiple of 8" in violation.reason
