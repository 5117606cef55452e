"""Golden scenarios from the seed articles (../shared/seeds), solved with the real pricebook,
performance model and economics. Each asserts the qualitative outcome the seed reports; the
numbers that decide it come from the models, never from this file.

Seed prices: the KRW purchase offers ``*.seed000-krw`` (RTX PRO 6000 15M, H100 42M, H200 50M
KRW per card); the seed prices cards alone, hence ``include_host_costs=False``.
"""

from __future__ import annotations

import logging

import pytest
import structlog

from bench.solver_scaling import SEED_500M_PAIR, seed_500m_krw_request
from pricebook import catalog
from pricebook.loader import load_default
from pricebook.schema import Pricebook, ScaleUpLink
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    ModelSpec,
    PlanRequest,
    Precision,
    Sla,
    TrainingMethod,
    TrainingWorkload,
    money,
)
from solver.optimizer import FleetSolution, SolveStatus, optimize
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import FleetInstance
from solver.perf import resolve_model
from solver.perf.training import estimate_training
from solver.resolve import resolve

SEED_GPUS = ("RTX PRO 6000", "H100", "H200")
RTX = "rtx-pro-6000-ws"
H200 = "h200-sxm"


@pytest.fixture(scope="module")
def book() -> Pricebook:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    return load_default()


def krw(budget: int | None = None, allowed: tuple[str, ...] = SEED_GPUS) -> Constraints:
    return Constraints(
        currency="KRW",
        include_host_costs=False,
        allowed_gpus=allowed,
        capex_budget=money(budget, "KRW") if budget else None,
    )


def plan(request: PlanRequest, book: Pricebook) -> FleetSolution:
    return optimize(ids(request, book), book, time_limit_s=20)


def instance(request: PlanRequest, book: Pricebook) -> FleetInstance:
    return build_instance(ids(request, book), book)


def ids(request: PlanRequest, book: Pricebook) -> PlanRequest:
    """The seeds name GPUs by alias ("RTX PRO 6000"); the optimizer takes catalogue ids."""
    return resolve(request, book).request


def bulk_14b(daily_tokens: int) -> InferenceWorkload:
    # Seed 000's batch benchmark: Ministral-3-14B FP8, 7000 in / 1024 out, no interactive SLA.
    return InferenceWorkload(
        name="bulk-14b",
        model=ModelRef(model_id="mistralai/Ministral-3-14B-Instruct-2512"),
        precision=Precision.FP8,
        input_tokens=7000,
        output_tokens=1024,
        daily_tokens=daily_tokens,
        interactive=False,
    )


def test_1_sixty_million_krw_buys_rtx_pro_6000_and_more_work_per_won(book: Pricebook) -> None:
    probe = instance(PlanRequest(inference=(bulk_14b(10**9),), constraints=krw()), book)
    # Best request rate per whole GPU on each card (any TP / MIG split the perf model allows).
    best = {
        g: max(c.capacity_req_s / c.gpus_per_replica for c in probe.candidates if c.gpu == g)
        for g in (RTX, H200)
    }
    price = {o.gpu: o.capex_per_gpu for o in probe.options}
    tokens_per_request = 7000 + 1024
    # Demand: what 3.5 RTX PRO 6000 cards process in a day (perf), i.e. more than one H200 can.
    daily = int(3.5 * best[RTX] * tokens_per_request * 86_400)
    assert daily > best[H200] * tokens_per_request * 86_400
    sol = plan(PlanRequest(inference=(bulk_14b(daily),), constraints=krw(60_000_000)), book)
    assert sol.status is SolveStatus.OPTIMAL
    assert set(sol.gpu_counts()) == {RTX}
    assert sol.gpu_counts()[RTX] == 4
    assert sol.usage["capex"] <= 60_000_000
    # Work per won: 4 RTX PRO 6000 (60M) vs 1 H200 (50M) — the seed reports 1.8×.
    rtx_per_won = 4 * best[RTX] / (4 * price[RTX])
    h200_per_won = best[H200] / price[H200]
    assert rtx_per_won > h200_per_won


