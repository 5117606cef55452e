"""Scenario messages → domain requests: validation errors carry proto field paths and readable
reasons; every proto field reaches the domain; pricebook references (``solver.resolve``) are
refused on their proto fields, with suggestions, and GPU aliases resolve to catalogue ids."""

from __future__ import annotations

import math

import pytest
from convert_support import chat, lora, violations

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from service.convert.scenario import plan_request_from_proto
from solver import domain


def test_empty_request_names_the_workloads_field(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(), book)
    assert list(found) == ["workloads"]
    assert "at least one" in found["workloads"]


def test_negative_daily_tokens_points_at_the_proto_path(book: Pricebook) -> None:
    request = api.PlanFleetRequest(workloads=[chat("a"), chat("b", daily_tokens=-5)])
    found = violations(request, book)
    assert found == {"workloads[1].inference.daily_tokens": "must be greater than 0 (got -5)"}


def test_every_bad_field_is_reported_at_once_with_its_own_path(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat("a", sla=scenario_pb2.Sla(ttft_p95_ms=-1.0))],
        constraints=scenario_pb2.Constraints(
            currency_code="EUR", capex_budget=common_pb2.Money(amount="lots", currency_code="KRW")
        ),
    )
    found = violations(request, book)
    assert set(found) == {
        "workloads[0].inference.sla.ttft_p95_ms",
        "constraints.currency_code",
        "constraints.capex_budget.amount",
    }
    assert "USD" in found["constraints.currency_code"] and "EUR" in found["constraints.currency_code"]


def test_training_and_name_paths_keep_the_proto_workload_index(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(workloads=[chat("a"), lora("", tokens_per_run=-1.0)]), book)
    assert set(found) == {"workloads[1].name", "workloads[1].training.tokens_per_run"}


def test_a_name_over_the_domain_cap_names_the_field(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(workloads=[chat("n" * (domain.MAX_NAME_CHARS + 1))]), book)
    assert list(found) == ["workloads[0].name"]
    assert str(domain.MAX_NAME_CHARS) in found["workloads[0].name"]


def test_gpus_per_run_limit_must_be_positive(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(workloads=[lora(max_gpus_per_run=0)]), book)
    assert list(found) == ["workloads[0].training.max_gpus_per_run"]


def test_unknown_enum_number_is_a_violation(book: Pricebook) -> None:
    request = api.PlanFleetRequest(workloads=[chat(precision=99)])
    assert violations(request, book) == {"workloads[0].inference.precision": "unknown value 99"}


def test_workload_without_a_kind_is_named(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(workloads=[scenario_pb2.Workload(name="x")]), book)
    assert "workloads[0]" in found


def test_proto_fields_reach_the_domain(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[
            chat(
                precision=common_pb2.PRECISION_FP8,
                serving_kind=scenario_pb2.SERVING_KIND_BATCH,
                peak_to_average=2.0,
                hourly_profile=[1.0] * 24,
            )
        ],
        constraints=scenario_pb2.Constraints(
            currency_code="KRW",
            horizon_months=24,
            include_host_costs=False,
            capex_budget=common_pb2.Money(amount="500000000", currency_code="KRW"),
            allowed_modes=[common_pb2.ACQUISITION_MODE_BUY, common_pb2.ACQUISITION_MODE_ON_DEMAND],
        ),
    )
    converted = plan_request_from_proto(request, book)
    workload = converted.inference[0]
    assert workload.precision is domain.Precision.FP8
    assert workload.interactive is False
    assert workload.hourly_profile == (1.0,) * 24
    c = converted.constraints
    assert (c.currency, c.horizon_months, c.include_host_costs) == ("KRW", 24, False)
    assert c.capex_budget == domain.money("500000000", "KRW")
    assert c.allowed_modes == (domain.AcquisitionMode.BUY, domain.AcquisitionMode.ON_DEMAND)


