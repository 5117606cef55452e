"""Plan headroom (``solver.analysis.headroom.Headroom``) → ``plan_pb2.Headroom``."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2
from service.convert.encode import fleet_to_proto
from service.convert.money import set_money
from solver import planner
from solver.domain import Fleet


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
        # The addition's lines come from one plan's options, so they name their servers alike.
        added=fleet_to_proto(Fleet(items=headroom.added)).items if headroom.added else [],
    )
    if headroom.next_step_growth is not None:
        out.next_step_growth = headroom.next_step_growth
    set_money(out, "addition_extra_horizon_tco", headroom.addition_extra_tco)
    return out
