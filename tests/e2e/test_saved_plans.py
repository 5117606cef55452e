"""Saved plans end to end over gRPC: restart on the same store (SQLite and PostgreSQL), re-pricing
after a pricebook change, ComparePlans of the 500M KRW example against its H200-only variant, the
store's error statuses, idempotent saves."""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import grpc
import pytest

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from api.fleetplan.v1 import plan_store_pb2 as store_api
from clients import AsyncFleetPlannerClient, FleetPlanError, FleetPlannerClient
from clients.scenario import load_scenario
from tests.e2e.pricebook_copies import with_offer_price
from tests.e2e.servers import store_server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _request(example: str, **save: object) -> api.PlanFleetRequest:
    request = load_scenario(EXAMPLES / example, api.PlanFleetRequest)
    for name, value in save.items():
        if name == "tags":
            request.tags.extend(value)  # type: ignore[arg-type]
        else:
            setattr(request, name, value)
    return request


def test_a_saved_plan_survives_a_restart_and_reprices_against_a_new_price(
    store_spec: str, tmp_path: Path
) -> None:
    request = _request("60m_krw_single_gpu.yaml", save=True, label="march-bid", tags=["bid"])
    with store_server(store_spec) as server, FleetPlannerClient(server.address, timeout_s=120) as client:
        planned = client.plan_fleet(request)
    assert planned.plan_id and planned.plan.fleet

    with store_server(store_spec) as server, FleetPlannerClient(server.address, timeout_s=120) as client:
        saved = client.get_plan(planned.plan_id)
        assert saved.response.SerializeToString(deterministic=True) == planned.SerializeToString(
            deterministic=True
        )
        assert saved.label == "march-bid" and list(saved.tags) == ["bid"]
        assert saved.pricebook_content_hash == planned.provenance.pricebook_content_hash
        unchanged = client.reprice_plan(planned.plan_id)
    assert unchanged.still_feasible and not unchanged.price_changes
    assert Decimal(unchanged.horizon_tco_change.amount) == 0

    line = next(line for line in planned.plan.fleet if line.offer_id and line.HasField("price_per_gpu"))
    book, _ = with_offer_price(tmp_path, line.offer_id, Decimal("0.8"))
    with store_server(store_spec, pricebook_dir=book) as server, FleetPlannerClient(server.address) as client:
        repriced = client.reprice_plan(planned.plan_id)
    assert repriced.still_feasible
    (change,) = [p for p in repriced.price_changes if p.offer_id == line.offer_id]
    assert change.saved_price == line.price_per_gpu
    ratio = Decimal(change.current_price.amount) / Decimal(change.saved_price.amount)
    assert abs(ratio - Decimal("0.8")) < Decimal("0.001")
    assert any(line.offer_id in reason for reason in repriced.reasons)
    assert Decimal(repriced.horizon_tco_change.amount) < 0  # a cheaper card makes the fleet cheaper
    assert {v.name for v in repriced.version_changes} >= {"pricebook_content_hash"}


def _fleet_by_key(plan: plan_pb2.Plan) -> dict[tuple[str, int, str, bool], int]:
    counts: dict[tuple[str, int, str, bool], int] = defaultdict(int)
    for line in plan.fleet:
        counts[(line.gpu_id, line.mode, line.server_id, line.owned)] += line.gpu_count
    return counts


@pytest.mark.slow
def test_compare_the_500m_example_with_its_buy_only_variant(tmp_path: Path) -> None:
    mixed = _request("500m_krw_portfolio.yaml", save=True, label="mixed")
    variant = _request("500m_krw_portfolio.yaml", save=True, label="buy-only")
    del variant.constraints.allowed_modes[:]
    variant.constraints.allowed_modes.append(common_pb2.ACQUISITION_MODE_BUY)
    # The example rents on demand at its peak hours: the variant buys everything, without the
    # budget cap (which a bought peak would break).
    variant.constraints.ClearField("capex_budget")
    with store_server(str(tmp_path / "plans.db")) as server, FleetPlannerClient(server.address) as client:
        base, other = client.plan_fleet(mixed), client.plan_fleet(variant)
        diff = client.compare_plans(base.plan_id, other.plan_id)
    assert base.plan.status == other.plan.status == plan_pb2.PLAN_STATUS_OPTIMAL

    before, after = _fleet_by_key(base.plan), _fleet_by_key(other.plan)
    expected_lines = {k: (before.get(k, 0), after.get(k, 0)) for k in before.keys() | after.keys()}
    expected_lines = {k: v for k, v in expected_lines.items() if v[0] != v[1]}
    assert expected_lines, "the buy-only variant must hold a different fleet"
    got = {
        (c.gpu_id, c.mode, c.server_id, c.owned): (c.base_gpu_count, c.other_gpu_count)
        for c in diff.fleet_changes
    }
    assert {k: v for k, v in got.items() if v[0] != v[1]} == expected_lines
    assert all(mode == common_pb2.ACQUISITION_MODE_BUY for (_, mode, *_), (_, count) in expected_lines.items() if count)

    totals = {c.name: c for c in diff.total_changes}
    tco_change = Decimal(other.plan.cost.horizon_tco.amount) - Decimal(base.plan.cost.horizon_tco.amount)
    assert tco_change != 0
    assert Decimal(totals["horizon_tco"].change.amount) == tco_change
    assert totals["horizon_tco"].base_amount == base.plan.cost.horizon_tco
    components_before = {c.name: Decimal(c.horizon_amount.amount) for c in base.plan.cost.components}
    components_after = {c.name: Decimal(c.horizon_amount.amount) for c in other.plan.cost.components}
    for change in diff.component_changes:
        if change.HasField("change"):
            expected = components_after.get(change.name, Decimal(0)) - components_before.get(
                change.name, Decimal(0)
            )
            assert Decimal(change.change.amount) == expected, change.name
    changed_components = {
        n
        for n in components_before.keys() | components_after.keys()
        if components_before.get(n) != components_after.get(n)
    }
    assert {c.name for c in diff.component_changes} == changed_components

    moved = {
        d.workload_name
        for d in base.plan.deployments
        if d.gpu_id != next(o.gpu_id for o in other.plan.deployments if o.workload_name == d.workload_name)
    }
    assert moved <= {c.workload_name for c in diff.deployment_changes}
    assert diff.base.label == "mixed" and diff.other.label == "buy-only"


