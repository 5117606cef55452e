"""The request's site model and residual credit (issue 30 item 7) and the co-location switch (issue
28) reach the domain; bad values and bad site assumptions are refused naming their proto field."""

from __future__ import annotations

from convert_support import chat, violations
from google.protobuf import struct_pb2

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import scenario_pb2
from pricebook.schema import Pricebook, SiteModel
from service.convert.encode import plan_request_to_proto
from service.convert.scenario import plan_request_from_proto


def _request(**constraints: object) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(workloads=[chat()], constraints=scenario_pb2.Constraints(**constraints))


def test_site_model_and_residual_credit_reach_the_domain(book: Pricebook) -> None:
    request = _request(site_model=scenario_pb2.SITE_MODEL_OWN_SITE, residual_value_credit=False)
    c = plan_request_from_proto(request, book).constraints
    assert (c.site_model, c.residual_value_credit) == (SiteModel.OWN_SITE, False)


def test_unset_they_defer_to_the_pricebook(book: Pricebook) -> None:
    c = plan_request_from_proto(_request(), book).constraints
    assert (c.site_model, c.residual_value_credit) == (None, None)


def test_an_unknown_site_model_names_the_field(book: Pricebook) -> None:
    assert violations(_request(site_model=7), book) == {"constraints.site_model": "unknown value 7"}


def test_a_negative_space_price_names_the_site_assumption(book: Pricebook) -> None:
    site = struct_pb2.Struct()
    site.update({"own_site_space_price_month": "-1 KRW"})
    request = api.PlanFleetRequest(
        workloads=[chat()], pricebook_overrides=scenario_pb2.PricebookOverrides(site_assumptions=site)
    )
    assert list(violations(request, book)) == [
        "pricebook_overrides.site_assumptions.own_site_space_price_month"
    ]


def test_the_settings_survive_a_round_trip(book: Pricebook) -> None:
    request = _request(site_model=scenario_pb2.SITE_MODEL_COLOCATION, residual_value_credit=True)
    domain_request = plan_request_from_proto(request, book)
    again = plan_request_from_proto(plan_request_to_proto(domain_request), book)
    assert again.constraints.site_model is SiteModel.COLOCATION
    assert again.constraints.residual_value_credit is True


def test_allow_colocation_is_true_unless_turned_off_and_survives_a_round_trip(book: Pricebook) -> None:
    assert plan_request_from_proto(_request(), book).constraints.allow_colocation is True
    off = plan_request_from_proto(_request(allow_colocation=False), book)
    assert off.constraints.allow_colocation is False
    assert not plan_request_to_proto(off).constraints.allow_colocation
    assert plan_request_to_proto(off).constraints.HasField("allow_colocation")
    again = plan_request_from_proto(plan_request_to_proto(off), book)
    assert again.constraints.allow_colocation is False
    on = plan_request_from_proto(_request(allow_colocation=True), book)
    assert not plan_request_to_proto(on).constraints.HasField("allow_colocation")  # the default