def test_2_lora_fine_tuning_with_deadline_picks_hbm_gpus(book: Pricebook) -> None:
    # Seed 000 compares the time-to-train of one 14B LoRA fine-tune on ONE GPU of each kind
    # (RTX PRO 6000 ~3 days, H100 ~1 day, H200 16–18 h) and concludes that with an R&D deadline only
    # the HBM GPUs make it. The deadline here sits between the performance model's own single-GPU
    # estimates for H100 and RTX PRO 6000, so the model's physics decides, not this file.
    model = resolve_model(ModelRef(model_id="Qwen/Qwen3-14B"), book)
    tokens = 2e9
    hours = {
        g: estimate_training(model, catalog.gpu(book, g), 1, TrainingMethod.LORA, 4096, tokens).hours
        for g in (RTX, "h100-sxm")
    }
    assert hours[RTX] > hours["h100-sxm"]  # fewer tensor TFLOPs and GDDR7 instead of HBM3
    deadline = (hours[RTX] * hours["h100-sxm"]) ** 0.5
    ft = TrainingWorkload(
        name="ft-14b",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        method=TrainingMethod.LORA,
        tokens_per_run=tokens,
        runs_per_month=4,
        deadline_hours=deadline,
        max_gpus_per_run=1,
    )
    request = PlanRequest(training=(ft,), constraints=krw())
    sol = plan(request, book)
    assert sol.has_plan
    (alloc,) = sol.training
    assert alloc.gpu in {"h100-sxm", H200}
    # The RTX PRO 6000 is rejected for the deadline, and the reason says so.
    (demand,) = instance(request, book).training
    rejected = [r for r in demand.rejections if r.gpu == RTX]
    assert rejected and "deadline" in rejected[0].reason
    assert rejected[0].label == f"{RTX} ×1 bf16"  # a one-GPU run, not a "TP1" serving group


def test_3_hundred_b_dense_chat_needs_nvlink_tp(book: Pricebook) -> None:
    chat = InferenceWorkload(
        name="chat-100b",
        model=ModelRef(spec=ModelSpec(params_b=100)),
        precision=Precision.BF16,
        input_tokens=2000,
        output_tokens=500,
        peak_request_rate_per_s=1.0,
        sla=Sla(min_per_user_tok_s=30, ttft_p95_ms=3000),
    )
    request = PlanRequest(inference=(chat,), constraints=krw(allowed=("RTX PRO 6000", "H200")))
    sol = plan(request, book)
    assert sol.status is SolveStatus.OPTIMAL
    (a,) = sol.assignments
    chosen = a.primary.candidate
    assert chosen.gpu == H200 and chosen.tp >= 2
    assert catalog.gpu(book, chosen.gpu).scale_up_link is ScaleUpLink.NVLINK
    assert a.primary.candidate.per_user_tok_s >= 30
    # RTX PRO 6000 × TP 4 over PCIe is rejected, and the reason names the per-user speed.
    built = instance(request, book)
    rtx_tp4 = [r for r in built.rejections_of("chat-100b") if r.gpu == RTX and r.tp == 4]
    assert rtx_tp4 and "per user" in rtx_tp4[0].reason
    assert a.runner_up is None and "per user" in a.runner_up_note


def test_4_five_hundred_million_krw_portfolio_mixes_h200_core_and_rtx_expansion(book: Pricebook) -> None:
    # Seed 000's split: H200 core (70B+ low-latency RAG, training) + RTX PRO 6000 expansion
    # (14B bulk batch, embeddings) within 500M KRW; the portfolio is in bench/solver_scaling.py.
    mixed = plan(seed_500m_krw_request(), book)
    assert mixed.status is SolveStatus.OPTIMAL and mixed.cost is not None
    assert set(mixed.gpu_counts()) == {H200, RTX}
    rag = next(a for a in mixed.assignments if a.workload == "rag-70b")
    # The low-latency 70B RAG lives mostly on the H200 core; pooled replicas (issue 20) may top it
    # up with a spare RTX TP2 replica, which the seed's one-replica-per-workload sizing could not.
    rag_gpus = {gpu: 0 for gpu in (H200, RTX)}
    for u in rag.uses:
        rag_gpus[u.candidate.gpu] += u.candidate.tp * max(u.replicas)
    assert rag_gpus[H200] > rag_gpus[RTX]
    for single in SEED_500M_PAIR:
        alone = plan(seed_500m_krw_request((single,)), book)
        # The best single-SKU fleet either does not fit the budget or costs more.
        assert not alone.has_plan or (alone.cost is not None and alone.cost.total > mixed.cost.total)


