"""End to end: the real server on 127.0.0.1:0, called through the generated stubs and the client.

Every RPC is called with a good request and with a bad one (INVALID_ARGUMENT naming the field);
health and reflection are checked over the wire.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from collections.abc import Iterator
from decimal import Decimal

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from api.fleetplan.v1 import catalog_pb2, common_pb2, performance_pb2, plan_pb2, scenario_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import fleet_planner_pb2_grpc as rpc
from clients import AsyncFleetPlannerClient, FleetPlanError, FleetPlannerClient
from pricebook import load_default
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings
from solver import domain
from solver.perf.cases import EstimateCase

SMALL_GPUS = ["l40s", "h100-sxm"]


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    running = start_in_thread(ServerSettings(address="127.0.0.1:0", grace_period_s=1.0))
    yield running
    running.stop(grace_s=0.5)


@pytest.fixture(scope="module")
def client(server: ThreadedServer) -> Iterator[FleetPlannerClient]:
    with FleetPlannerClient(server.address, timeout_s=60) as c:
        yield c


def chat_workload(name: str = "chat", daily_tokens: int = 200_000_000) -> scenario_pb2.Workload:
    return scenario_pb2.Workload(
        name=name,
        inference=scenario_pb2.InferenceWorkload(
            model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
            input_tokens=1000,
            output_tokens=200,
            daily_tokens=daily_tokens,
            sla=scenario_pb2.Sla(ttft_p95_ms=2000, tpot_p95_ms=60),
        ),
    )


def small_plan(**constraints: object) -> api.PlanFleetRequest:
    return api.PlanFleetRequest(
        workloads=[chat_workload()],
        constraints=scenario_pb2.Constraints(allowed_gpu_ids=SMALL_GPUS, **constraints),  # type: ignore[arg-type]
        solver_options=scenario_pb2.SolverOptions(time_limit_s=10, compute_sensitivity=False),
    )


def expect_invalid(call: object, *fields: str) -> FleetPlanError:
    assert callable(call)
    with pytest.raises(FleetPlanError) as info:
        call()
    error = info.value
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT, error
    assert error.domain == "fleetplan.v1"
    assert error.reason and error.reason == error.reason.upper()
    found = {v.field for v in error.violations}
    for field in fields:
        assert field in found, f"{field} not among {found}"
    assert all(v.description for v in error.violations)
    return error


# -- health and reflection ---------------------------------------------------------------------


def test_health_reports_serving_over_the_wire(server: ThreadedServer) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "fleetplan.v1.FleetPlanner"):
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_service_and_its_rpcs(server: ThreadedServer) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="fleetplan.v1.FleetPlanner"),
        ]
        replies = list(stub.ServerReflectionInfo(iter(requests), timeout=5))
    services = {s.name for s in replies[0].list_services_response.service}
    assert {"fleetplan.v1.FleetPlanner", "grpc.health.v1.Health"} <= services
    methods: set[str] = set()
    for raw in replies[1].file_descriptor_response.file_descriptor_proto:
        file = descriptor_pb2.FileDescriptorProto.FromString(raw)
        for service in file.service:
            if f"{file.package}.{service.name}" == "fleetplan.v1.FleetPlanner":
                methods = {m.name for m in service.method}
    assert methods == {
        "PlanFleet",
        "EvaluateFleet",
        "EstimatePerformance",
        "AnalyzeBreakEven",
        "ListCatalog",
        "SweepPlans",
        "ExportPlan",
    }


def test_every_call_returns_a_request_id(server: ThreadedServer) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = rpc.FleetPlannerStub(channel)
        _, call = stub.ListCatalog.with_call(
            api.ListCatalogRequest(kinds=[catalog_pb2.CATALOG_KIND_SITE]),
            metadata=(("x-request-id", "bid-42"),),
            timeout=10,
        )
        assert ("x-request-id", "bid-42") in tuple(call.initial_metadata())


# -- PlanFleet ---------------------------------------------------------------------------------


def test_plan_fleet_returns_a_verified_plan_with_its_provenance(client: FleetPlannerClient) -> None:
    response = client.plan_fleet(small_plan())
    plan = response.plan
    assert plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
    assert plan.fleet and all(line.gpu_id in SMALL_GPUS and line.gpu_count > 0 for line in plan.fleet)
    assert [d.workload_name for d in plan.deployments] == ["chat"]
    deployment = plan.deployments[0]
    # The SLA the request asked for holds in the predicted deployment.
    assert 0 < deployment.ttft_p95_ms <= 2000 and 0 < deployment.tpot_ms <= 60
    assert deployment.capacity_req_s >= deployment.demand_req_s > 0
    # Demand in req/s follows from the request: 2e8 tokens/day ÷ 1200 tokens/request ÷ 86,400 s.
    assert deployment.demand_req_s == pytest.approx(200_000_000 / 1200 / 86_400, rel=1e-6)
    cost = plan.cost
    assert cost.currency_code == "USD"
    components = sum(Decimal(c.horizon_amount.amount) for c in cost.components)
    assert components == pytest.approx(Decimal(cost.horizon_tco.amount), abs=Decimal(len(cost.components)))
    stats = plan.solver_statistics
    assert stats.backend and stats.variables > 0 and stats.constraints > 0
    book = load_default()
    assert response.provenance.pricebook_version == book.version
    assert response.provenance.pricebook_content_hash == book.content_hash
    assert response.provenance.server_version == importlib.metadata.version("fleetplan")
    assert response.provenance.performance_model_version


def test_plan_fleet_infeasible_is_an_answer_not_an_error(client: FleetPlannerClient) -> None:
    request = small_plan(capex_budget=common_pb2.Money(amount="1", currency_code="USD"))
    plan = client.plan_fleet(request).plan
    assert plan.status == plan_pb2.PLAN_STATUS_INFEASIBLE
    assert plan.HasField("diagnosis")
    assert any(c.cap == "capex_budget" for c in plan.diagnosis.binding_caps) or plan.diagnosis.messages


def test_empty_plan_request_is_invalid_argument_naming_workloads(client: FleetPlannerClient) -> None:
    expect_invalid(lambda: client.plan_fleet(api.PlanFleetRequest()), "workloads")


def test_negative_daily_tokens_is_invalid_argument_naming_the_field(client: FleetPlannerClient) -> None:
    request = small_plan()
    request.workloads[0].inference.daily_tokens = -1000
    expect_invalid(lambda: client.plan_fleet(request), "workloads[0].inference.daily_tokens")


def test_unknown_gpu_id_is_invalid_argument_naming_the_field(client: FleetPlannerClient) -> None:
    request = small_plan()
    request.constraints.allowed_gpu_ids.append("h100-sxm5-9000")
    error = expect_invalid(lambda: client.plan_fleet(request), "constraints.allowed_gpu_ids[2]")
    assert "h100-sxm5-9000" in error.violations[0].description


# -- EvaluateFleet -----------------------------------------------------------------------------


def test_evaluate_fleet_reports_fit_and_cost(client: FleetPlannerClient) -> None:
    plan = small_plan()
    request = api.EvaluateFleetRequest(
        fleet=scenario_pb2.Fleet(
            items=[scenario_pb2.FleetItem(gpu_id="h100-sxm", mode=common_pb2.ACQUISITION_MODE_BUY, count=8)]
        ),
        workloads=plan.workloads,
        constraints=plan.constraints,
        solver_options=plan.solver_options,
        compare_with_optimal=True,
    )
    response = client.evaluate_fleet(request)
    assert response.feasible
    assert [f.workload_name for f in response.fits] == ["chat"]
    assert response.fits[0].served_fraction == pytest.approx(1.0)
    assert Decimal(response.fleet_horizon_tco.amount) >= Decimal(response.optimal_horizon_tco.amount) > 0
    saving = Decimal(response.fleet_horizon_tco.amount) - Decimal(response.optimal_horizon_tco.amount)
    assert Decimal(response.saving_of_optimal.amount) == pytest.approx(saving, abs=Decimal(1))


def test_evaluate_fleet_bad_fleet_is_invalid_argument(client: FleetPlannerClient) -> None:
    request = api.EvaluateFleetRequest(
        fleet=scenario_pb2.Fleet(
            items=[scenario_pb2.FleetItem(gpu_id="h100-sxm", count=-2, mode=common_pb2.ACQUISITION_MODE_BUY)]
        ),
        workloads=[chat_workload()],
    )
    expect_invalid(lambda: client.evaluate_fleet(request), "fleet.items[0].count")


# -- EstimatePerformance -----------------------------------------------------------------------


def seed000_case(gpu: str) -> performance_pb2.PerformanceCase:
    """Seed 000's benchmark: Ministral-3-14B FP8, 7000 in / 1024 out, 50 concurrent users."""
    return performance_pb2.PerformanceCase(
        gpu_id=gpu,
        model=common_pb2.ModelRef(model_id="mistralai/Ministral-3-14B-Instruct-2512"),
        precision=common_pb2.PRECISION_FP8,
        input_len=7000,
        output_len=1024,
        concurrency=50,
    )


