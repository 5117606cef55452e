"""A multi-year plan's schedule (issue 32): per year what is bought, its capex, the monthly opex
and the fleet in service; per tranche its depreciation to the horizon."""

from __future__ import annotations

from collections.abc import Iterable

from api.fleetplan.v1 import plan_pb2
from clients.render.tables import Cell, Table
from clients.render.values import mode_name, money

SCHEDULE_HEADERS = ["year", "months", "bought at its start", "capex", "opex / month", "in service"]
TRANCHE_HEADERS = ["year", "GPU", "GPUs", "servers", "hardware", "value at horizon", "depreciation"]


def _items(items: Iterable[plan_pb2.ScheduleItem], *, with_mode: bool) -> str:
    words = [
        f"{i.gpu_id} ×{i.gpus}" + (f" {mode_name(i.mode)}" if with_mode else "") for i in items if i.gpus
    ]
    return ", ".join(words) or "-"


def schedule_tables(plan: plan_pb2.Plan) -> list[Table]:
    """The schedule and the tranche tables (none for a plan of one period)."""
    if not plan.HasField("schedule"):
        return []
    s = plan.schedule
    rows: list[list[Cell]] = [
        [
            y.year,
            y.months,
            _items(y.added, with_mode=False),
            money(y.capex),
            money(y.opex_monthly),
            _items(y.fleet, with_mode=True),
        ]
        for y in s.years
    ]
    kind = f"NPV at {s.discount_rate_annual:.2%} a year" if s.discount_rate_annual else "TCO"
    title = f"Acquisition schedule (horizon {kind} {money(s.horizon_tco)}; nominal {money(s.nominal_tco)})"
    tranches: list[list[Cell]] = [
        [
            t.year,
            t.gpu_id,
            t.gpus,
            t.servers,
            money(t.hardware),
            money(t.residual_value),
            money(t.depreciation),
        ]
        for t in s.tranches
    ]
    out = [Table("schedule", title, SCHEDULE_HEADERS, rows)]
    if tranches:
        title = "Tranches bought (market value at the horizon by age)"
        out.append(Table("tranches", title, TRANCHE_HEADERS, tranches))
    return out


def schedule_section(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    return [line for t in schedule_tables(plan) for line in t.section(markdown=markdown)]
