"""Disaggregated deployments → proto (issue 33): a deployment group's two roles
(``DisaggregatedRoles``) and the plan's comparison with its cheapest aggregated alternative
(``DisaggregationComparison``). Fields are copied as the planner wrote them."""

from __future__ import annotations

from api.fleetplan.v1 import plan_pb2
from service.convert.enums import precision_to_proto
from service.convert.money import set_money
from solver.planner.results import DisaggregatedRole, DisaggregatedRoles, DisaggregationComparison


def role_to_proto(role: DisaggregatedRole) -> plan_pb2.DisaggregatedRole:
    return plan_pb2.DisaggregatedRole(
        gpu_id=role.gpu,
        tp=role.tp,
        ep=role.ep,
        attention_dp=role.attention_dp,
        precision=precision_to_proto(role.precision),
        engines_per_unit=role.engines_per_unit,
        gpus_peak=role.gpus_peak,
    )


def roles_to_proto(roles: DisaggregatedRoles) -> plan_pb2.DisaggregatedRoles:
    out = plan_pb2.DisaggregatedRoles(
        prefill=role_to_proto(roles.prefill),
        decode=role_to_proto(roles.decode),
        kv_link=roles.kv_link,
        kv_bytes_per_request=roles.kv_bytes_per_request,
    )
    set_money(out, "network_cost", roles.network_cost)
    return out


def comparison_to_proto(comparison: DisaggregationComparison) -> plan_pb2.DisaggregationComparison:
    out = plan_pb2.DisaggregationComparison(reason=comparison.reason)
    set_money(out, "aggregated_tco", comparison.aggregated_tco)
    set_money(out, "saving", comparison.saving)
    return out
