"""Servers on loopback with a plan store, and a plan's fleet as EvaluateFleet input: shared by the
end-to-end and regression tests of saved plans."""

from __future__ import annotations

from pathlib import Path

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2, scenario_pb2
from clients import FleetPlannerClient
from clients.scenario import load_scenario
from service.server import ThreadedServer
from service.settings import ServerSettings


def store_server(store: str, **settings: object) -> ThreadedServer:
    """A server (not started: use it as a context manager) on a free port with ``store``."""
    return ThreadedServer(ServerSettings(address="127.0.0.1:0", store=store, **settings))  # type: ignore[arg-type]


def plan_and_save(store: str, scenario: Path) -> tuple[api.PlanFleetRequest, api.PlanFleetResponse]:
    """``scenario`` planned (without baselines and sensitivity) and saved in ``store``."""
    request = load_scenario(scenario, api.PlanFleetRequest)
    request.solver_options.compute_baselines = False
    request.solver_options.compute_sensitivity = False
    request.save = True
    with store_server(store) as server, FleetPlannerClient(server.address, timeout_s=300) as client:
        planned = client.plan_fleet(request)
    assert planned.plan_id and planned.plan.fleet
    return request, planned


def fleet_of(plan: plan_pb2.Plan, *, with_offers: bool = False) -> scenario_pb2.Fleet:
    """The plan's fleet as EvaluateFleet input, line by line (server models and owned GPUs kept;
    ``with_offers``: each line on the offer the plan names, as a re-pricing sends it)."""
    fleet = scenario_pb2.Fleet()
    for line in plan.fleet:
        item = fleet.items.add(gpu_id=line.gpu_id, mode=line.mode, count=line.gpu_count)
        item.owned, item.server_id = line.owned, line.server_id
        if with_offers:
            item.offer_id = line.offer_id
    return fleet
