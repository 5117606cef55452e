"""Exit status of the ``fleetplan`` command."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INVALID = 2
EXIT_NO_PLAN = 3


class CannotStart(Exception):
    """The server (``serve``, or the in-process one of a client command) cannot start: why."""


def plan_status_exit(plan: plan_pb2.Plan) -> int:
    has_plan = plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
    return EXIT_OK if has_plan else EXIT_NO_PLAN