def test_estimate_performance_inference_and_training(client: FleetPlannerClient) -> None:
    training = performance_pb2.PerformanceCase(
        mode=performance_pb2.ESTIMATE_MODE_TRAIN,
        gpu_id="h200-sxm",
        num_gpus=2,
        model=common_pb2.ModelRef(model_id="Qwen/Qwen2.5-14B-Instruct"),
        method=common_pb2.TRAINING_METHOD_LORA,
        tokens=2e8,
    )
    response = client.estimate_performance(
        [seed000_case("h100-sxm"), seed000_case("rtx-pro-6000-ws"), training]
    )
    h100, rtx, train = response.results
    assert [r.case_index for r in response.results] == [0, 1, 2]
    for result in (h100, rtx):
        e = result.inference
        assert e.fits and e.tp == 1 and e.replicas == 1
        assert e.output_tok_s_low <= e.output_tok_s_total <= e.output_tok_s_high
        assert e.ttft_ms > 0 and e.tpot_ms > 0 and e.bottleneck
        # Closed loop: each user sees one token per TPOT.
        assert e.per_user_tok_s == pytest.approx(1000.0 / e.tpot_ms, rel=0.05)
    # Seed lesson 1: decode is bandwidth-bound, H100 (3.35 TB/s) beats RTX PRO 6000 (1.79 TB/s).
    assert h100.inference.output_tok_s_total > rtx.inference.output_tok_s_total
    t = train.training
    assert t.fits and t.train_tok_s == pytest.approx(2 * t.train_tok_s_per_gpu, rel=1e-6)
    assert t.hours == pytest.approx(2e8 / t.train_tok_s / 3600, rel=1e-3)
    assert response.provenance.performance_model_version


