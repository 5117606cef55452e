"""Candidates and training choices built from a request (pricebook + performance model)."""

from __future__ import annotations

import pytest
from opt_factories import chat_workload

from pricebook import catalog
from pricebook.schema import Pricebook
from solver.domain import MAX_PLAN_GPUS, ModelRef, PlanRequest, TrainingMethod, TrainingWorkload
from solver.errors import InvalidRequest
from solver.optimizer.candidates import build_instance, training_demand
from solver.perf import resolve_model
from solver.perf.training import min_gpus_to_fit


def _full_70b_run(max_gpus_per_run: int | None = None) -> TrainingWorkload:
    """Full fine-tuning of a 70B model: ~16 bytes/param need several 80 GB cards."""
    return TrainingWorkload(
        name="full-70b",
        model=ModelRef(model_id="meta-llama/Llama-3.1-70B"),
        method=TrainingMethod.FULL,
        tokens_per_run=1e8,
        max_gpus_per_run=max_gpus_per_run,
    )


def test_a_run_that_needs_more_gpus_to_fit_than_allowed_is_rejected(book: Pricebook) -> None:
    h100 = catalog.gpu(book, "h100-sxm")
    run = _full_70b_run(max_gpus_per_run=1)

    needed = min_gpus_to_fit(resolve_model(run.model, book), h100, TrainingMethod.FULL, run.seq_len)
    assert needed > 1  # ~16 bytes/param of 70B parameters cannot sit on one 80 GB card
    demand = training_demand(run, book, [h100])
    assert demand.choices == ()
    (rejection,) = demand.rejections
    assert f"needs {needed} × h100-sxm to fit" in rejection.reason and "limited to 1 GPU" in rejection.reason


def test_without_a_limit_the_same_run_gets_a_choice(book: Pricebook) -> None:
    h100 = catalog.gpu(book, "h100-sxm")
    demand = training_demand(_full_70b_run(), book, [h100])
    assert len(demand.choices) == 1 and demand.choices[0].min_gpus > 1


def test_a_demand_that_needs_more_gpus_than_a_plan_may_hold_names_its_field(book: Pricebook) -> None:
    chat = chat_workload(1e9)
    small = chat.model_copy(update={"name": "small", "peak_request_rate_per_s": 10.0})
    with pytest.raises(InvalidRequest) as refused:
        build_instance(PlanRequest(inference=(small, chat)), book)
    ((field, reason),) = [(v.field, v.reason) for v in refused.value.violations]
    assert field == "inference[1].peak_request_rate_per_s"
    needed = int(reason.split("at least ")[1].split(" GPUs")[0].replace(",", ""))
    assert needed > MAX_PLAN_GPUS
    # Just under the limit, the same workload still builds (the bound is a lower bound on GPUs).
    scale = MAX_PLAN_GPUS / needed / 2
    fits = chat.model_copy(update={"peak_request_rate_per_s": 1e9 * scale})
    assert build_instance(PlanRequest(inference=(small, fits)), book).candidates