def test_5_rtx_5090_only_quantizes_instead_of_tensor_parallel(book: Pricebook) -> None:
    w = InferenceWorkload(
        name="qwen-32b",
        model=ModelRef(model_id="Qwen/Qwen3-32B"),
        input_tokens=2000,
        output_tokens=500,
        peak_request_rate_per_s=2.0,
        sla=Sla(ttft_p95_ms=3000, tpot_p95_ms=60),
        # The seed's advice is to quantize to one card; a plan quantizes only when allowed to.
        allowed_precisions=(Precision.INT4, Precision.FP4),
    )
    request = PlanRequest(
        inference=(w,),
        constraints=Constraints(currency="KRW", allowed_gpus=("RTX 5090",), allow_consumer_gpus=True),
    )
    sol = plan(request, book)
    assert sol.status is SolveStatus.OPTIMAL
    (a,) = sol.assignments
    assert all(u.candidate.tp == 1 for u in a.uses)
    assert all(u.candidate.precision not in (Precision.BF16, Precision.FP16) for u in a.uses)
    assert a.primary.replicas[a.peak_bucket] >= 1
    # Nothing to compare with: the note says why, without inventing "other allowed GPUs".
    assert a.runner_up is None and a.runner_up_note.endswith(": no other GPU type is allowed")
    # BF16 weights (64 GB) do not fit one 32 GB card: the model would need TP without P2P.
    bf16_tp1 = [
        r
        for r in instance(request, book).rejections_of("qwen-32b")
        if r.precision is Precision.BF16 and r.tp == 1
    ]
    assert bf16_tp1 and "GB" in bf16_tp1[0].reason


def test_6_day_night_profile_buys_the_base_and_rents_the_peak(book: Pricebook) -> None:
    day_night = tuple([0.1] * 8 + [1.0] * 12 + [0.1] * 4)
    w = InferenceWorkload(
        name="chat-14b",
        model=ModelRef(model_id="Qwen/Qwen3-14B"),
        precision=Precision.FP8,
        input_tokens=2000,
        output_tokens=400,
        daily_tokens=20_000_000_000,
        hourly_profile=day_night,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
        # The seed sized replicas flat out. At the 0.85 default the day needs 23 replicas, and a
        # third 8-GPU server bought for 24 beats renting 7 for 12 h: a whole-server artefact.
        target_utilization=1.0,
    )

    def solve_with(*modes: AcquisitionMode) -> FleetSolution:
        constraints = Constraints(currency="USD", allowed_gpus=("H100",), allowed_modes=modes)
        return plan(PlanRequest(inference=(w,), constraints=constraints), book)

    mixed = solve_with(AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND)
    buy_only = solve_with(AcquisitionMode.BUY)
    rent_only = solve_with(AcquisitionMode.ON_DEMAND)
    assert mixed.cost is not None and buy_only.cost is not None and rent_only.cost is not None
    assert mixed.cost.total < buy_only.cost.total
    assert mixed.cost.total < rent_only.cost.total
    (a,) = mixed.assignments
    night = min(range(len(mixed.buckets)), key=lambda b: a.demand_req_s[b])
    day = a.peak_bucket
    bought = sum(o.gpus for o in mixed.options if o.mode is AcquisitionMode.BUY)
    rented = [o for o in mixed.options if o.mode is AcquisitionMode.ON_DEMAND]
    night_gpus = sum(u.replicas[night] * u.candidate.tp for u in a.uses)
    assert bought >= night_gpus > 0  # owned GPUs cover the base
    assert sum(o.on_demand_gpus[night] for o in rented) == 0
    assert sum(o.on_demand_gpus[day] for o in rented) > 0  # rentals cover the peak
