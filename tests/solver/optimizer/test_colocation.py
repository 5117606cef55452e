"""Small models sharing a card (``solver.optimizer.colocation``).

Properties on random two-workload requests (a chat model and an embedding model, one GPU type,
buy only; hypothesis with a fixed seed): allowing co-location never makes a plan dearer than the
same instance without its co-located candidates, and the plan with co-location passes the
independent check (``evaluate.check_solution`` with the performance model run afresh), also with
the embedding's (and the chat's) requests in a length mix, each size a guest or host of its own;
forbidding it (``constraints.allow_colocation: false``) leaves no co-located candidate or row and
never makes a plan cheaper. The checks of the evaluator are shown to fail on broken plans: a guest
without a host card, and a guest too large for its share of the memory. Memory figures are computed
here from the model cards."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pricebook import catalog
from pricebook.schema import Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    LengthBucket,
    ModelRef,
    PlanRequest,
    Precision,
    Sla,
)
from solver.optimizer.api import solve, with_earlier_bound
from solver.optimizer.candidates import build_instance
from solver.optimizer.colocation import check_shared_cards, memory_fits
from solver.optimizer.evaluate import check_solution, perf_capacity_checker
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.perf import resolve_model
from solver.planner.plan import plan_request
from solver.resolve import resolve

pytestmark = pytest.mark.slow
GIB = 1024**3


def _chat(rate: float) -> InferenceWorkload:
    return InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="meta-llama/Llama-3.1-8B-Instruct"),
        precision=Precision.FP8,
        input_tokens=1500,
        output_tokens=250,
        peak_request_rate_per_s=rate,
        sla=Sla(ttft_p95_ms=2000, tpot_p95_ms=60),
    )


def _embedding(rate: float) -> InferenceWorkload:
    return InferenceWorkload(
        name="embed",
        model=ModelRef(model_id="BAAI/bge-m3"),
        input_tokens=400,
        output_tokens=1,
        peak_request_rate_per_s=rate,
        interactive=False,
    )


def _request(chat_rate: float, embed_rate: float, gpu: str) -> PlanRequest:
    return PlanRequest(
        inference=(_chat(chat_rate), _embedding(embed_rate)),
        constraints=Constraints(allowed_gpus=(gpu,), allowed_modes=(AcquisitionMode.BUY,)),
    )


def _without_sharing(instance: FleetInstance) -> FleetInstance:
    return dataclasses.replace(
        instance, candidates=tuple(c for c in instance.candidates if c.card_share == 1)
    )


def _solved(instance: FleetInstance, request: PlanRequest, book: Pricebook) -> FleetSolution:
    checker = perf_capacity_checker(request, book)
    solution = solve(instance, time_limit_s=60, capacity_of=checker, explain=False)
    assert solution.status is SolveStatus.OPTIMAL, solution.stats
    return solution


TWO_WORKLOADS = {
    "chat_rate": st.floats(0.2, 6.0),
    "embed_rate": st.floats(0.5, 40.0),
    "gpu": st.sampled_from(["l40s", "h100-nvl", "rtx-pro-6000-server"]),
}
"""The random requests of the properties: a chat and an embedding workload on one GPU type."""
FIXTURES_OK = [HealthCheck.function_scoped_fixture]


@seed(2028)
@settings(max_examples=30, deadline=None, suppress_health_check=FIXTURES_OK)
@given(**TWO_WORKLOADS)
def test_sharing_never_makes_a_plan_dearer_and_its_plan_passes_the_check(
    book: Pricebook, chat_rate: float, embed_rate: float, gpu: str
) -> None:
    _assert_sharing_is_never_dearer_and_checked(_request(chat_rate, embed_rate, gpu), book)


def _assert_sharing_is_never_dearer_and_checked(request: PlanRequest, book: Pricebook) -> None:
    instance = build_instance(request, book)
    shared = _solved(instance, request, book)
    alone = _solved(_without_sharing(instance), request, book)
    assert shared.cost is not None and alone.cost is not None
    # Both proven within the requested relative gap (1e-4).
    assert shared.cost.total <= alone.cost.total * (1 + 2e-4)
    assert not check_solution(instance, shared, perf_capacity_checker(request, book))


def _co_located_plan(book: Pricebook) -> tuple[PlanRequest, FleetInstance, FleetSolution]:
    request = _request(1.0, 5.0, "l40s")
    instance = build_instance(request, book)
    solution = _solved(instance, request, book)
    uses = [u for a in solution.assignments for u in a.uses]
    assert any(u.candidate.guest for u in uses) and any(u.candidate.host for u in uses)
    return request, instance, solution


def test_a_guest_without_a_host_card_is_a_violation(book: Pricebook) -> None:
    request, instance, solution = _co_located_plan(book)
    checker = perf_capacity_checker(request, book)
    assert not check_shared_cards(instance, solution, checker.specs)
    hostless = dataclasses.replace(
        solution,
        assignments=tuple(
            dataclasses.replace(
                a,
                uses=tuple(
                    dataclasses.replace(u, replicas=tuple(0 for _ in u.replicas)) if u.candidate.host else u
                    for u in a.uses
                ),
            )
            for a in solution.assignments
        ),
    )
    violations = check_shared_cards(instance, hostless, checker.specs)
    assert any("host cards" in v.message for v in violations)


def test_the_memory_check_uses_the_model_card_figures(book: Pricebook) -> None:
    _, instance, _ = _co_located_plan(book)
    guest = next(c for c in instance.candidates if c.guest and c.gpu == "l40s")
    model = resolve_model(ModelRef(model_id="BAAI/bge-m3"), book)
    gpu = catalog.gpu(book, "l40s")
    # bge-m3: 568 M parameters; KV per token = 2 (K and V) × layers × KV heads × head dim × bytes.
    weights = model.params_b * 1e9 * {"bf16": 2, "fp8": 1}[guest.precision.value]
    kv_bytes = {"bf16": 2, "fp8": 1}[guest.kv_precision.value]
    kv = guest.concurrency * (400 + 1) * 2 * model.layers * model.kv_heads * model.head_dim * kv_bytes
    assert (weights + kv) / GIB <= guest.card_share * gpu.memory_gb
    assert memory_fits(model, guest, gpu)
    # The same share is far too small for a 70B model's weights.
    big = resolve_model(ModelRef(model_id="meta-llama/Llama-3.3-70B-Instruct"), book)
    assert big.params_b * 1e9 / GIB > guest.card_share * gpu.memory_gb
    assert not memory_fits(big, guest, gpu)


def test_an_earlier_rounds_bound_closes_a_later_rounds_gap(book: Pricebook) -> None:
    """Pool-timing rounds re-solve an instance with fewer plans, so an earlier round's proven bound
    holds for the later round (``api.with_earlier_bound``)."""
    _, _, solution = _co_located_plan(book)
    assert solution.cost is not None
    tco = solution.cost.total
    earlier = dataclasses.replace(solution, stats=dataclasses.replace(solution.stats, best_bound=tco))
    weak = dataclasses.replace(
        solution,
        status=SolveStatus.FEASIBLE,
        stats=dataclasses.replace(
            solution.stats,
            status=SolveStatus.FEASIBLE,
            best_bound=0.7 * tco,
            gap=0.3,
            relative_gap_target=1e-4,
        ),
    )
    carried = with_earlier_bound(earlier, weak)
    assert (
        carried.status is SolveStatus.OPTIMAL and carried.stats.best_bound == tco and carried.stats.gap == 0
    )
    lower = dataclasses.replace(earlier, stats=dataclasses.replace(earlier.stats, best_bound=0.5 * tco))
    kept = with_earlier_bound(lower, weak)  # a weaker earlier bound changes nothing
    assert kept is weak


def _forbidden(request: PlanRequest) -> PlanRequest:
    """``request`` with ``constraints.allow_colocation`` off."""
    constraints = request.constraints.model_copy(update={"allow_colocation": False})
    return request.model_copy(update={"constraints": constraints})


def test_with_colocation_forbidden_no_row_shares_a_card(book: Pricebook) -> None:
    request, _, shared = _co_located_plan(book)  # the same request shares a card when allowed
    forbidden = _forbidden(request)
    instance = build_instance(forbidden, book)
    assert all(c.card_share == 1 for c in instance.candidates)
    result = plan_request(resolve(forbidden, book), time_limit_s=60, cancel=None, with_extras=False)
    assert result.solution.status is SolveStatus.OPTIMAL
    assert result.deployment_lines and all(line.card_share == 1 for line in result.deployment_lines)
    assert all(not line.co_located_with for line in result.deployment_lines)
    assert result.solution.cost is not None and shared.cost is not None
    assert result.solution.cost.total >= shared.cost.total * (1 - 2e-4)


@seed(2029)
@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURES_OK)
@given(**TWO_WORKLOADS)
def test_forbidding_colocation_never_makes_a_plan_cheaper(
    book: Pricebook, chat_rate: float, embed_rate: float, gpu: str
) -> None:
    request = _request(chat_rate, embed_rate, gpu)
    allowed = _solved(build_instance(request, book), request, book)
    forbidden_request = _forbidden(request)
    forbidden_instance = build_instance(forbidden_request, book)
    assert all(c.card_share == 1 for c in forbidden_instance.candidates)
    forbidden = _solved(forbidden_instance, forbidden_request, book)
    assert allowed.cost is not None and forbidden.cost is not None
    # Both proven within the requested relative gap (1e-4).
    assert forbidden.cost.total >= allowed.cost.total * (1 - 2e-4)
    assert all(u.candidate.card_share == 1 for a in forbidden.assignments for u in a.uses)


def _sizes(*sizes: tuple[int, int, float]) -> tuple[LengthBucket, ...]:
    return tuple(LengthBucket(input_tokens=i, output_tokens=o, share=share) for i, o, share in sizes)


MIX = _sizes((400, 1, 0.7), (2000, 1, 0.3))
"""Two request sizes of the embedding workload: short queries and long documents."""
CHAT_MIX = _sizes((1500, 250, 0.5), (400, 150, 0.5))


def _with_mix(w: InferenceWorkload, mix: tuple[LengthBucket, ...]) -> InferenceWorkload:
    return InferenceWorkload.model_validate({**w.model_dump(), "length_mix": mix})


def _mixed_request(chat_rate: float, embed_rate: float, gpu: str, *, chat_mix: bool = False) -> PlanRequest:
    """``_request`` with the embedding workload's requests (and optionally the chat's) in a mix."""
    request = _request(chat_rate, embed_rate, gpu)
    chat, embed = request.inference
    chat = _with_mix(chat, CHAT_MIX) if chat_mix else chat
    return request.model_copy(update={"inference": (chat, _with_mix(embed, MIX))})


def test_each_size_of_a_length_mix_may_share_a_card(book: Pricebook) -> None:
    """Each size of the embedding mix has a guest candidate, sized for its own requests; the plan
    puts some on host cards, and the independent check (memory of each size) passes."""
    request = _mixed_request(1.0, 5.0, "l40s")
    instance = build_instance(request, book)
    assert {c.load for c in instance.candidates if c.guest and c.workload == "embed"} == {0, 1}
    plan = _solved(instance, request, book)
    uses = [u for a in plan.assignments for u in a.uses if any(u.replicas)]
    guests = [u.candidate for u in uses if u.candidate.guest]
    assert guests and all(c.workload == "embed" for c in guests)
    assert all(c.input_tokens == MIX[c.load].input_tokens for c in guests)
    assert any(u.candidate.host for u in uses)
    assert not check_solution(instance, plan, perf_capacity_checker(request, book))


@seed(2030)
@settings(max_examples=15, deadline=None, suppress_health_check=FIXTURES_OK)
@given(**TWO_WORKLOADS, chat_mix=st.booleans())
def test_with_length_mixes_sharing_never_makes_a_plan_dearer_and_passes_the_check(
    book: Pricebook, chat_rate: float, embed_rate: float, gpu: str, chat_mix: bool
) -> None:
    _assert_sharing_is_never_dearer_and_checked(
        _mixed_request(chat_rate, embed_rate, gpu, chat_mix=chat_mix), book
    )
