"""Hardware serving nothing is removed from a plan (``solver.optimizer.idle``).

A verified plan is padded with GPUs and servers nobody uses (the MIP's own values, more GPUs and
servers on one option), as a time-limited solve may return it. The padding is removed, the cost
drops by exactly its price (from the prices stated here), the deployments stay, and the
independent check passes; hardware a constraint requires (a minimum count) stays. Property
(hypothesis, fixed seed): a plan returned by ``solve`` within a short time limit never holds a
bought or rented GPU that no deployment uses in any hour, beyond its option's unit.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from hypothesis import given, seed, settings
from hypothesis import strategies as st
from opt_factories import ALL_DAY, candidate, flat_demand, option, random_portfolio

from solver.domain import AcquisitionMode
from solver.optimizer.api import solve
from solver.optimizer.driver import solve_one
from solver.optimizer.evaluate import check_solution
from solver.optimizer.idle import has_idle_hardware, without_idle_hardware
from solver.optimizer.instance import CountLimit, FleetInstance
from solver.optimizer.model import MipResult
from solver.optimizer.results import FleetSolution, LimitFired, SolveStatus
from solver.optimizer.solution import build_solution, with_tco_objective

GPU_PRICE = 1_000.0
SERVER_PRICE = 3_000.0
GPU_MONTHLY = 20.0
MONTHS = 36
PER_SERVER = 4
CAPACITY = 10.0
"""Requests/s one replica of "chat" serves on GPU "a"."""


def _instance(rate: float, *, min_count: int = 0) -> FleetInstance:
    """GPU "a" bought in 4-GPU servers (prices above), one workload at ``rate`` requests/s."""
    a = dataclasses.replace(
        option("a", capex=GPU_PRICE, per_server=PER_SERVER, domain=PER_SERVER, fixed_monthly=GPU_MONTHLY),
        capex_per_server=SERVER_PRICE,
    )
    return FleetInstance(
        currency="USD",
        horizon_months=MONTHS,
        buckets=ALL_DAY,
        options=(a,),
        inference=(flat_demand("chat", rate),),
        candidates=(candidate("chat", "a", CAPACITY),),
        count_limits=(CountLimit("a", min_count=min_count),) if min_count else (),
    )


def _padded(instance: FleetInstance, gpus: int, servers: int) -> FleetSolution:
    """The instance's optimal plan with ``gpus`` more GPUs and ``servers`` more servers on its
    option, reported as a time-limited solve would (feasible, the optimum as its proven bound)."""
    mip = solve_one(instance, time_limit_s=10, relative_gap=0.0)
    assert mip.values is not None
    o = instance.options[0].id
    values = dataclasses.replace(
        mip.values, n={o: mip.values.n[o] + gpus}, s={o: mip.values.s[o] + servers}
    )
    optimum = with_tco_objective(build_solution(instance, mip)).stats.objective
    stats = dataclasses.replace(
        mip.stats, status=SolveStatus.FEASIBLE, limit_fired=LimitFired.TIME, relative_gap_target=1e-4
    )
    padded = with_tco_objective(build_solution(instance, MipResult(stats, values)))
    assert padded.cost is not None and optimum is not None
    tco = padded.cost.total
    return dataclasses.replace(
        padded, stats=dataclasses.replace(padded.stats, best_bound=optimum, gap=(tco - optimum) / tco)
    )


def _trimmed(instance: FleetInstance, plan: FleetSolution) -> FleetSolution:
    return without_idle_hardware(instance, plan, time_limit_s=10, backend="scip", capacity_of=None)


def test_idle_gpus_and_an_empty_server_are_removed_at_exactly_their_price() -> None:
    instance = _instance(rate=25.0)  # 3 replicas: 3 GPUs in 1 server
    padded = _padded(instance, gpus=2, servers=1)
    assert (padded.options[0].gpus, padded.options[0].servers) == (5, 2)
    assert not check_solution(instance, padded) and has_idle_hardware(instance, padded)
    plan = _trimmed(instance, padded)
    assert (plan.options[0].gpus, plan.options[0].servers) == (3, 1)
    assert padded.cost is not None and plan.cost is not None
    price = 2 * (GPU_PRICE + MONTHS * GPU_MONTHLY) + SERVER_PRICE
    assert padded.cost.total - plan.cost.total == price
    assert [u.replicas for a in plan.assignments for u in a.uses] == [(3,)]
    assert not check_solution(instance, plan)
    assert plan.status is SolveStatus.OPTIMAL and plan.stats.gap == 0.0
    assert plan.stats.best_bound == padded.stats.best_bound


def test_an_empty_server_alone_is_removed() -> None:
    instance = _instance(rate=25.0)
    padded = _padded(instance, gpus=0, servers=1)
    plan = _trimmed(instance, padded)
    assert plan.options[0].servers == 1
    assert padded.cost is not None and plan.cost is not None
    assert padded.cost.total - plan.cost.total == SERVER_PRICE


def test_gpus_a_minimum_count_requires_stay() -> None:
    instance = _instance(rate=25.0, min_count=5)  # 3 serve, 5 required
    plan = solve(instance, time_limit_s=10, explain=False)
    assert plan.options[0].gpus == 5
    padded = _padded(instance, gpus=2, servers=0)  # 7 GPUs in 2 servers: 2 beyond the minimum
    trimmed = _trimmed(instance, padded)
    assert (trimmed.options[0].gpus, trimmed.options[0].servers) == (5, 2)
    assert padded.cost is not None and trimmed.cost is not None
    assert padded.cost.total - trimmed.cost.total == 2 * (GPU_PRICE + MONTHS * GPU_MONTHLY)


def test_a_plan_without_idle_hardware_is_returned_as_it_is() -> None:
    instance = _instance(rate=25.0)
    plan = solve(instance, time_limit_s=10, explain=False)
    assert not has_idle_hardware(instance, plan)
    assert _trimmed(instance, plan) is plan


def _idle_beyond_unit(instance: FleetInstance, plan: FleetSolution) -> list[str]:
    """Bought or rented GPUs no replica uses in any hour (held), or in that hour (on demand),
    beyond what the option must come in (a whole board of a fixed-board server; one GPU else)."""
    nb = len(plan.buckets)
    used: dict[str, list[float]] = defaultdict(lambda: [0.0] * nb)
    for a in plan.assignments:
        for u in a.uses:
            for b in range(nb):
                used[u.candidate.gpu][b] += u.replicas[b] * u.candidate.tp
    idle = []
    for gpu in {o.gpu for o in plan.options}:
        options = [o for o in plan.options if o.gpu == gpu]
        held = sum(o.gpus for o in options if o.mode is AcquisitionMode.BUY)
        boards = [instance.option(o.option_id) for o in options if o.gpus > 0]
        unit = max((o.gpus_per_server for o in boards if o.server_must_be_full), default=1)
        if held and held - max(used[gpu]) >= unit:
            idle.append(f"{gpu}: {held} held, at most {max(used[gpu])} in use")
        for b in range(nb):
            rented = sum(o.on_demand_gpus[b] for o in options if o.on_demand_gpus)
            if rented and held + rented - used[gpu][b] >= 1:
                idle.append(f"{gpu}: {rented} rented in bucket {b}, {used[gpu][b]} in use beyond {held} held")
    return idle


@seed(2028)
@settings(max_examples=12, deadline=None)
@given(seed_=st.integers(0, 10_000), limit=st.sampled_from([0.05, 0.1, 0.3]))
def test_a_returned_plan_holds_no_gpu_that_serves_nothing(seed_: int, limit: float) -> None:
    instance = random_portfolio(seed_, workloads=6)
    plan = solve(instance, time_limit_s=limit, explain=False)
    if not plan.has_plan:
        return
    assert _idle_beyond_unit(instance, plan) == []
    assert not check_solution(instance, plan)