def test_estimate_performance_partial_failure_keeps_good_cases(client: FleetPlannerClient) -> None:
    bad = seed000_case("h100-sxm")
    bad.tp = 3  # does not divide the model's heads nor num_gpus
    response = client.estimate_performance([seed000_case("h100-sxm"), bad], allow_partial_failure=True)
    assert response.results[0].WhichOneof("outcome") == "inference"
    assert response.results[1].WhichOneof("outcome") == "error"
    assert response.results[1].error.field == "cases[1].tp"
    expect_invalid(lambda: client.estimate_performance([bad]), "cases[0].tp")


def test_estimate_performance_bad_case_is_invalid_argument(client: FleetPlannerClient) -> None:
    case = performance_pb2.PerformanceCase(
        gpu_id="h100-sxm",
        model=common_pb2.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
        input_len=0,
        output_len=100,
        concurrency=8,
    )
    expect_invalid(lambda: client.estimate_performance([case]), "cases[0].input_len")


# -- AnalyzeBreakEven --------------------------------------------------------------------------


def test_analyze_break_even_for_one_gpu_type(client: FleetPlannerClient) -> None:
    request = api.AnalyzeBreakEvenRequest(workloads=[chat_workload()], gpu_id="H100 SXM")
    response = client.analyze_break_even(request)
    rows = {row.gpu_id: row for row in response.break_even.buy_vs_rent}
    assert "h100-sxm" in rows
    assert all(line.gpu_id == "h100-sxm" for line in response.plan.fleet)
    assert [u.workload_name for u in response.unit_costs] == ["chat"]


def test_analyze_break_even_bad_utilization_is_invalid_argument(client: FleetPlannerClient) -> None:
    request = api.AnalyzeBreakEvenRequest(workloads=[chat_workload()], utilization=1.5)
    expect_invalid(lambda: client.analyze_break_even(request), "utilization")


# -- ListCatalog -------------------------------------------------------------------------------


