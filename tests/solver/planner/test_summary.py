"""The plan's summary text (``solver.planner.summary``)."""

from __future__ import annotations

import pytest
from planner_factories import request

from pricebook.schema import Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    OwnedGpus,
    PlanRequest,
    Sla,
    SolverOptions,
)
from solver.planner import plan
from solver.planner.summary import summary_text
from solver.resolve import resolve
from tests.solver.optimizer.opt_factories import no_plan


def test_summary_of_a_plan_that_is_its_own_best_single_gpu_fleet(book: Pricebook) -> None:
    only_h200 = request().model_copy(
        update={"constraints": Constraints(currency="USD", allowed_gpus=("h200-sxm",))}
    )
    result = plan(resolve(only_h200, book), time_limit_s=30)
    assert result.baseline_saving is not None and result.baseline_saving.saving.amount == 0
    assert result.summary.endswith(" It is also the best single-GPU fleet.")
    assert "Saves" not in result.summary


def test_a_clustered_plan_says_why_it_is_not_proven(book: Pricebook, monkeypatch: pytest.MonkeyPatch) -> None:
    day = tuple(0.2 + (h if h < 12 else 24 - h) / 12 for h in range(24))
    chat = InferenceWorkload(
        name="day",
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        input_tokens=1500,
        output_tokens=300,
        peak_request_rate_per_s=20.0,
        hourly_profile=day,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
    )
    night = chat.model_copy(update={"name": "night", "hourly_profile": tuple(reversed(day))})
    request_ = PlanRequest(
        inference=(chat, night),
        constraints=Constraints(
            currency="USD", allowed_gpus=("h100-sxm", "l40s"), allowed_modes=(AcquisitionMode.ON_DEMAND,)
        ),
        options=SolverOptions(relative_gap=0.0, compute_baselines=False, compute_sensitivity=False),
    )
    monkeypatch.setattr("solver.optimizer.candidates.EXACT_BUCKET_REPLICA_VARIABLES", 0)
    result = plan(resolve(request_, book), time_limit_s=30)
    assert result.status.value == "feasible"
    assert any(
        w.startswith("hours with different demand were grouped into 6 buckets") for w in result.warnings
    )
    assert not any(w.startswith("time limit reached") for w in result.warnings)


def test_owned_gpus_a_plan_does_not_need_are_named_as_unused(book: Pricebook) -> None:
    small = request(**{"compute_baselines": False, "compute_sensitivity": False})
    owned = (OwnedGpus(gpu="h100-sxm", count=64),)
    with_owned = small.model_copy(
        update={"constraints": small.constraints.model_copy(update={"owned": owned})}
    )
    result = plan(resolve(with_owned, book), time_limit_s=30)
    used = sum(line.gpus for line in result.fleet if line.gpu == "h100-sxm" and line.owned)
    assert used < 64
    assert any(
        w.startswith(f"{64 - used} of the 64 owned h100-sxm GPUs are left unused") for w in result.warnings
    )


def test_no_plan_in_time_says_so_rather_than_nothing() -> None:
    text = summary_text(no_plan(2.0), None, None)
    assert text.startswith("No plan (no_solution). The solver found no plan within its time limit (2 s)")
