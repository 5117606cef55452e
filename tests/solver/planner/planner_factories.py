"""A small real plan request (the default pricebook, the real performance model and MIP), shared
by the planner tests.

Expectations are checked against independent re-solves (a changed pricebook, a single allowed
GPU type) and against sums derived in the tests, never against numbers copied from the planner.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from pricebook.schema import Offer, Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    PlanRequest,
    Sla,
    SolverOptions,
)

GPUS = ("h100-sxm", "h200-sxm", "rtx-pro-6000-server")

BARE = {"compute_baselines": False, "compute_sensitivity": False}


def request(**options: bool) -> PlanRequest:
    return PlanRequest(
        inference=(
            InferenceWorkload(
                name="chat",
                model=ModelRef(model_id="meta-llama/Llama-3.1-70B"),
                input_tokens=2000,
                output_tokens=500,
                daily_tokens=2_000_000_000,
                sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
            ),
            InferenceWorkload(
                name="batch",
                model=ModelRef(model_id="Qwen/Qwen3-14B"),
                input_tokens=7000,
                output_tokens=1024,
                daily_tokens=5_000_000_000,
                interactive=False,
            ),
        ),
        constraints=Constraints(currency="USD", allowed_gpus=GPUS),
        options=SolverOptions(time_limit_s=10, **options),
    )


def h200_l40s_request(
    constraints: Mapping[str, object] | None = None, *, options: Mapping[str, bool] = BARE
) -> PlanRequest:
    """``request(**options)`` on H200 SXM and L40S, bought or rented on demand, with ``constraints``
    set over those."""
    base = request(**options)
    update = {
        "allowed_gpus": ("h200-sxm", "l40s"),
        "allowed_modes": (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
        **(constraints or {}),
    }
    return base.model_copy(update={"constraints": base.constraints.model_copy(update=update)})


def budget_request() -> PlanRequest:
    return request(**BARE)


def scaled_book(book: Pricebook, gpu: str, factor: float) -> Pricebook:
    """The pricebook with every purchase and rental price of ``gpu`` × factor."""

    def scaled(offer: Offer) -> Offer:
        if offer.gpu != gpu:
            return offer
        price = offer.price.model_copy(update={"amount": offer.price.amount * Decimal(repr(factor))})
        return offer.model_copy(update={"price": price})

    return book.model_copy(update={"offers": tuple(scaled(o) for o in book.offers)})


def small_chat_request(
    options: Mapping[str, bool], *, hourly_profile: tuple[float, ...] | None = None
) -> PlanRequest:
    """An 8B chat (3e9 tokens a day) on L40S or H100 SXM: small enough to re-plan many times;
    ``options`` are the solver options besides a 10 s time limit."""
    chat = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_tokens=1000,
        output_tokens=300,
        daily_tokens=3_000_000_000,
        hourly_profile=hourly_profile,
        sla=Sla(ttft_p95_ms=1000, tpot_p95_ms=40),
    )
    return PlanRequest(
        inference=(chat,),
        constraints=Constraints(currency="USD", allowed_gpus=("l40s", "h100-sxm")),
        options=SolverOptions(time_limit_s=10, **options),
    )
