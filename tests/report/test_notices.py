"""The plan's structured notices read in the quote's language (issue 30 follow-up): the Korean
quote words them from the notice catalogue in Korean, never with the planner's English warning."""

from __future__ import annotations

import html

from report_support import example

from report import Language
from report.data import QuoteNotice
from report.html import render_html
from solver.planner.notices import CATALOGUE


def _korean(code: str, **params: str) -> str:
    return CATALOGUE[code][1].format(**params)


def _english(code: str, **params: str) -> str:
    return CATALOGUE[code][0].format(**params)


def test_a_consumer_gpu_plan_reads_its_notice_in_korean() -> None:
    planned = example("rtx5090_cluster")  # allow_consumer_gpus: true
    consumer = [n for n in planned.result.notices if n.code == "consumer_gpus"]
    assert consumer, "the example plans consumer cards"
    params = dict(consumer[0].params)
    assert _english("consumer_gpus", **params) in planned.quote.warnings  # the planner's English
    korean = html.unescape(render_html(planned.quote, Language.KO))
    assert _korean("consumer_gpus", **params) in korean
    assert _english("consumer_gpus", **params) not in korean
    english = html.unescape(render_html(planned.quote, Language.EN))
    assert _english("consumer_gpus", **params) in english
    assert _korean("consumer_gpus", **params) not in english


def test_an_interactive_workload_without_an_sla_reads_in_korean() -> None:
    planned = example("rtx5090_cluster")
    text = _english("interactive_without_sla", workload="chat")
    quote = planned.quote.model_copy(
        update={
            "warnings": (*planned.quote.warnings, text, "a warning with no notice"),
            "notices": (
                *planned.quote.notices,
                QuoteNotice(code="interactive_without_sla", params=(("workload", "chat"),)),
            ),
        }
    )
    korean = html.unescape(render_html(quote, Language.KO))
    assert _korean("interactive_without_sla", workload="chat") in korean
    assert text not in korean
    assert "a warning with no notice" in korean  # other warnings stay as the planner wrote them


def test_a_stored_quote_without_notices_still_reads() -> None:
    quote = example("rtx5090_cluster").quote
    stored = type(quote).model_validate_json(quote.model_copy(update={"notices": ()}).model_dump_json())
    page = html.unescape(render_html(stored, Language.KO))
    assert all(w in page for w in quote.warnings)
