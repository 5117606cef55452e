"""Scenario messages → domain requests: validation errors carry proto field paths and readable
reasons; every proto field reaches the domain."""

from __future__ import annotations

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
