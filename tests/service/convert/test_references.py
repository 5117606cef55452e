"""Pricebook references: unknown ids are violations on the proto field, with suggestions; GPU
aliases resolve to catalogue ids."""

from __future__ import annotations

from convert_support import chat, violations

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.scenario import plan_request_from_proto


def test_unknown_gpu_id_is_a_violation_with_suggestions(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat()], constraints=scenario_pb2.Constraints(allowed_gpu_ids=["h200-sxm", "h100x"])
    )
    found = violations(request, book)
    assert list(found) == ["constraints.allowed_gpu_ids[1]"]
    assert "h100x" in found["constraints.allowed_gpu_ids[1]"]
    assert "did you mean" in found["constraints.allowed_gpu_ids[1]"]


def test_unknown_model_is_a_violation_on_the_model_id(book: Pricebook) -> None:
    request = api.PlanFleetRequest(workloads=[chat(model=common_pb2.ModelRef(model_id="no-such/model-1b"))])
    assert list(violations(request, book)) == ["workloads[0].inference.model.model_id"]


def test_gpu_aliases_resolve_to_catalogue_ids(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat()], constraints=scenario_pb2.Constraints(allowed_gpu_ids=["H200 SXM", "h100-sxm"])
    )
    converted = plan_request_from_proto(request, book)
    assert converted.constraints.allowed_gpus == ("h200-sxm", "h100-sxm")


def test_a_bad_override_is_refused_with_its_proto_path(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat()],
        pricebook_overrides=scenario_pb2.PricebookOverrides(
            offers=[
                scenario_pb2.OfferOverride(
                    offer_id="no-such-offer", price=common_pb2.Money(amount="1", currency_code="USD")
                )
            ]
        ),
    )
    assert list(violations(request, book)) == ["pricebook_overrides.offers[0].offer_id"]