def test_list_catalog_returns_the_whole_pricebook_with_sources(client: FleetPlannerClient) -> None:
    book = load_default()
    response = client.list_catalog()
    assert sorted(g.id for g in response.gpus) == sorted(g.id for g in book.gpus)
    assert len(response.offers) == len(book.offers) and len(response.models) == len(book.models)
    assert len(response.servers) == len(book.servers) and len(response.api_prices) == len(book.api_prices)
    sources: list[catalog_pb2.Source] = [e.source for e in response.gpus]
    sources += [e.source for e in response.servers] + [e.source for e in response.offers]
    sources += [e.source for e in response.api_prices] + [e.source for e in response.models]
    assert all(s.source and s.as_of_date for s in sources)
    assert response.site.fx_rates and response.site.pue >= 1.0
    assert response.provenance.pricebook_content_hash == book.content_hash


def test_list_catalog_kind_filter(client: FleetPlannerClient) -> None:
    response = client.list_catalog([catalog_pb2.CATALOG_KIND_GPU])
    assert response.gpus and not response.offers and not response.models and not response.HasField("site")


def test_list_catalog_unknown_kind_is_invalid_argument(client: FleetPlannerClient) -> None:
    expect_invalid(lambda: client.list_catalog(api.ListCatalogRequest(kinds=[42])), "kinds[0]")  # type: ignore[list-item]


# -- SweepPlans --------------------------------------------------------------------------------


def test_sweep_plans_streams_progress_points_and_frontier(client: FleetPlannerClient) -> None:
    request = api.SweepPlansRequest(
        base=small_plan(), dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER, values=[0.5, 1.0, 2.0]
    )
    messages = list(client.sweep_plans(request))
    kinds = [m.WhichOneof("event") for m in messages]
    assert kinds[0] == "progress" and kinds[-1] == "frontier"
    assert kinds.count("point") == 3
    progress = [m.progress.points_done for m in messages if m.WhichOneof("event") == "progress"]
    assert progress == sorted(progress) and progress[-1] == 3
    frontier = messages[-1].frontier
    assert sorted(p.value for p in frontier.points) == [0.5, 1.0, 2.0]
    costs = {p.value: Decimal(p.horizon_tco.amount) for p in frontier.points}
    assert costs[0.5] <= costs[1.0] <= costs[2.0]  # more demand never costs less
    assert messages[-1].provenance.pricebook_content_hash == load_default().content_hash


def test_sweep_plans_bad_dimension_is_invalid_argument(client: FleetPlannerClient) -> None:
    request = api.SweepPlansRequest(base=small_plan(), values=[1.0])
    expect_invalid(lambda: list(client.sweep_plans(request)), "dimension")


# -- server lifecycle --------------------------------------------------------------------------


def test_a_second_server_on_the_same_port_fails(server: ThreadedServer) -> None:
    with pytest.raises(OSError, match="cannot listen"):
        start_in_thread(ServerSettings(address=server.address))


