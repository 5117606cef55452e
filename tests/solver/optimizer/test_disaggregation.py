"""Disaggregated units in the MIP (``solver.optimizer.disaggregation``), on hand-built instances.

Prices and capacities are stated here; the expected plans are worked out by hand in each test."""

from __future__ import annotations

import dataclasses

import pytest

from solver.domain import Precision
from solver.optimizer.api import solve
from solver.optimizer.disaggregation import check_disaggregation, networked_roles
from solver.optimizer.evaluate import check_solution
from solver.optimizer.instance import Candidate, DisaggRole, DisaggUnit, FleetInstance
from solver.optimizer.model import usable_candidates
from solver.optimizer.results import SolveStatus
from tests.solver.optimizer.opt_factories import ALL_DAY, candidate, flat_demand, option

FABRIC_PER_SERVER = 80.0


def _unit(
    *, capacity: float, link: str = "network", kv_bytes: float = 1e8, nic_gbps: float = 400.0
) -> Candidate:
    """1 prefill engine of 2 GPUs "p" + 2 decode engines of 2 GPUs "d" (6 GPUs) serving ``capacity``."""
    unit = DisaggUnit(DisaggRole("p", 2, 2, 1, 1), DisaggRole("d", 2, 2, 1, 2), link, kv_bytes, nic_gbps)
    return Candidate(
        id="chat/disagg/p-tp2x1+d-tp2x2/fp8",
        workload="chat",
        gpu="d",
        tp=2,
        precision=Precision.FP8,
        kv_precision=Precision.FP8,
        capacity_req_s=capacity,
        unit=unit,
    )


def _instance(rate: float, unit_capacity: float) -> FleetInstance:
    """GPUs "p" and "d" at 100 each on 8-GPU servers (domain 8) with a fabric of 80 a server;
    aggregated replicas on "d" (TP2, 2 req/s) beside the unit."""
    options = tuple(
        dataclasses.replace(
            option(g, capex=100, per_server=8, domain=8), network_capex_per_server=FABRIC_PER_SERVER
        )
        for g in ("p", "d")
    )
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=options,
        inference=(flat_demand("chat", rate),),
        candidates=(candidate("chat", "d", 2.0, tp=2), _unit(capacity=unit_capacity)),
    )


def test_units_take_gpus_of_both_types_and_their_servers_join_the_fabric() -> None:
    # 20 req/s: two units (4 "p" + 8 "d" GPUs), one server of each type, each made two servers by
    # the fabric rule: 12 × 100 + 4 servers × 80 = 1 520. Aggregated only: 10 replicas = 20 "d"
    # GPUs on 3 servers: 2 000 + 240 = 2 240.
    inst = _instance(20.0, 10.0)
    sol = solve(inst, time_limit_s=20, relative_gap=1e-9, explain=False)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.cost.total == pytest.approx(1520.0)
    counts = {c.gpu: (c.gpus, c.servers) for c in sol.options}
    assert counts == {"p": (4, 2), "d": (8, 2)}
    assert check_solution(inst, sol) == []


def test_aggregated_replicas_win_when_the_unit_is_dearer() -> None:
    # A unit of 6 GPUs for 5 req/s (120 a req/s) against TP2 at 2 req/s (100 a req/s): 4 req/s is
    # two aggregated replicas on one "d" server, 400; no fabric is needed.
    inst = _instance(4.0, 5.0)
    sol = solve(inst, time_limit_s=20, relative_gap=1e-9, explain=False)
    assert sol.cost.total == pytest.approx(400.0)
    assert all(u.candidate.unit is None for a in sol.assignments for u in a.uses if any(u.replicas))


def test_the_check_catches_a_unit_outside_the_fabric_and_kv_over_its_nics() -> None:
    inst = _instance(20.0, 10.0)
    sol = solve(inst, time_limit_s=20, relative_gap=1e-9, explain=False)
    one_server = dataclasses.replace(
        sol, options=tuple(dataclasses.replace(c, servers=1) if c.gpu == "p" else c for c in sol.options)
    )
    assert [v.subject for v in check_disaggregation(inst, one_server)] == ["p/buy"]
    # 10 req/s × 2e10 bytes = 200 GB/s over 2 prefill GPUs' 400G NICs (100 GB/s at line rate).
    heavy = _unit(capacity=10.0, kv_bytes=2e10)
    flooded = dataclasses.replace(
        sol,
        assignments=tuple(
            dataclasses.replace(
                a,
                uses=tuple(
                    dataclasses.replace(u, candidate=heavy) if u.candidate.unit is not None else u
                    for u in a.uses
                ),
            )
            for a in sol.assignments
        ),
    )
    assert [v.subject for v in check_disaggregation(inst, flooded)] == [heavy.id]


def test_a_unit_kept_in_one_server_is_one_group_of_its_gpus() -> None:
    # Over NVLink the unit's 8 GPUs (2 + 3 × 2) must share one domain: not with 4-GPU domains.
    unit = DisaggUnit(DisaggRole("d", 2, 1, 1, 1), DisaggRole("d", 2, 1, 1, 3), "nvlink", 1e8)
    c = dataclasses.replace(_unit(capacity=10.0), unit=unit)
    assert c.tp_groups() == (("d", 8, 1),)
    assert c.gpus_by_type() == (("d", 8.0),)
    small = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("d", capex=100, per_server=4, domain=4),),
        inference=(flat_demand("chat", 1.0),),
        candidates=(c,),
    )
    assert usable_candidates(small) == ()
    assert networked_roles([c]).by_gpu == {}
