"""The multi-node fabric in the MIP (constraint 4: ``single_node`` binaries): a bought server model
pays its scale-out fabric only once the plan buys two or more of its servers. Every optimum below
is derived by hand; the MIP's objective, the solution's cost and the evaluator must all agree."""

from __future__ import annotations

import dataclasses

import pytest
from opt_factories import ALL_DAY, candidate, flat_demand, option

from solver.domain import AcquisitionMode
from solver.optimizer import Caps, FleetInstance, SolveStatus, check_solution, solve
from solver.units import HOURS_PER_MONTH

GPU_PRICE = 1_000.0
SLOTS = 8
FABRIC_PER_SERVER = 2_000.0  # e.g. 8 GPUs × $250 of switch ports and optics
REPLICA_REQ_S = 1.0  # one GPU serves 1 req/s


def _instance(
    rate: float, *, on_demand_hourly: float | None = None, caps: Caps | None = None
) -> FleetInstance:
    bought = dataclasses.replace(
        option("g", capex=GPU_PRICE, per_server=SLOTS, domain=SLOTS, full=True),
        network_capex_per_server=FABRIC_PER_SERVER,
    )
    options: tuple = (bought,)
    if on_demand_hourly is not None:
        options += (option("g", mode=AcquisitionMode.ON_DEMAND, per_server=1, busy_hourly=on_demand_hourly),)
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=options,
        inference=(flat_demand("chat", rate),),
        candidates=(candidate("chat", "g", REPLICA_REQ_S),),
        caps=caps or Caps(),
    )


def _solved(inst: FleetInstance) -> tuple[float, dict[str, int]]:
    sol = solve(inst, time_limit_s=20)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.cost is not None and sol.stats.objective is not None
    assert check_solution(inst, sol) == []
    # The MIP's objective is the cost the solution reports (one priced model).
    assert sol.stats.objective == pytest.approx(sol.cost.total, rel=1e-6)
    return sol.cost.total, {c.option_id: c.servers for c in sol.options}


def test_one_server_needs_no_fabric() -> None:
    total, servers = _solved(_instance(8.0))  # 8 GPUs: one full board
    assert servers == {"g/buy": 1}
    assert total == pytest.approx(SLOTS * GPU_PRICE)


def test_two_servers_pay_the_fabric_of_both() -> None:
    total, servers = _solved(_instance(9.0))  # 9 GPUs: two full boards, multi-node
    assert servers == {"g/buy": 2}
    assert total == pytest.approx(2 * SLOTS * GPU_PRICE + 2 * FABRIC_PER_SERVER)


def test_the_fabric_can_tip_the_plan_to_renting_the_ninth_gpu() -> None:
    # One more GPU: a second board costs 8 × 1,000 + the fabric of both servers (2 × 2,000) =
    # 12,000; renting it on demand around the clock for 36 months at h costs 36 × 730 × h.
    # At h = 0.40 renting costs 10,512 (cheaper than 12,000, dearer than 8,000 without a fabric).
    hourly = 0.40
    rent = 36 * HOURS_PER_MONTH * hourly
    assert SLOTS * GPU_PRICE < rent < SLOTS * GPU_PRICE + 2 * FABRIC_PER_SERVER
    total, servers = _solved(_instance(9.0, on_demand_hourly=hourly))
    assert servers.get("g/buy") == 1
    assert total == pytest.approx(SLOTS * GPU_PRICE + rent, rel=1e-6)


def test_the_capex_budget_counts_the_fabric() -> None:
    # Two boards need 16,000 + 4,000 of fabric: a 19,999 budget leaves only one board (+ rentals).
    inst = _instance(9.0, on_demand_hourly=1.0, caps=Caps(capex_budget=19_999.0))
    total, servers = _solved(inst)
    assert servers.get("g/buy") == 1
    assert total == pytest.approx(SLOTS * GPU_PRICE + 36 * HOURS_PER_MONTH * 1.0, rel=1e-6)
