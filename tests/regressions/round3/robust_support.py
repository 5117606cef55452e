"""Shared by the round-3 regression tests of honest status and never-INTERNAL answers: the
reproductions' scenario files (``repro/``, copied from the shared reproductions), loaded as the
CLI loads them (the server fixture is tests/regressions/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.scenario import load_scenario

REPRO = Path(__file__).parent / "repro"


def scenario(name: str) -> api.PlanFleetRequest:
    """The PlanFleet request of ``repro/<name>.yaml``."""
    return load_scenario(REPRO / f"{name}.yaml", api.PlanFleetRequest)


def without_extras(request: api.PlanFleetRequest) -> api.PlanFleetRequest:
    """``request`` without baselines and sensitivity (what the checks here do not look at)."""
    request.solver_options.compute_baselines = False
    request.solver_options.compute_sensitivity = False
    return request
