"""Embedding workloads in their own units (issue 30, item 8): embeddings/s, input tok/s and the
cost per 1M input tokens — derived here from the plan's JSON, not from ``report``."""

from __future__ import annotations

from decimal import Decimal

import pytest
from quote_files import html_fields, html_tables, xlsx_rows
from report_support import amount, bid_example

from report import Language, ReportFormat, render
from report.html import render_html


def test_the_embedding_workload_reads_in_embeddings_input_tokens_and_cost_per_input_token() -> None:
    planned = bid_example("kr_public_rag_bid")  # doc-embedding: bge-m3, 400 input tokens, 1 output
    quote = planned.quote
    assert [e.name for e in quote.embeddings] == ["doc-embedding"]
    deployment = next(d for d in planned.plan_json["deployments"] if d["workload_name"] == "doc-embedding")
    unit = next(u for u in planned.plan_json["unit_costs"] if u["workload_name"] == "doc-embedding")
    per_second = deployment["output_tok_s"]  # one output token per request: requests/s
    row = quote.embeddings[0]
    assert row.embeddings_per_s == pytest.approx(per_second)
    assert row.input_tok_s == pytest.approx(per_second * 400)
    # per 1M tokens of all kinds × (400 + 1) / 400: the same month's cost over its input tokens only
    per_input = amount(unit["per_million_total_tokens"]) * Decimal(401) / Decimal(400)
    assert row.per_million_input_tokens is not None
    assert float(row.per_million_input_tokens.amount) == pytest.approx(float(per_input), rel=2e-3)

    page = render_html(quote, Language.KO)
    fields = html_fields(page)
    assert fields["embeddings-per-s"] == [f"{per_second:,.1f}"]
    assert fields["embeddings-input-tok-s"] == [f"{per_second * 400:,.0f}"]
    workloads = {r[0]: r for r in html_tables(page)["workloads-table"]}
    # columns: workload, deployments, replicas, TTFT, TPOT, per user, aggregate, utilisation
    assert workloads["doc-embedding"][4:7] == ["–", "–", "–"]  # no TPOT, no output speed
    sheet = xlsx_rows(render(quote, ReportFormat.XLSX, Language.KO).content, "워크로드")
    embedded = next(r for r in sheet if r[0] == "doc-embedding" and isinstance(r[1], float))
    assert embedded[1] == pytest.approx(per_second) and embedded[2] == pytest.approx(per_second * 400)


def test_the_hourly_chart_shows_demand_against_capacity_from_the_plan() -> None:
    planned = bid_example("kr_public_rag_bid")
    quote = planned.quote
    rules = next(h for h in quote.hourly if h.workload == "rules-qa")
    assert len(rules.demand_req_s) == 24 == len(rules.capacity_req_s)
    # the request's office-hours profile: nothing at 3 a.m., the peak at 10 a.m.
    assert rules.demand_req_s[3] == 0 and rules.demand_req_s[10] == max(rules.demand_req_s)
    assert all(d <= c * (1 + 1e-9) for d, c in zip(rules.demand_req_s, rules.capacity_req_s, strict=True))
    deployment = next(d for d in planned.plan_json["deployments"] if d["workload_name"] == "rules-qa")
    assert max(rules.capacity_req_s) == pytest.approx(deployment["capacity_req_s"])
    page = render_html(quote, Language.KO)
    start = page.index('id="chart-hourly"')
    assert page[start : page.index("</figure>", start)].count("<path") > 20
