"""Python client of the fleetplan.v1 API: generated stubs (``clients._pb``), the typed
``FleetPlannerClient`` and the ``fleetplan`` CLI (``clients.cli``)."""

from clients.client import AsyncFleetPlannerClient, FleetPlanError, FleetPlannerClient, Violation

__all__ = ["AsyncFleetPlannerClient", "FleetPlanError", "FleetPlannerClient", "Violation"]
