"""Domain requests → proto (the client's path for pydantic inputs): they round-trip."""

from __future__ import annotations

from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.overrides import OfferOverride, PricebookOverrides
from pricebook.schema import OfferKind, Pricebook
from service.convert.encode import fleet_to_proto, plan_request_to_proto
from service.convert.evaluate import evaluate_request_from_proto
from service.convert.scenario import plan_request_from_proto
from solver import domain


def _request() -> domain.PlanRequest:
    return domain.PlanRequest(
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


def test_domain_request_round_trips_through_proto(book: Pricebook) -> None:
    original = _request()
    proto = plan_request_to_proto(original)
    assert plan_request_from_proto(proto, book) == original


def test_the_deployment_policy_round_trips_through_proto(book: Pricebook) -> None:
    for policy in (None, *domain.DeploymentPolicy):
        limits = _request().constraints.model_copy(update={"deployment_policy": policy})
        original = _request().model_copy(update={"constraints": limits})
        assert plan_request_from_proto(plan_request_to_proto(original), book) == original


def test_overrides_round_trip_through_proto(book: Pricebook) -> None:
    overrides = PricebookOverrides(
        offers=(
            OfferOverride(
                offer_id="quote-1",
                kind=OfferKind.ON_DEMAND,
                gpu="h100-sxm",
                price=domain.money("2.50", "USD"),
            ),
        ),
        site={"pue": 1.3},
        fx_usd_krw=1400.0,
    )
    original = _request().model_copy(update={"overrides": overrides})
    assert plan_request_from_proto(plan_request_to_proto(original), book).overrides == overrides


def test_a_domain_fleet_round_trips_through_proto(book: Pricebook) -> None:
    od = domain.AcquisitionMode.ON_DEMAND
    fleet = domain.Fleet(
        items=(
            domain.FleetItem(gpu="h200-sxm", mode=domain.AcquisitionMode.BUY, count=8, owned=False),
            domain.FleetItem(gpu="a100-sxm-80gb", mode=od, count=1, offer="a100-sxm-80gb.od.runpod-secure"),
        )
    )
    plan = plan_request_to_proto(_request())
    message = api.EvaluateFleetRequest(fleet=fleet_to_proto(fleet), workloads=plan.workloads)
    assert evaluate_request_from_proto(message, book)[0] == fleet
