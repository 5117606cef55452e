"""Python client of the fleetplan.v1 API: generated stubs (``api``), the typed
``FleetPlannerClient`` and the ``fleetplan`` CLI (``clients.cli``)."""

from clients.client import AsyncFleetPlannerClient, FleetPlanError, FleetPlannerClient, Violation

__all__ = ["AsyncFleetPlannerClient", "FleetPlanError", "FleetPlannerClient", "Violation"]
