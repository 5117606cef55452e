"""Buy vs rent and self-host vs API: numbers in tables, each row's verdict in words below."""

from __future__ import annotations

from collections.abc import Sequence

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from clients.render.tables import section, verdicts
from clients.render.values import money


def has_on_demand(row: plan_pb2.BuyVsRent) -> bool:
    """Break-even and payback against on-demand only mean something when there is an offer."""
    return bool(row.on_demand_price_per_gpu_hour.currency_code)


def payback(row: plan_pb2.BuyVsRent) -> str:
    if not has_on_demand(row):
        return "-"
    return f"{row.payback_months:.1f}" if row.payback_months > 0 else "never"


def api_break_even(row: plan_pb2.ApiBreakEven) -> str:
    """Daily tokens above which self-hosting wins: "-" without an API price or a self-hosted
    deployment, "never" when a fully used replica still costs more per token than the API (all
    are 0 on the wire)."""
    if not row.api_per_million_tokens.currency_code or not row.self_hosted_per_million_tokens.currency_code:
        return "-"
    return f"{row.break_even_daily_tokens:,.0f}" if row.break_even_daily_tokens > 0 else "never"


def render_break_even_answer(r: api.AnalyzeBreakEvenResponse, *, markdown: bool = False) -> str:
    """The plan the analysis rests on (in one line: an infeasible one says why), then the tables."""
    based_on = f"based on: {r.plan.summary}" if r.plan.summary else ""
    return "\n".join(x for x in (based_on, render_break_even(r.break_even, markdown=markdown)) if x)


def render_break_even(b: plan_pb2.BreakEvenAnalysis, *, markdown: bool = False) -> str:
    """Verdicts are sentences under the tables (in a column they made 300-character lines)."""
    out = []
    if b.buy_vs_rent:
        out += _buy_vs_rent(b.buy_vs_rent, markdown=markdown)
    if b.api:
        out += _self_host_vs_api(b.api, markdown=markdown)
    out += [f"note: {n}" for n in b.notes]
    return "\n".join(out)


def _buy_vs_rent(rows: Sequence[plan_pb2.BuyVsRent], *, markdown: bool) -> list[str]:
    return [
        *section(
            "Buy vs rent",
            ["GPU", "own /GPU-h", "on-demand /GPU-h", "break-even util", "payback months"],
            [
                [
                    x.gpu_id,
                    money(x.owned_cost_per_gpu_hour),
                    money(x.on_demand_price_per_gpu_hour),
                    f"{x.break_even_utilization_on_demand:.0%}" if has_on_demand(x) else "-",
                    payback(x),
                ]
                for x in rows
            ],
            markdown=markdown,
        ),
        *verdicts([x.verdict for x in rows], markdown=markdown),
    ]


def _self_host_vs_api(rows: Sequence[plan_pb2.ApiBreakEven], *, markdown: bool) -> list[str]:
    return [
        *section(
            "Self-host vs API",
            ["workload", "API", "self-host /1M", "API /1M", "break-even tok/day"],
            [
                [
                    x.workload_name,
                    x.provider,
                    money(x.self_hosted_per_million_tokens),
                    money(x.api_per_million_tokens),
                    api_break_even(x),
                ]
                for x in rows
            ],
            markdown=markdown,
        ),
        *verdicts([x.verdict for x in rows], markdown=markdown),
    ]
