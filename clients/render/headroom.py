"""A plan's headroom: how much more demand the quoted fleet carries at the SLA (every workload
together, then each alone), and what to add beyond it."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2
from clients.render.tables import Table
from clients.render.values import money

ALL_WORKLOADS = "(every workload together)"


def growth_text(growth: float, at_least: bool) -> str:
    """E.g. ``+12 %``, ``≥ +300 %``."""
    return f"{'≥ ' if at_least else ''}{growth:+.0%}"


def headroom_table(plan: plan_pb2.Plan) -> Table | None:
    """One row for every workload together, one per workload, and the addition beyond it."""
    if not plan.HasField("headroom"):
        return None
    h = plan.headroom
    beyond = ""
    if h.HasField("next_step_growth"):
        what = h.addition or "-"
        cost = ""
        if h.HasField("addition_extra_horizon_tco"):
            sign = "" if h.addition_extra_horizon_tco.amount.startswith("-") else "+"
            cost = f" ({sign}{money(h.addition_extra_horizon_tco)} horizon TCO)"
        beyond = f"to carry {h.next_step_growth:+.0%}: {what}{cost}"
        if h.note:
            beyond += f"; {h.note}"
    rows: list[list[str | int | float]] = [
        [ALL_WORKLOADS, growth_text(h.demand_growth_served, h.at_least), beyond]
    ]
    rows += [[w.workload_name, growth_text(w.demand_growth_served, w.at_least), ""] for w in h.workloads]
    return Table(
        "headroom",
        "Headroom of this fleet (evaluated as quoted, demand growth served at the SLA)",
        ["workload", "demand growth served", "beyond it"],
        rows,
    )
