"""Rentals come in whole instances: a plan rents multiples of an offer's ``gpus_per_instance`` (a
training run too), and a given fleet that does not is refused naming its line."""

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
    TrainingMethod,
    TrainingWorkload,
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


def test_a_one_gpu_training_run_on_an_eight_gpu_offer_rents_and_pays_the_whole_instance(
    book: Pricebook,
) -> None:
    # LoRA on a 14B model fits one B200; every B200 on-demand offer rents 8 GPUs at a time.
    request = PlanRequest(
        training=(
            TrainingWorkload(
                name="lora",
                model=ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
                method=TrainingMethod.LORA,
                tokens_per_run=20_000_000,
                runs_per_month=4,
                seq_len=2048,
                max_gpus_per_run=1,
            ),
        ),
        constraints=Constraints(
            currency="USD", allowed_gpus=("b200",), allowed_modes=(AcquisitionMode.ON_DEMAND,)
        ),
        options=SolverOptions(time_limit_s=10, compute_baselines=False, compute_sensitivity=False),
    )
    resolved = resolve(request, book)
    instance = build_instance(resolved.request, resolved.book)
    (choice,) = instance.training[0].choices
    assert choice.min_gpus == 1
    result = plan(resolved, time_limit_s=10)
    (line,) = result.fleet
    offer = next(o for o in book.offers if o.id == line.offer_id)
    assert (line.gpus, line.gpus_per_instance) == (8, 8)
    # The run's GPU-hours on one GPU, paid on all 8 GPUs of the instance for the run's hours.
    assert line.busy_gpu_hours_per_month == pytest.approx(8 * choice.gpu_hours_per_month)
    assert result.horizon_tco is not None
    paid = 8 * choice.gpu_hours_per_month * float(offer.price.amount) * request.constraints.horizon_months
    # The answer's amounts are in cents a month: half a cent a month of rounding at most.
    assert float(result.horizon_tco.amount) == pytest.approx(
        paid, abs=0.005 * request.constraints.horizon_months
    )