def test_unset_optional_fields_keep_the_domain_defaults(book: Pricebook) -> None:
    converted = plan_request_from_proto(api.PlanFleetRequest(workloads=[chat(), lora()]), book)
    assert converted.training[0].seq_len == domain.TrainingWorkload.model_fields["seq_len"].default
    assert converted.options == domain.SolverOptions()
    assert converted.constraints == domain.Constraints()


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


def test_resolve_paths_map_to_the_proto_fields(book: Pricebook) -> None:
    # solver.resolve names domain fields (training[0].reference.gpu, constraints.owned[0].gpu, …).
    reference = scenario_pb2.ReferenceGpuHours(gpu_id="h100x", gpu_hours_per_month=300)
    request = api.PlanFleetRequest(
        workloads=[chat(), lora(tokens_per_run=None, reference_gpu_hours=reference)],
        constraints=scenario_pb2.Constraints(owned_gpus=[scenario_pb2.OwnedGpus(gpu_id="b9000", count=1)]),
        pricebook_overrides=scenario_pb2.PricebookOverrides(
            offers=[
                scenario_pb2.OfferOverride(
                    offer_id="quote.x",
                    kind=scenario_pb2.OFFER_KIND_PURCHASE_GPU,
                    gpu_id="h100x",
                    price=common_pb2.Money(amount="1", currency_code="USD"),
                )
            ]
        ),
    )
    assert list(violations(request, book)) == [
        "workloads[1].training.reference_gpu_hours.gpu_id",
        "constraints.owned_gpus[0].gpu_id",
        "pricebook_overrides.offers[0].gpu_id",
    ]


def _usd(amount: str) -> common_pb2.Money:
    return common_pb2.Money(amount=amount, currency_code="USD")


@pytest.mark.parametrize(
    ("constraints", "field"),
    [
        ({"capex_budget": common_pb2.Money(amount="-5", currency_code="USD")}, "constraints.capex_budget"),
        (
            {"capex_budget": common_pb2.Money(amount="", currency_code="USD")},
            "constraints.capex_budget.amount",
        ),
        (
            {"capex_budget": common_pb2.Money(amount="1e400", currency_code="USD")},
            "constraints.capex_budget.amount",
        ),
        (
            {"monthly_opex_cap": common_pb2.Money(amount="-1", currency_code="USD")},
            "constraints.monthly_opex_cap",
        ),
        (
            {"count_bounds": [scenario_pb2.CountBound(gpu_id="h100-sxm", min_count=5, max_count=2)]},
            "constraints.count_bounds[0]",
        ),
        ({"power_cap_kw": -1.0}, "constraints.power_cap_kw"),
        ({"rack_units_cap": -2}, "constraints.rack_units_cap"),
        # Whole-system lines (issue 15): installation, software licences, storage.
        ({"installation_fraction": -0.1}, "constraints.installation_fraction"),
        ({"installation_fraction": 1.5}, "constraints.installation_fraction"),
        ({"installation_fraction": math.nan}, "constraints.installation_fraction"),
        (
            {"installation_per_server": common_pb2.Money(amount="-5", currency_code="USD")},
            "constraints.installation_per_server",
        ),
        (
            {"installation_per_server": common_pb2.Money(amount="1e400", currency_code="USD")},
            "constraints.installation_per_server.amount",
        ),
        (
            {"software_licences": [scenario_pb2.SoftwareLicence(name="x", price_per_gpu_year=_usd("-5"))]},
            "constraints.software_licences[0].price_per_gpu_year",
        ),
        (
            {"software_licences": [scenario_pb2.SoftwareLicence(name="x", price_per_gpu_year=_usd(""))]},
            "constraints.software_licences[0].price_per_gpu_year.amount",
        ),
        (
            {"software_licences": [scenario_pb2.SoftwareLicence(name="x")]},
            "constraints.software_licences[0].price_per_gpu_year",
        ),
        (
            {"software_licences": [scenario_pb2.SoftwareLicence(name="", price_per_gpu_year=_usd("10"))]},
            "constraints.software_licences[0].name",
        ),
        (
            {"storage": scenario_pb2.Storage(capacity_tb=10, price_per_tb=_usd("1e400"))},
            "constraints.storage.price_per_tb.amount",
        ),
        (
            {"storage": scenario_pb2.Storage(capacity_tb=10, price_per_tb=_usd("-1"))},
            "constraints.storage.price_per_tb",
        ),
        (
            {"storage": scenario_pb2.Storage(capacity_tb=0, price_per_tb=_usd("1"))},
            "constraints.storage.capacity_tb",
        ),
        (
            {"storage": scenario_pb2.Storage(capacity_tb=math.inf, price_per_tb=_usd("1"))},
            "constraints.storage.capacity_tb",
        ),
        (
            {"storage": scenario_pb2.Storage(capacity_tb=1e9, price_per_tb=_usd("1"))},
            "constraints.storage.capacity_tb",
        ),
    ],
)
def test_money_and_bounds_that_cannot_mean_anything_name_their_field(
    book: Pricebook, constraints: dict[str, object], field: str
) -> None:
    request = api.PlanFleetRequest(workloads=[chat("a")], constraints=scenario_pb2.Constraints(**constraints))
    assert list(violations(request, book)) == [field]