def test_store_errors_are_statuses(tmp_path: Path) -> None:
    quick = _request("60m_krw_single_gpu.yaml")
    with store_server(str(tmp_path / "plans.db")) as server, FleetPlannerClient(server.address) as client:
        with pytest.raises(FleetPlanError) as missing:
            client.get_plan("01" + "0" * 24)
        assert missing.value.code == grpc.StatusCode.NOT_FOUND and missing.value.reason == "PLAN_NOT_FOUND"
        with pytest.raises(FleetPlanError) as bad_id:
            client.get_plan("not-an-id")
        assert bad_id.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in bad_id.value.violations] == ["plan_id"]
        with pytest.raises(FleetPlanError) as bad_token:
            client.list_plans(store_api.ListPlansRequest(page_token="nonsense"))
        assert bad_token.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in bad_token.value.violations] == ["page_token"]
        label_alone = _request("60m_krw_single_gpu.yaml", label="x")
        with pytest.raises(FleetPlanError) as no_save:
            client.plan_fleet(label_alone)
        assert [v.field for v in no_save.value.violations] == ["save"]

    with store_server("none") as server, FleetPlannerClient(server.address) as client:
        assert client.plan_fleet(quick).plan.fleet  # planning needs no store
        for call in (
            lambda: client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True)),
            client.list_plans,
        ):
            with pytest.raises(FleetPlanError) as disabled:
                call()
            assert disabled.value.code == grpc.StatusCode.FAILED_PRECONDITION
            assert disabled.value.reason == "STORE_DISABLED"

    with (
        store_server(str(tmp_path / "plans.db"), store_read_only=True) as server,
        FleetPlannerClient(server.address) as client,
    ):
        assert client.list_plans().plans == []
        with pytest.raises(FleetPlanError) as read_only:
            client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True))
        assert read_only.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert read_only.value.reason == "STORE_READ_ONLY"

    # A database nobody answers: saving is UNAVAILABLE (retryable), planning without saving works.
    with (
        store_server("postgresql://fleetplan@127.0.0.1:9/none") as server,
        FleetPlannerClient(server.address) as client,
    ):
        assert client.plan_fleet(quick).plan.fleet
        with pytest.raises(FleetPlanError) as down:
            client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True))
        assert down.value.code == grpc.StatusCode.UNAVAILABLE and down.value.reason == "STORE_UNAVAILABLE"


def test_a_retried_save_returns_the_first_plan(tmp_path: Path) -> None:
    with store_server(str(tmp_path / "plans.db")) as server, FleetPlannerClient(server.address) as client:
        by_metadata = [
            client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True), request_id="retry-1")
            for _ in range(3)
        ]
        by_field = [
            client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True, request_id="retry-2"))
            for _ in range(2)
        ]
        fresh = client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True))
        listed = client.list_plans().plans
    assert len({r.plan_id for r in by_metadata}) == 1 and len({r.plan_id for r in by_field}) == 1
    assert by_metadata[0] == by_metadata[2]
    assert {p.plan_id for p in listed} == {by_metadata[0].plan_id, by_field[0].plan_id, fresh.plan_id}
    with pytest.raises(FleetPlanError) as reused:
        client_request = _request("14b_finetune.yaml", save=True, request_id="retry-2")
        with store_server(str(tmp_path / "plans.db")) as server, FleetPlannerClient(server.address) as client:
            client.plan_fleet(client_request)
    assert reused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in reused.value.violations] == ["request_id"]


def test_the_requester_is_the_tokens_name(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# NAME TOKEN, or a token\nalice secret-alice-1\nsecret-anon-2\n", encoding="utf-8")
    request = _request("60m_krw_single_gpu.yaml", save=True)
    with store_server(str(tmp_path / "plans.db"), token_file=tokens) as server:
        with FleetPlannerClient(server.address, bearer_token="secret-alice-1") as alice:
            named = alice.get_plan(alice.plan_fleet(request).plan_id)
        with FleetPlannerClient(server.address, bearer_token="secret-anon-2") as anonymous:
            unnamed = anonymous.get_plan(anonymous.plan_fleet(request).plan_id)
    assert named.requester == "alice"
    assert unnamed.requester == "token-" + hashlib.sha256(b"secret-anon-2").hexdigest()[:8]
    assert "secret" not in unnamed.requester


def test_the_async_client_has_the_same_plan_methods(tmp_path: Path) -> None:
    async def session(address: str) -> None:
        async with AsyncFleetPlannerClient(address) as client:
            saved = await client.plan_fleet(_request("60m_krw_single_gpu.yaml", save=True))
            assert (await client.get_plan(saved.plan_id)).response == saved
            assert [p.plan_id for p in (await client.list_plans()).plans] == [saved.plan_id]
            same = await client.compare_plans(saved.plan_id, saved.plan_id)
            assert list(same.messages) == ["the two plans are the same"]
            assert (await client.reprice_plan(saved.plan_id)).still_feasible
            await client.delete_plan(saved.plan_id)
            assert (await client.list_plans()).plans == []

    with store_server(str(tmp_path / "plans.db")) as server:
        asyncio.run(session(server.address))
