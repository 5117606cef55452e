"""Structured notices (``solver.planner.notices``): every code worded in English and Korean with
the same parameters; interactive work without an SLA and consumer cards in a plan are noticed, and
consumer cards are planned only when the request allows them."""

from __future__ import annotations

import string

import pytest
from planner_factories import BARE

from pricebook.schema import GpuSegment, Pricebook
from solver.domain import Constraints, InferenceWorkload, ModelRef, PlanRequest, Precision, Sla, SolverOptions
from solver.planner import plan
from solver.planner.notices import CATALOGUE, Language, Notice, interactive_without_sla
from solver.resolve import resolve


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_notice_has_both_languages_with_the_same_parameters(code: str) -> None:
    english, korean = CATALOGUE[code]
    assert _fields(english) == _fields(korean)
    assert any("\uac00" <= ch <= "\ud7a3" for ch in korean)
    params = tuple((name, "X") for name in sorted(_fields(english)))
    assert Notice(code, params).text(Language.KO) != Notice(code, params).text(Language.EN)


def _chat(name: str, sla: Sla, *, interactive: bool = True) -> InferenceWorkload:
    return InferenceWorkload(
        name=name,
        model=ModelRef(model_id="Qwen/Qwen3-8B"),
        precision=Precision.FP8,
        input_tokens=1000,
        output_tokens=200,
        peak_request_rate_per_s=2.0,
        sla=sla,
        interactive=interactive,
    )


def test_only_interactive_work_without_any_target_is_noticed() -> None:
    request = PlanRequest(
        inference=(
            _chat("bare", Sla()),
            _chat("batch", Sla(), interactive=False),
            _chat("ttft", Sla(ttft_p95_ms=2000)),
            _chat("tok-s", Sla(min_per_user_tok_s=20)),
        )
    )
    assert [dict(n.params)["workload"] for n in interactive_without_sla(request)] == ["bare"]


def _consumer(book: Pricebook) -> set[str]:
    return {g.id for g in book.gpus if g.segment is GpuSegment.CONSUMER}


def test_consumer_cards_are_planned_only_when_allowed_and_then_noticed(book: Pricebook) -> None:
    assert _consumer(book) == {"rtx-5090", "rtx-4090"}
    options = SolverOptions(**BARE)
    workload = _chat("chat", Sla(ttft_p95_ms=3000, tpot_p95_ms=60))
    cheapest = plan(resolve(PlanRequest(inference=(workload,), options=options), book), time_limit_s=30)
    assert cheapest.solution.has_plan
    assert not {o.gpu for o in cheapest.solution.options} & _consumer(book)
    assert not [n for n in cheapest.notices if n.code == "consumer_gpus"]
    constraints = Constraints(allowed_gpus=("rtx-5090",), allow_consumer_gpus=True)
    geforce = plan(
        resolve(PlanRequest(inference=(workload,), constraints=constraints, options=options), book),
        time_limit_s=30,
    )
    assert {o.gpu for o in geforce.solution.options} == {"rtx-5090"}
    (notice,) = [n for n in geforce.notices if n.code == "consumer_gpus"]
    assert dict(notice.params) == {"gpus": "rtx-5090"}
    assert notice.text() in geforce.warnings
