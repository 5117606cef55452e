"""Reproduction 11: interactive workloads without an SLA were sized as throughput-only work (p95
TTFT about 14 s) without a word. The plan is answered, with a structured notice per such workload
(code ``interactive_without_sla``, worded in English and Korean; the English also among the
warnings); with an SLA on both there is none."""

from __future__ import annotations

import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlannerClient
from tests.regressions.round3.robust_support import scenario, without_extras

pytestmark = pytest.mark.slow

INTERACTIVE = ("rag-qa", "chatbot")


def _hangul(text: str) -> int:
    return sum(1 for ch in text if "\uac00" <= ch <= "\ud7a3")


def _request() -> api.PlanFleetRequest:
    request = without_extras(scenario("11-interactive-without-sla"))
    request.solver_options.time_limit_s = 30  # room for the pool re-solves on a loaded machine
    return request


def test_interactive_workloads_without_sla_are_named_in_notices(client: FleetPlannerClient) -> None:
    plan = client.plan_fleet(_request()).plan
    assert plan.fleet  # planned, not refused
    notices = [n for n in plan.notices if n.code == "interactive_without_sla"]
    assert sorted(n.params["workload"] for n in notices) == sorted(INTERACTIVE)
    for notice in notices:
        assert notice.message.startswith(notice.params["workload"] + ":")
        assert notice.message in plan.warnings
        assert _hangul(notice.message_ko) > 20


def test_with_an_sla_there_is_no_notice(client: FleetPlannerClient) -> None:
    request = _request()
    for workload in request.workloads:
        if workload.name in INTERACTIVE:
            workload.inference.sla.ttft_p95_ms = 2000
            workload.inference.sla.min_per_user_tok_s = 20
    plan = client.plan_fleet(request).plan
    assert plan.fleet
    assert not [n for n in plan.notices if n.code == "interactive_without_sla"]
