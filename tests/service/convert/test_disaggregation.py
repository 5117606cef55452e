"""Disaggregated deployments on the wire (issue 33): a hand-built disaggregated plan's roles and its
comparison with the aggregated plan reach the Plan message field for field, survive the plan store
(saved bytes read back) and the saved-plan comparison; an aggregated plan's message is unchanged."""

from __future__ import annotations

import functools
from decimal import Decimal
from pathlib import Path

import pytest

from api.fleetplan.v1 import common_pb2, plan_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from service.convert.plan import plan_to_proto
from service.convert.plan_diff import compare, deployment_changes
from service.convert.plan_store import saved_response
from solver.planner.results import DisaggregatedRole, PlanResult
from store.location import store_url
from store.records import NewPlan
from store.sql import SqlPlanStore
from store.ulid import new_ulid
from tests.solver.planner.disagg_factories import (
    DECODE_ENGINES,
    KV_BYTES,
    PREFILL_ENGINES,
    PREFILL_TP,
    disaggregated,
    small_plan,
)

PRECISIONS = {
    "fp8": common_pb2.PRECISION_FP8,
    "bf16": common_pb2.PRECISION_BF16,
    "fp4": common_pb2.PRECISION_FP4,
}


@functools.cache
def _aggregated() -> PlanResult:
    return small_plan()


@functools.cache
def _disaggregated() -> PlanResult:
    return disaggregated(_aggregated(), prefill_gpu="h100-sxm")


def _same_role(wire: plan_pb2.DisaggregatedRole, role: DisaggregatedRole) -> None:
    assert (wire.gpu_id, wire.tp, wire.ep, wire.attention_dp) == (
        role.gpu,
        role.tp,
        role.ep,
        role.attention_dp,
    )
    assert wire.precision == PRECISIONS[str(role.precision)]
    assert (wire.engines_per_unit, wire.gpus_peak) == (role.engines_per_unit, role.gpus_peak)


def test_the_roles_and_the_comparison_reach_the_plan_message() -> None:
    result = _disaggregated()
    plan = plan_to_proto(result)
    group = plan.deployment_groups[0]
    roles = result.deployment_lines[0].disaggregation
    assert roles is not None and group.HasField("disaggregation")
    _same_role(group.disaggregation.prefill, roles.prefill)
    _same_role(group.disaggregation.decode, roles.decode)
    assert group.disaggregation.prefill.gpu_id == "h100-sxm" and group.disaggregation.prefill.tp == PREFILL_TP
    assert (group.disaggregation.prefill.engines_per_unit, group.disaggregation.decode.engines_per_unit) == (
        PREFILL_ENGINES,
        DECODE_ENGINES,
    )
    assert group.disaggregation.kv_link == "network"
    assert group.disaggregation.kv_bytes_per_request == KV_BYTES
    assert Decimal(group.disaggregation.network_cost.amount) == Decimal("4321.09")
    # The group's GPUs are both roles' (units × engines × TP each), not units × the decode TP.
    units = result.deployment_lines[0].replicas_peak
    assert group.gpus_peak == units * (PREFILL_ENGINES * PREFILL_TP + DECODE_ENGINES * roles.decode.tp)
    tco = Decimal(plan.cost.horizon_tco.amount)
    assert Decimal(plan.disaggregation.saving.amount) == Decimal("12345.67")
    assert Decimal(plan.disaggregation.aggregated_tco.amount) == tco + Decimal("12345.67")
    assert plan.disaggregation.aggregated_tco.currency_code == plan.cost.currency_code


def test_without_an_aggregated_plan_the_comparison_carries_the_reason() -> None:
    result = disaggregated(_aggregated(), saving=None, reason="no aggregated deployment meets TTFT 300 ms")
    plan = plan_to_proto(result)
    assert not plan.disaggregation.HasField("aggregated_tco") and not plan.disaggregation.HasField("saving")
    assert plan.disaggregation.reason == "no aggregated deployment meets TTFT 300 ms"


def test_an_aggregated_plan_has_no_disaggregation_fields() -> None:
    plan = plan_to_proto(_aggregated())
    assert not plan.HasField("disaggregation")
    assert not any(g.HasField("disaggregation") for g in plan.deployment_groups)
    # Only the new fields differ between the two messages.
    other = plan_to_proto(_disaggregated())
    other.ClearField("disaggregation")
    other.deployment_groups[0].ClearField("disaggregation")
    other.deployment_groups[0].gpus_peak = plan.deployment_groups[0].gpus_peak
    assert other == plan


@pytest.fixture
def repository(tmp_path: Path) -> SqlPlanStore:
    url = store_url(str(tmp_path / "plans.db"))
    assert url is not None
    return SqlPlanStore(url)


def test_a_saved_disaggregated_plan_reads_back_and_compares(repository: SqlPlanStore) -> None:
    response = api.PlanFleetResponse(plan=plan_to_proto(_disaggregated()))
    plan_id = new_ulid()
    repository.save(
        NewPlan(plan_id=plan_id, request=b"", response=response.SerializeToString(deterministic=True))
    )
    loaded = saved_response(repository.get(plan_id))
    repository.close()
    assert loaded == response
    assert (
        loaded.plan.deployment_groups[0].disaggregation == response.plan.deployment_groups[0].disaggregation
    )
    aggregated = api.PlanFleetResponse(plan=plan_to_proto(_aggregated()))
    (change,) = deployment_changes(aggregated.plan, loaded.plan)
    decode = loaded.plan.deployment_groups[0].disaggregation.decode
    units = loaded.plan.deployment_groups[0].replicas_peak
    assert change.description.endswith(
        f"→ {units} × (prefill {PREFILL_ENGINES} × h100-sxm TP{PREFILL_TP} fp8 + decode {DECODE_ENGINES} × "
        f"{decode.gpu_id} TP{decode.tp} fp8)"
    ), change.description
    assert "the two plans are the same" in compare(loaded, loaded).messages
