"""Proto → domain conversion: validation errors carry proto field paths and readable reasons;
pricebook references are checked; domain → proto → domain round-trips."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from api.fleetplan.v1 import common_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import load_default
from pricebook.schema import Pricebook
from service import converters
from solver import domain
from solver.errors import FieldViolation, InvalidRequest


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def chat(name: str = "chat", **inference: Any) -> scenario_pb2.Workload:
    fields: dict[str, Any] = {
        "model": common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        "input_tokens": 1000,
        "output_tokens": 200,
        "daily_tokens": 50_000_000,
    }
    fields.update(inference)
    return scenario_pb2.Workload(name=name, inference=scenario_pb2.InferenceWorkload(**fields))


def violations(request: api.PlanFleetRequest, book: Pricebook) -> dict[str, str]:
    with pytest.raises(InvalidRequest) as info:
        converters.plan_request_from_proto(request, book)
    return {v.field: v.reason for v in info.value.violations}


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
    training = scenario_pb2.Workload(
        name="",
        training=scenario_pb2.TrainingWorkload(
            model=common_pb2.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
            method=common_pb2.TRAINING_METHOD_LORA,
            tokens_per_run=-1.0,
        ),
    )
    found = violations(api.PlanFleetRequest(workloads=[chat("a"), training]), book)
    assert set(found) == {"workloads[1].name", "workloads[1].training.tokens_per_run"}


def test_gpus_per_run_limit_must_be_positive(book: Pricebook) -> None:
    training = scenario_pb2.Workload(
        name="ft",
        training=scenario_pb2.TrainingWorkload(
            model=common_pb2.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
            method=common_pb2.TRAINING_METHOD_LORA,
            tokens_per_run=1e8,
            max_gpus_per_run=0,
        ),
    )
    found = violations(api.PlanFleetRequest(workloads=[training]), book)
    assert list(found) == ["workloads[0].training.max_gpus_per_run"]


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


def test_unknown_enum_number_is_a_violation(book: Pricebook) -> None:
    request = api.PlanFleetRequest(workloads=[chat(precision=99)])
    assert violations(request, book) == {"workloads[0].inference.precision": "unknown value 99"}


def test_workload_without_a_kind_is_named(book: Pricebook) -> None:
    found = violations(api.PlanFleetRequest(workloads=[scenario_pb2.Workload(name="x")]), book)
    assert "workloads[0]" in found


def test_gpu_aliases_resolve_to_catalogue_ids(book: Pricebook) -> None:
    request = api.PlanFleetRequest(
        workloads=[chat()], constraints=scenario_pb2.Constraints(allowed_gpu_ids=["H200 SXM", "h100-sxm"])
    )
    converted = converters.plan_request_from_proto(request, book)
    assert converted.constraints.allowed_gpus == ("h200-sxm", "h100-sxm")


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
    converted = converters.plan_request_from_proto(request, book)
    workload = converted.inference[0]
    assert workload.precision is domain.Precision.FP8
    assert workload.interactive is False
    assert workload.hourly_profile == (1.0,) * 24
    c = converted.constraints
    assert (c.currency, c.horizon_months, c.include_host_costs) == ("KRW", 24, False)
    assert c.capex_budget == domain.money("500000000", "KRW")
    assert c.allowed_modes == (domain.AcquisitionMode.BUY, domain.AcquisitionMode.ON_DEMAND)


def test_domain_request_round_trips_through_proto(book: Pricebook) -> None:
    original = domain.PlanRequest(
        inference=(
            domain.InferenceWorkload(
                name="rag",
                model=domain.ModelRef(model_id="meta-llama/Llama-3.3-70B-Instruct"),
                precision=domain.Precision.FP8,
                input_tokens=4000,
                output_tokens=400,
                daily_tokens=3 * 10**8,
                peak_to_average=2.5,
                sla=domain.Sla(ttft_p95_ms=2000, tpot_p95_ms=50),
                prefix_cache_hit_rate=0.3,
            ),
            domain.InferenceWorkload(
                name="spec",
                model=domain.ModelRef(spec=domain.ModelSpec(params_b=30, active_params_b=3)),
                input_tokens=100,
                output_tokens=100,
                peak_request_rate_per_s=2.5,
                interactive=False,
            ),
        ),
        training=(
            domain.TrainingWorkload(
                name="ft",
                model=domain.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
                method=domain.TrainingMethod.LORA,
                reference=domain.ReferenceGpuHours(gpu="h100-sxm", gpu_hours_per_month=300),
                deadline_hours=24,
                max_gpus_per_run=1,
            ),
        ),
        constraints=domain.Constraints(
            currency="KRW",
            capex_budget=domain.money("500000000", "KRW"),
            power_cap_kw=40.0,
            allowed_gpus=("h200-sxm", "rtx-pro-6000-ws"),
            owned=(domain.OwnedGpus(gpu="h100-sxm", count=2),),
            count_bounds=(domain.CountBound(gpu="h200-sxm", max_count=8),),
            include_host_costs=False,
        ),
        options=domain.SolverOptions(time_limit_s=5, backend="scip", compute_sensitivity=False),
    )
    proto = converters.plan_request_to_proto(original)
    assert converters.plan_request_from_proto(proto, book) == original


def test_fleet_items_need_a_mode_and_a_known_gpu(book: Pricebook) -> None:
    request = api.EvaluateFleetRequest(
        fleet=scenario_pb2.Fleet(items=[scenario_pb2.FleetItem(gpu_id="h999", count=2)]), workloads=[chat()]
    )
    with pytest.raises(InvalidRequest) as info:
        converters.evaluate_request_from_proto(request, book)
    fields = {v.field for v in info.value.violations}
    assert fields == {"fleet.items[0].gpu_id", "fleet.items[0].mode"}


def test_sweep_paths_are_prefixed_with_base(book: Pricebook) -> None:
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat(daily_tokens=-1)]),
        dimension=api.SWEEP_DIMENSION_CAPEX_BUDGET,
        values=[1e8, -2.0],
    )
    with pytest.raises(InvalidRequest) as info:
        converters.sweep_request_from_proto(request, book)
    assert {v.field for v in info.value.violations} == {
        "base.workloads[0].inference.daily_tokens",
        "values[1]",
    }


def test_performance_case_errors_name_the_case_field(book: Pricebook) -> None:
    good = api.EstimatePerformanceRequest().cases.add(
        gpu_id="h100-sxm",
        model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_len=100,
        output_len=100,
        concurrency=4,
    )
    request = api.EstimatePerformanceRequest(cases=[good, good.__class__(gpu_id="nope", input_len=10)])
    with pytest.raises(InvalidRequest) as info:
        converters.performance_cases_from_proto(request, book)
    fields = {v.field for v in info.value.violations}
    assert {"cases[1].gpu_id", "cases[1].model", "cases[1].output_len"} <= fields
    assert not any(f.startswith("cases[0]") for f in fields)
    partial = converters.performance_cases_from_proto(
        api.EstimatePerformanceRequest(cases=request.cases, allow_partial_failure=True), book
    )
    assert isinstance(partial[0], dict) and partial[0]["gpu"] == "h100-sxm" and partial[0]["concurrency"] == 4
    assert not isinstance(partial[1], dict)


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (1234.5678, "USD", "1234.57"),
        (1234.5, "KRW", "1234"),
        (1235.5, "KRW", "1236"),
        (-0.001, "USD", "0"),
        (1e12, "KRW", "1000000000000"),
    ],
)
def test_amounts_round_to_the_currency_minor_unit(amount: float, currency: str, expected: str) -> None:
    money = converters.amount_to_proto(amount, currency)
    assert (money.amount, money.currency_code) == (expected, currency)


def test_decimal_text_never_uses_an_exponent() -> None:
    assert converters.decimal_text(Decimal("1E+8")) == "100000000"
    assert converters.decimal_text(Decimal("3.9900")) == "3.99"


def test_sweep_values_that_break_the_scenario_are_refused(book: Pricebook) -> None:
    request = api.SweepPlansRequest(
        base=api.PlanFleetRequest(workloads=[chat()]),
        dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER,
        values=[2.0, 1e300],
    )
    with pytest.raises(InvalidRequest) as info:
        converters.sweep_request_from_proto(request, book)
    assert [v.field for v in info.value.violations] == ["values[1]"]
    assert "daily_tokens" in info.value.violations[0].reason


def test_domain_violations_are_reported_with_proto_paths() -> None:
    training = scenario_pb2.Workload(name="ft", training=scenario_pb2.TrainingWorkload())
    paths = converters.path_map([chat("a"), training, chat("b")], prefix="base")
    error = InvalidRequest(
        [
            FieldViolation("inference[1].sla.ttft_p95_ms", "too tight"),
            FieldViolation("training[0].reference.gpu", "unknown"),
            FieldViolation("overrides.site.pue", "must be at least 1"),
            FieldViolation("cases[0].tp", "kept as is"),
        ]
    )
    translated = [v.field for v in converters.domain_violations_to_proto(error, paths).violations]
    assert translated == [
        "base.workloads[2].inference.sla.ttft_p95_ms",
        "base.workloads[1].training.reference_gpu_hours.gpu_id",
        "base.pricebook_overrides.site_assumptions.pue",
        "cases[0].tp",
    ]