@pytest.mark.parametrize(
    ("amount", "field"),
    [
        ("-5", "pricebook_overrides.api_prices[0].input_per_mtok"),
        ("", "pricebook_overrides.api_prices[0].input_per_mtok.amount"),
        ("1e400", "pricebook_overrides.api_prices[0].input_per_mtok.amount"),
    ],
)
def test_a_requests_api_price_must_be_real_money(book: Pricebook, amount: str, field: str) -> None:
    price = scenario_pb2.ApiPriceOverride(
        model_id="meta-llama/Llama-3.1-70B",
        input_per_mtok=common_pb2.Money(amount=amount, currency_code="USD"),
        output_per_mtok=common_pb2.Money(amount="0.5", currency_code="USD"),
    )
    request = api.PlanFleetRequest(
        workloads=[chat("a")], pricebook_overrides=scenario_pb2.PricebookOverrides(api_prices=[price])
    )
    assert list(violations(request, book)) == [field]


def test_unknown_api_price_model_offer_policy_and_pinned_offer_name_their_fields(book: Pricebook) -> None:
    price = scenario_pb2.ApiPriceOverride(
        model_id="no-such-model",
        input_per_mtok=common_pb2.Money(amount="0.5", currency_code="USD"),
        output_per_mtok=common_pb2.Money(amount="0.5", currency_code="USD"),
    )
    request = api.PlanFleetRequest(
        workloads=[chat("a")], pricebook_overrides=scenario_pb2.PricebookOverrides(api_prices=[price])
    )
    assert violations(request, book) == {
        "pricebook_overrides.api_prices[0].model_id": "unknown model 'no-such-model'"
    }
    bad_policy = api.PlanFleetRequest(
        workloads=[chat("a")],
        constraints=scenario_pb2.Constraints(offer_policy=99),  # type: ignore[arg-type]
    )
    assert violations(bad_policy, book) == {"constraints.offer_policy": "unknown value 99"}
    pinned = api.PlanFleetRequest(
        workloads=[chat("a")],
        constraints=scenario_pb2.Constraints(pinned_offer_ids=["h200-sxm.od.nebius", "nope"]),
    )
    found = violations(pinned, book)
    assert list(found) == ["constraints.pinned_offer_ids[1]"]
    assert "unknown offer 'nope'" in found["constraints.pinned_offer_ids[1]"]


def test_a_blank_name_and_an_absurd_fx_rate_are_refused(book: Pricebook) -> None:
    blank = chat("   ")
    request = api.PlanFleetRequest(
        workloads=[blank], pricebook_overrides=scenario_pb2.PricebookOverrides(fx_usd_krw=1e300)
    )
    found = violations(request, book)
    assert found["workloads[0].name"] == "must not be blank"
    assert "pricebook_overrides.fx_usd_krw" in found
