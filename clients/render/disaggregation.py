"""A plan's disaggregated deployments (issue 33): each one's two roles, their GPUs and the
prefill:decode ratio, how the KV cache travels, and why disaggregation won (the cheapest aggregated
plan's cost and the saving, or why there is none). Every figure is the response's own."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2
from clients.render.tables import Cell, Table
from clients.render.values import money, precision_name
from report.text import disaggregated, ratio, role

HEADERS = [
    "group",
    "prefill role",
    "prefill engines/unit",
    "decode role",
    "decode engines/unit",
    "p:d",
    "units peak",
    "prefill GPUs",
    "decode GPUs",
    "KV link",
    "KV MB/request",
    "KV network cost",
]


def role_name(r: plan_pb2.DisaggregatedRole) -> str:
    """E.g. "h200-sxm TP2 fp8"."""
    return role(r.gpu_id, r.tp, r.ep, r.attention_dp, precision_name(r.precision))


def unit_name(roles: plan_pb2.DisaggregatedRoles) -> str:
    """One unit of the deployment, e.g. "(prefill 1 × h200-sxm TP2 fp8 + decode 3 × h100-sxm TP4 fp8)"."""
    p, d = roles.prefill, roles.decode
    return disaggregated(role_name(p), p.engines_per_unit, role_name(d), d.engines_per_unit)


def disaggregated_names(plan: plan_pb2.Plan) -> dict[str, str]:
    """Group id → its unit's name, for the disaggregated groups of ``plan``."""
    return {
        g.group_id: unit_name(g.disaggregation)
        for g in plan.deployment_groups
        if g.HasField("disaggregation")
    }


def disaggregation_table(plan: plan_pb2.Plan) -> Table | None:
    """One row per disaggregated group; None when the plan has none."""
    rows: list[list[Cell]] = []
    for g in plan.deployment_groups:
        if not g.HasField("disaggregation"):
            continue
        roles = g.disaggregation
        p, d = roles.prefill, roles.decode
        rows.append(
            [
                g.group_id,
                role_name(p),
                p.engines_per_unit,
                role_name(d),
                d.engines_per_unit,
                ratio(p.engines_per_unit, d.engines_per_unit),
                g.replicas_peak,
                p.gpus_peak,
                d.gpus_peak,
                roles.kv_link or "-",
                roles.kv_bytes_per_request / 1e6,
                money(roles.network_cost) if roles.HasField("network_cost") else "-",
            ]
        )
    if not rows:
        return None
    return Table(
        "disaggregation", "Disaggregated deployments (prefill and decode on separate engines)", HEADERS, rows
    )


def why_disaggregated(plan: plan_pb2.Plan) -> list[str]:
    """The line saying why disaggregation won (empty without a comparison)."""
    if not plan.HasField("disaggregation"):
        return []
    c = plan.disaggregation
    if c.HasField("aggregated_tco"):
        saving = f"; disaggregation saves {money(c.saving)}" if c.HasField("saving") else ""
        remark = f" ({c.reason})" if c.reason else ""
        return [
            f"why disaggregated: the cheapest aggregated plan costs {money(c.aggregated_tco)}{saving}{remark}"
        ]
    return [f"why disaggregated: no aggregated plan meets the SLAs{f' ({c.reason})' if c.reason else ''}"]


def disaggregation_section(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = disaggregation_table(plan)
    out = table.section(markdown=markdown) if table is not None else []
    return out + why_disaggregated(plan)
