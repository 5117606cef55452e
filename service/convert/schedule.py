"""A multi-year plan's schedule → ``StagedSchedule`` (issue 32)."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2
from service.convert.enums import MODE_TO_PROTO
from service.convert.money import set_money
from solver.planner.schedule import ScheduleItem, StagedSchedule


def _item(target: plan_pb2.ScheduleItem, item: ScheduleItem) -> None:
    target.gpu_id = item.gpu
    target.mode = MODE_TO_PROTO[item.mode]
    target.gpus = item.gpus
    target.servers = item.servers
    target.offer_id = item.offer_id or ""
    target.server_id = item.server_id or ""
    set_money(target, "capex", item.capex)


def schedule_to_proto(schedule: StagedSchedule) -> plan_pb2.StagedSchedule:
    out = plan_pb2.StagedSchedule(discount_rate_annual=schedule.discount_rate)
    set_money(out, "horizon_tco", schedule.horizon_tco)
    set_money(out, "nominal_tco", schedule.nominal_tco)
    for y in schedule.years:
        row = out.years.add(year=y.year, months=y.months)
        set_money(row, "capex", y.capex)
        set_money(row, "opex_monthly", y.opex_monthly)
        for item in y.added:
            _item(row.added.add(), item)
        for item in y.fleet:
            _item(row.fleet.add(), item)
        for d in y.deployments:
            row.deployments.add(
                workload_name=d.workload, deployment=d.deployment, peak_replicas=d.peak_replicas
            )
    for t in schedule.tranches:
        line = out.tranches.add(
            year=t.year,
            gpu_id=t.gpu,
            offer_id=t.offer_id,
            server_id=t.server_id or "",
            gpus=t.gpus,
            servers=t.servers,
        )
        set_money(line, "hardware", t.hardware)
        set_money(line, "residual_value", t.residual_value)
        set_money(line, "depreciation", t.depreciation)
    return out
