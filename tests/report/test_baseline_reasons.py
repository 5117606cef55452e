"""Why a single-GPU fleet cannot meet the request, in the quote's language (issue 30): the planner
names each cap such a fleet exceeds with its figures (``Baseline.binding_caps``); the Korean quote
words them from its catalogue (구매 예산 … 초과) instead of the planner's English."""

from __future__ import annotations

import functools
import io
from decimal import Decimal

import yaml
from quote_files import html_tables
from report_support import BIDS, Planned, bid_example, plan_and_quote, resolved_of

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import parse_scenario
from report import Language
from report.bid import cap_shortfall
from report.data import QuoteCap
from report.html import render_html

BUDGET = Decimal(140_000_000)
"""Above the plan's capex (h100-nvl ×2 with a co-located embedding model, about 121 million won)
and below any fleet of l40s alone (about 242 million won with their hosts)."""


@functools.cache
def _tight_budget() -> Planned:
    data = yaml.safe_load((BIDS / "kr_public_rag_bid.yaml").read_text(encoding="utf-8"))
    data["constraints"]["capex_budget"] = f"{BUDGET} KRW"
    request = parse_scenario(data, api.PlanFleetRequest, "tight.yaml", echo=io.StringIO())
    return plan_and_quote(resolved_of(request), "tight")


def _alternatives(lang: Language) -> dict[str, list[str]]:
    rows = html_tables(render_html(_tight_budget().quote, lang))["alternatives-table"]
    return {row[0]: row for row in rows}


def test_a_fleet_over_the_budget_says_so_in_korean_with_its_figures() -> None:
    planned = _tight_budget()
    over = [b for b in planned.result.baselines if not b.feasible and b.binding_caps]
    assert over, [(b.gpu, b.reason) for b in planned.result.baselines]
    rows = _alternatives(Language.KO)
    for baseline in over:
        cell = rows[f"단일 가속기 구성 ({baseline.gpu})"][-1]
        for cap in baseline.binding_caps:
            assert cap.cap == "capex_budget" and Decimal(str(cap.limit)) == BUDGET
            assert f"구매 예산 {BUDGET:,.0f}원 초과 (필요 " in cell
            assert f"{round(cap.needed):,}원" in cell
            assert cap.needed > cap.limit
        assert baseline.reason not in cell and "needed" not in cell and "capex budget" not in cell
        assert "계획 엔진 메모 참조" not in cell  # the reason itself, not a pointer to the annex


def test_what_a_fleet_needs_is_its_capex_without_the_budget() -> None:
    free = {a.name: a for a in bid_example("kr_public_rag_bid").quote.alternatives}  # a 3억 budget
    rows = _alternatives(Language.KO)
    for baseline in _tight_budget().result.baselines:
        if not baseline.feasible:
            capex = free[baseline.gpu].capex
            assert capex is not None and capex.amount > BUDGET
            assert f"(필요 {capex.amount:,.0f}원, " in rows[f"단일 가속기 구성 ({baseline.gpu})"][-1]


def test_counts_power_rack_units_and_bounds_read_in_korean() -> None:
    count = QuoteCap(cap="count:h100-nvl", limit=2, needed=3, proven=True, fleet="h100-nvl ×3 buy")
    power = QuoteCap(cap="power_cap_kw", limit=5, needed=6.25, proven=False)
    space = QuoteCap(cap="rack_units_cap", limit=4, needed=8, proven=True)
    assert (
        cap_shortfall(count, "KRW", Language.KO) == "h100-nvl 최대 수량 2개 초과 (필요 3개, h100-nvl ×3 구매)"
    )
    assert cap_shortfall(power, "KRW", Language.KO) == "전력 상한 5.0킬로와트 초과 (필요 최대 6.2킬로와트)"
    assert cap_shortfall(space, "USD", Language.KO) == "랙 공간 상한 4유닛 초과 (필요 8유닛)"


def test_the_english_quote_keeps_the_planners_words() -> None:
    planned = _tight_budget()
    rows = _alternatives(Language.EN)
    for baseline in planned.result.baselines:
        if not baseline.feasible and baseline.binding_caps:
            cell = next(row for name, row in rows.items() if baseline.gpu in name)[-1]
            assert baseline.reason in cell
