"""A disaggregated deployment's two roles on its ``DeploymentLine``, and its share of the fabric.

``roles_of`` describes a disaggregated unit candidate (the line's own gpu/tp/precision are the
decode role's, its replicas count units). ``network_cost`` is the part of the scale-out fabric the
plan buys (``network_capex_per_server`` per server, shared over its GPU slots) that the
deployment's GPUs take when its KV crosses the fabric.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import cast

from pricebook.schema import Currency, Money
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.results import DeploymentLine, DisaggregatedRole, DisaggregatedRoles


def roles_of(c: Candidate, units_peak: int) -> DisaggregatedRoles | None:
    """The two roles of a disaggregated candidate at ``units_peak`` units (None: not one)."""
    unit = c.unit
    if unit is None:
        return None
    roles = [
        DisaggregatedRole(
            gpu=r.gpu,
            tp=r.tp,
            ep=r.ep,
            attention_dp=r.attention_dp,
            precision=c.precision,
            engines_per_unit=r.engines,
            gpus_peak=r.gpus * units_peak,
        )
        for r in (unit.prefill, unit.decode)
    ]
    return DisaggregatedRoles(roles[0], roles[1], unit.kv_link, unit.kv_bytes_per_request)


def with_roles(
    lines: Sequence[DeploymentLine],
    candidates: dict[str, Candidate],
    instance: FleetInstance,
    solution: FleetSolution,
    currency: str,
) -> tuple[DeploymentLine, ...]:
    """``lines`` with every disaggregated line's roles and its share of the fabric."""
    out = []
    for line in lines:
        c = candidates.get(line.id)
        roles = roles_of(c, line.replicas_peak) if c is not None else None
        if roles is not None and roles.kv_link == "network":
            roles = dataclasses.replace(roles, network_cost=network_cost(roles, instance, solution, currency))
        out.append(dataclasses.replace(line, disaggregation=roles) if roles is not None else line)
    return tuple(out)


def network_cost(
    roles: DisaggregatedRoles, instance: FleetInstance, solution: FleetSolution, currency: str
) -> Money | None:
    """The fabric price per GPU of the plan's bought servers of each role's type (multi-node ones:
    constraint 16 puts them in the fabric) × the role's GPUs; None when no bought server pays one."""
    options = {o.id: o for o in instance.options}
    per_gpu: dict[str, float] = {}
    for chosen in solution.options:
        o = options.get(chosen.option_id)
        if o is None or not o.networked(chosen.servers):
            continue
        per_gpu[o.gpu] = max(per_gpu.get(o.gpu, 0.0), o.network_capex_per_server / max(1, o.gpus_per_server))
    total = sum(per_gpu.get(r.gpu, 0.0) * r.gpus_peak for r in (roles.prefill, roles.decode))
    return Money(amount=round(total, 2), currency=cast("Currency", currency)) if total > 0 else None
