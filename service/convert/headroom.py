"""Plan headroom (``solver.analysis.headroom.Headroom``) → ``plan_pb2.Headroom``."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2, scenario_pb2
from service.convert.enums import MODE_TO_PROTO
from service.convert.money import set_money
from solver import planner


def headroom_to_proto(headroom: planner.Headroom) -> plan_pb2.Headroom:
    out = plan_pb2.Headroom(
        demand_growth_served=headroom.demand_growth_served,
        at_least=headroom.at_least,
        workloads=[
            plan_pb2.WorkloadHeadroom(
                workload_name=w.workload, demand_growth_served=w.demand_growth_served, at_least=w.at_least
            )
            for w in headroom.workloads
        ],
        addition=headroom.addition,
        note=headroom.note,
        added=[
            scenario_pb2.FleetItem(
                gpu_id=i.gpu,
                mode=MODE_TO_PROTO[i.mode],
                count=i.count,
                server_id=i.server or "",
                offer_id=i.offer or "",
            )
            for i in headroom.added
        ],
    )
    if headroom.next_step_growth is not None:
        out.next_step_growth = headroom.next_step_growth
    set_money(out, "addition_extra_horizon_tco", headroom.addition_extra_tco)
    return out
