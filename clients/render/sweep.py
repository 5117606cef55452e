"""A sweep's frontier: one row per swept value."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.render.tables import heading, table
from clients.render.values import money, status_name


def swept_value(value: float) -> str:
    """A swept value as the user would write it: 0.5, 1.5, 2, 30 or 500,000,000."""
    if abs(value) >= 1000 and value == int(value):
        return f"{value:,.0f}"
    return f"{value:g}"


def render_frontier(frontier: api.SweepFrontier, dimension: str, *, markdown: bool = False) -> str:
    with_npv = any(p.HasField("npv") for p in frontier.points)
    header = [dimension, "status", "horizon TCO", *(["NPV"] if with_npv else []), "fleet", "pareto"]
    return "\n".join(
        [
            heading(f"Frontier ({dimension})", markdown=markdown),
            table(
                header,
                [
                    [
                        swept_value(p.value),
                        status_name(p.status),
                        money(p.horizon_tco),
                        *([money(p.npv)] if with_npv else []),
                        p.fleet_summary,
                        "yes" if p.pareto_optimal else "",
                    ]
                    for p in frontier.points
                ],
                markdown=markdown,
            ),
        ]
    )
