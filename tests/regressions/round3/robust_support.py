"""Shared by the round-3 regression tests of honest status and never-INTERNAL answers: the
reproductions' scenario files (``repro/``, copied from the shared reproductions), loaded as the
CLI loads them, and a real gRPC server with its client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlannerClient
from clients.scenario import load_scenario
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

REPRO = Path(__file__).parent / "repro"


def scenario(name: str) -> api.PlanFleetRequest:
    """The PlanFleet request of ``repro/<name>.yaml``."""
    return load_scenario(REPRO / f"{name}.yaml", api.PlanFleetRequest)


def without_extras(request: api.PlanFleetRequest) -> api.PlanFleetRequest:
    """``request`` without baselines and sensitivity (what the checks here do not look at)."""
    request.solver_options.compute_baselines = False
    request.solver_options.compute_sensitivity = False
    return request


@pytest.fixture(scope="module")
def client() -> Iterator[FleetPlannerClient]:
    server: ThreadedServer = start_in_thread(
        ServerSettings(address="127.0.0.1:0", grace_period_s=1.0, plan_cache_entries=0)
    )
    with FleetPlannerClient(server.address, timeout_s=120) as c:
        yield c
    server.stop(grace_s=0.5)
