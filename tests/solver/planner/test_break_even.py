"""AnalyzeBreakEven (``solver.planner.break_even``): the what-if for one GPU type."""

from __future__ import annotations

from planner_factories import BARE, request

from pricebook.catalog import resolve_gpu_id
from pricebook.schema import Pricebook
from solver.planner import analyze_break_even
from solver.resolve import resolve


def test_break_even_what_if_for_one_gpu(book: Pricebook) -> None:
    analysis = analyze_break_even(
        resolve(request(**BARE), book), gpu=resolve_gpu_id(book, "H200"), utilization=0.5, time_limit_s=10
    )
    assert {line.gpu for line in analysis.plan.fleet} == {"h200-sxm"}
    row = analysis.break_even.buy_vs_rent[0]
    assert row.plan_utilization == 0.5
