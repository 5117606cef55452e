"""Diagnoses on real requests (pricebook + performance model)."""

from __future__ import annotations

import logging

import pytest
import structlog

from pricebook.loader import load_default
from pricebook.schema import Pricebook
from solver.domain import Constraints, InferenceWorkload, ModelRef, PlanRequest, Precision, Sla, money
from solver.optimizer import SolveStatus, optimize


@pytest.fixture(scope="module")
def book() -> Pricebook:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return load_default()


def test_a_model_no_allowed_gpu_holds_is_named_with_reasons(book: Pricebook) -> None:
    # Llama-3.1-405B at BF16 is ~810 GB of weights; 8 RTX 5090 hold 8 × 32 GB = 256 GB.
    w = InferenceWorkload(
        name="huge",
        model=ModelRef(model_id="meta-llama/Llama-3.1-405B"),
        precision=Precision.BF16,
        input_tokens=1000,
        output_tokens=200,
        peak_request_rate_per_s=1.0,
        sla=Sla(ttft_p95_ms=5000),
    )
    sol = optimize(
        PlanRequest(inference=(w,), constraints=Constraints(allowed_gpus=("RTX 5090",))),
        book,
        time_limit_s=10,
    )
    assert sol.status is SolveStatus.INFEASIBLE
    assert sol.diagnosis is not None
    (unservable,) = sol.diagnosis.unservable
    assert unservable.workload == "huge"
    assert any("GB" in reason for reason in unservable.reasons)


def test_binding_budget_reports_the_smallest_sufficient_budget(book: Pricebook) -> None:
    w = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        precision=Precision.FP8,
        input_tokens=1500,
        output_tokens=300,
        peak_request_rate_per_s=20.0,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
    )

    def request(budget: float | None) -> PlanRequest:
        cap = money(budget, "USD") if budget is not None else None
        return PlanRequest(
            inference=(w,), constraints=Constraints(allowed_gpus=("L40S", "H100"), capex_budget=cap)
        )

    free = optimize(request(None), book, time_limit_s=10)
    assert free.has_plan
    cheapest_capex = free.usage["capex"]
    short = optimize(request(cheapest_capex / 4), book, time_limit_s=10)
    assert short.status is SolveStatus.INFEASIBLE and short.diagnosis is not None
    (relax,) = short.diagnosis.binding_caps
    assert relax.cap == "capex_budget"
    # The smallest budget that works is at most the capex of the cheapest-TCO plan.
    assert cheapest_capex / 4 < relax.needed <= cheapest_capex * (1 + 1e-6)
    assert optimize(request(relax.needed * (1 + 1e-9)), book, time_limit_s=10).has_plan
