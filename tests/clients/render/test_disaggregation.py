"""clients.render.disaggregation: a disaggregated plan (recorded from the hand-built factory,
tests/solver/planner/disagg_factories.py) shows both roles, their GPUs, the ratio and the KV link,
names the unit in the workloads and groups tables, and says why disaggregation won; ``--json``
prints the fields. Expected values are read from the recorded message, not from the renderer."""

from __future__ import annotations

import json
from decimal import Decimal

from recorded import RESPONSES, _load

from api.fleetplan.v1 import fleet_planner_pb2 as api
from api.fleetplan.v1 import plan_pb2
from clients.cli.output import to_json
from clients.render import plan_tables, render_plan
from clients.render.disaggregation import why_disaggregated


def _response() -> api.PlanFleetResponse:
    return _load(RESPONSES / "disaggregated_plan.json", api.PlanFleetResponse)


def _grouped(amount: str) -> str:
    return f"{Decimal(amount):,.0f}"


def test_the_table_shows_both_roles_their_gpus_the_ratio_and_the_link() -> None:
    plan = _response().plan
    group = next(g for g in plan.deployment_groups if g.HasField("disaggregation"))
    roles = group.disaggregation
    (table,) = [t for t in plan_tables(plan) if t.name == "disaggregation"]
    (row,) = table.rows
    cells = dict(zip(table.headers, row, strict=True))
    assert cells["prefill role"] == f"{roles.prefill.gpu_id} TP{roles.prefill.tp} fp8"
    assert cells["decode role"] == f"{roles.decode.gpu_id} TP{roles.decode.tp} fp8"
    assert cells["prefill engines/unit"] == roles.prefill.engines_per_unit
    assert cells["p:d"] == f"{roles.prefill.engines_per_unit}:{roles.decode.engines_per_unit}"
    assert (cells["prefill GPUs"], cells["decode GPUs"]) == (roles.prefill.gpus_peak, roles.decode.gpus_peak)
    assert cells["units peak"] == group.replicas_peak and cells["KV link"] == roles.kv_link
    assert cells["KV MB/request"] == roles.kv_bytes_per_request / 1e6


def test_the_workloads_and_groups_tables_name_the_unit() -> None:
    response = _response()
    text = render_plan(response.plan, response.provenance)
    group = response.plan.deployment_groups[0]
    p, d = group.disaggregation.prefill, group.disaggregation.decode
    unit = (
        f"(prefill {p.engines_per_unit} × {p.gpu_id} TP{p.tp} fp8 + "
        f"decode {d.engines_per_unit} × {d.gpu_id} TP{d.tp} fp8)"
    )
    assert f"{group.replicas_peak} × {unit}" in text  # the workload's row
    (groups,) = [t for t in plan_tables(response.plan) if t.name == "deployment_groups"]
    assert groups.rows[0][:2] == [unit, "disaggregated"]


def test_why_disaggregation_won_copies_the_comparison() -> None:
    plan = _response().plan
    c = plan.disaggregation
    (line,) = why_disaggregated(plan)
    assert _grouped(c.aggregated_tco.amount) in line and _grouped(c.saving.amount) in line
    # The saving is the aggregated plan's TCO less this one's, as the planner gave it.
    assert Decimal(c.aggregated_tco.amount) - Decimal(plan.cost.horizon_tco.amount) == Decimal(
        c.saving.amount
    )


def test_without_an_aggregated_plan_the_reason_is_shown() -> None:
    plan = plan_pb2.Plan(
        disaggregation=plan_pb2.DisaggregationComparison(reason="TTFT 200 ms needs prefill apart")
    )
    assert why_disaggregated(plan) == [
        "why disaggregated: no aggregated plan meets the SLAs (TTFT 200 ms needs prefill apart)"
    ]
    assert why_disaggregated(plan_pb2.Plan()) == []


def test_json_output_carries_the_roles_and_the_comparison() -> None:
    response = _response()
    printed = json.loads(to_json(response))
    roles = printed["plan"]["deployment_groups"][0]["disaggregation"]
    wire = response.plan.deployment_groups[0].disaggregation
    assert roles["prefill"]["gpu_id"] == wire.prefill.gpu_id and roles["decode"]["tp"] == wire.decode.tp
    assert roles["prefill"]["engines_per_unit"] == wire.prefill.engines_per_unit
    assert roles["kv_link"] == wire.kv_link
    assert printed["plan"]["disaggregation"]["saving"]["amount"] == response.plan.disaggregation.saving.amount
