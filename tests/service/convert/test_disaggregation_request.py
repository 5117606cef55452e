"""``allow_disaggregation`` on an inference workload (issue 33): proto ↔ domain, its default, and
INVALID_ARGUMENT on the field when batch work asks for it."""

from __future__ import annotations

from convert_support import chat, violations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from pricebook.schema import Pricebook
from service.convert.encode import plan_request_to_proto
from service.convert.scenario import plan_request_from_proto

SLA = scenario_pb2.Sla(ttft_p95_ms=2000, tpot_p95_ms=40)


def test_the_field_reaches_the_domain_and_round_trips(book: Pricebook) -> None:
    for stated in (True, False):
        request = plan_request_from_proto(
            api.PlanFleetRequest(workloads=[chat(sla=SLA, allow_disaggregation=stated)]), book
        )
        assert request.inference[0].allow_disaggregation is stated
        assert request.inference[0].disaggregation_allowed is stated
        assert plan_request_from_proto(plan_request_to_proto(request), book) == request


def test_absent_it_is_left_to_the_default(book: Pricebook) -> None:
    request = plan_request_from_proto(api.PlanFleetRequest(workloads=[chat(sla=SLA)]), book)
    assert request.inference[0].allow_disaggregation is None
    assert request.inference[0].disaggregation_allowed  # interactive, with TTFT and TPOT targets
    without_tpot = plan_request_from_proto(
        api.PlanFleetRequest(workloads=[chat(sla=scenario_pb2.Sla(ttft_p95_ms=2000))]), book
    )
    assert not without_tpot.inference[0].disaggregation_allowed


def test_batch_work_asking_for_it_is_refused_on_the_field(book: Pricebook) -> None:
    batch = chat(serving_kind=scenario_pb2.SERVING_KIND_BATCH, allow_disaggregation=True)
    found = violations(api.PlanFleetRequest(workloads=[batch]), book)
    assert list(found) == ["workloads[0].inference.allow_disaggregation"]
    assert "interactive" in found["workloads[0].inference.allow_disaggregation"]
