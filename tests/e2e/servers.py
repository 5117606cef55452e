"""Servers on loopback with a plan store, and a plan's fleet as EvaluateFleet input: shared by the
end-to-end and regression tests of saved plans."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2, scenario_pb2
from service.server import ThreadedServer
from service.settings import ServerSettings


def store_server(store: str, **settings: object) -> ThreadedServer:
    """A server (not started: use it as a context manager) on a free port with ``store``."""
    return ThreadedServer(ServerSettings(address="127.0.0.1:0", store=store, **settings))  # type: ignore[arg-type]


def fleet_of(plan: plan_pb2.Plan) -> scenario_pb2.Fleet:
    """The plan's fleet as EvaluateFleet input, line by line (server models and owned GPUs kept)."""
    fleet = scenario_pb2.Fleet()
    for line in plan.fleet:
        item = fleet.items.add(gpu_id=line.gpu_id, mode=line.mode, count=line.gpu_count)
        item.owned, item.server_id = line.owned, line.server_id
    return fleet