def test_health_flips_to_not_serving_on_shutdown() -> None:
    running = start_in_thread(ServerSettings(address="127.0.0.1:0", grace_period_s=0.5))
    with grpc.insecure_channel(running.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(service="fleetplan.v1.FleetPlanner")
        assert stub.Check(request, timeout=5).status == health_pb2.HealthCheckResponse.SERVING
        running.run(running.built.set_serving(False))
        assert stub.Check(request, timeout=5).status == health_pb2.HealthCheckResponse.NOT_SERVING
    running.stop(grace_s=0.2)


def test_pricebook_overrides_are_applied_and_echoed(client: FleetPlannerClient) -> None:
    book = load_default()
    offer = next(o for o in book.offers if o.gpu == "h100-sxm" and o.kind.value == "purchase_gpu")
    request = small_plan()
    request.pricebook_overrides.offers.add(
        offer_id=offer.id, price=common_pb2.Money(amount="1000", currency_code="USD")
    )
    request.pricebook_overrides.site_assumptions.update({"pue": 1.5})
    provenance = client.plan_fleet(request).provenance
    assert any(offer.id in text for text in provenance.overrides_applied)
    assert any("pue" in text for text in provenance.overrides_applied)
    assert provenance.pricebook_content_hash not in ("", book.content_hash)


def test_unknown_override_gpu_is_invalid_argument(client: FleetPlannerClient) -> None:
    request = small_plan()
    request.pricebook_overrides.offers.add(
        offer_id="vendor-quote-1",
        kind=scenario_pb2.OFFER_KIND_PURCHASE_GPU,
        gpu_id="h100-extreme",
        price=common_pb2.Money(amount="20000", currency_code="USD"),
    )
    expect_invalid(lambda: client.plan_fleet(request), "pricebook_overrides.offers[0].gpu_id")


def test_bad_site_override_is_invalid_argument_with_its_proto_path(client: FleetPlannerClient) -> None:
    request = small_plan()
    request.pricebook_overrides.site_assumptions.update({"pue": 0.5, "no_such_assumption": 3})
    error = expect_invalid(
        lambda: client.plan_fleet(request),
        "pricebook_overrides.site_assumptions.pue",
        "pricebook_overrides.site_assumptions.no_such_assumption",
    )
    assert all(v.field.startswith("pricebook_overrides.") for v in error.violations)


def test_client_accepts_domain_objects(client: FleetPlannerClient) -> None:
    case = EstimateCase(
        gpu="h100-sxm", model="meta-llama/Llama-3.1-8B", input_len=1000, output_len=200, concurrency=8
    )
    as_dict = {
        "gpu": "l40s",
        "model": "meta-llama/Llama-3.1-8B",
        "input_len": 1000,
        "output_len": 200,
        "concurrency": "max",
    }
    estimates = client.estimate_performance([case, as_dict]).results
    assert [r.case.gpu_id for r in estimates] == ["h100-sxm", "l40s"]
    assert estimates[1].case.max_concurrency and estimates[1].inference.fits

    request = domain.PlanRequest(
        inference=(
            domain.InferenceWorkload(
                name="chat",
                model=domain.ModelRef(model_id="meta-llama/Llama-3.1-8B"),
                input_tokens=1000,
                output_tokens=200,
                daily_tokens=200_000_000,
                sla=domain.Sla(ttft_p95_ms=2000, tpot_p95_ms=60),
            ),
        ),
        constraints=domain.Constraints(allowed_gpus=tuple(SMALL_GPUS)),
        options=domain.SolverOptions(compute_sensitivity=False),
    )
    plan = client.plan_fleet(request).plan
    assert plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
    events = [
        m.WhichOneof("event")
        for m in client.sweep_plans(request, dimension=api.SWEEP_DIMENSION_CAPEX_BUDGET, values=[1e6, 2e6])
    ]
    assert events.count("point") == 2 and events[-1] == "frontier"


def test_async_client_calls_and_decodes_errors(server: ThreadedServer) -> None:
    async def scenario() -> None:
        async with AsyncFleetPlannerClient(server.address, timeout_s=60) as aio_client:
            catalog = await aio_client.list_catalog([catalog_pb2.CATALOG_KIND_GPU])
            assert len(catalog.gpus) == len(load_default().gpus)
            plan = await aio_client.plan_fleet(small_plan())
            assert plan.plan.status in (plan_pb2.PLAN_STATUS_OPTIMAL, plan_pb2.PLAN_STATUS_FEASIBLE)
            with pytest.raises(FleetPlanError) as info:
                await aio_client.plan_fleet(api.PlanFleetRequest())
            assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
            assert [v.field for v in info.value.violations] == ["workloads"]
            sweep = api.SweepPlansRequest(
                base=small_plan(), dimension=api.SWEEP_DIMENSION_DEMAND_MULTIPLIER, values=[1.0, 2.0]
            )
            events = [m.WhichOneof("event") async for m in aio_client.sweep_plans(sweep)]
            assert events.count("point") == 2 and events[-1] == "frontier"

    asyncio.run(scenario())


def test_identical_plan_request_reuses_the_complete_answer(client: FleetPlannerClient) -> None:
    request = small_plan()
    request.workloads[0].inference.daily_tokens = 123_456_789  # not used by any other test here
    first = client.plan_fleet(request)
    second = client.plan_fleet(request)
    assert first.plan.status == plan_pb2.PLAN_STATUS_OPTIMAL
    assert not first.provenance.reused_identical_request
    assert second.provenance.reused_identical_request
    assert second.plan == first.plan
    request.workloads[0].inference.daily_tokens += 1  # any change is a different question
    assert not client.plan_fleet(request).provenance.reused_identical_request
