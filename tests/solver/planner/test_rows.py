"""The plan's rows (``solver.planner.rows``): deployment groups and workload rows agree with the
optimizer's solution, checked by hand on a small pool and as properties over random instances with
shared pools (hypothesis, fixed seeds), every expected figure derived from the instance and the raw
solution, not from the rows code."""

from __future__ import annotations

import dataclasses
import math
import random
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pricebook.schema import Money
from solver.domain import AcquisitionMode, Precision
from solver.optimizer.api import solve
from solver.optimizer.instance import Bucket, Candidate, FleetInstance, InferenceDemand
from solver.optimizer.results import FleetSolution, SolveStatus
from solver.planner import PlanFleetLine, PlanResult
from solver.planner.rows import deployment_lines, mapping_problems, with_workloads, workload_lines
from tests.solver.optimizer.opt_factories import ALL_DAY, THREE_BUCKETS, option

TOKENS = 100
"""Output tokens per request of every hand-built workload (max_output_tok_s = capacity × TOKENS)."""


def _candidate(
    workload: str, gpu: str, capacity: float, *, tp: int = 1, pool: str = "", mig: int = 0
) -> Candidate:
    kind = f"mig{mig}" if mig else f"tp{tp}"
    return Candidate(
        id=f"{workload}/{gpu}/{kind}" + ("/pool" if pool else ""),
        workload=workload,
        gpu=gpu,
        tp=tp,
        precision=Precision.FP8,
        kv_precision=Precision.FP8,
        mig_slice=mig,
        capacity_req_s=capacity,
        max_output_tok_s=capacity * TOKENS,
        pool=pool,
    )


def _solved(instance: FleetInstance) -> FleetSolution:
    solution = solve(instance, time_limit_s=30, relative_gap=1e-9, explain=False)
    assert solution.status is SolveStatus.OPTIMAL
    return solution


def test_a_shared_pool_is_one_group_with_each_workloads_share() -> None:
    # A needs 3 req/s, B 1 req/s; 2 req/s per replica alone or pooled. Own replicas: 2 + 1 = 3 GPUs;
    # pooled: 3/2 + 1/2 = 2 replicas exactly, so the optimum is one pool of 2 replicas carrying
    # 1.5 (A) and 0.5 (B) replica-equivalents.
    instance = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", capex=100),),
        inference=(InferenceDemand("A", (3.0,)), InferenceDemand("B", (1.0,))),
        candidates=(
            _candidate("A", "a", 2.0),
            _candidate("B", "a", 2.0),
            _candidate("A", "a", 2.0, pool="p"),
            _candidate("B", "a", 2.0, pool="p"),
        ),
    )
    solution = _solved(instance)
    groups = deployment_lines(solution, instance)
    assert [(g.id, g.shared, g.replicas_peak, g.replicas_off_peak) for g in groups] == [("p", True, 2, 2)]
    (pool,) = groups
    assert {s.workload: round(s.share, 6) for s in pool.shares} == {"A": 0.75, "B": 0.25}
    assert pool.utilization == pytest.approx(1.0)
    assert pool.output_tok_s == pytest.approx(4.0 * TOKENS)
    rows = {w.workload: w for w in workload_lines(solution, groups)}
    assert rows["A"].replicas == pytest.approx(1.5)
    assert rows["B"].replicas == pytest.approx(0.5)
    assert rows["A"].output_tok_s == pytest.approx(3.0 * TOKENS)
    assert [u.group_id for u in rows["B"].uses] == ["p"]


def _fleet_line(gpu: str, gpus: int, *, owned: bool = False) -> PlanFleetLine:
    zero = Money(amount=Decimal(0), currency="USD")
    return PlanFleetLine(
        option_id=f"{gpu}/buy",
        gpu=gpu,
        mode=AcquisitionMode.BUY,
        owned=owned,
        server_id=None,
        offer_id=f"{gpu}-buy",
        provider="",
        price_label=None,
        gpus=gpus,
        servers=1,
        on_demand_gpus_by_hour=(),
        price_per_gpu=zero,
        price_per_gpu_hour=None,
        horizon_cost=zero,
        power_kw=0.0,
        rack_units=0.0,
        busy_gpu_hours_per_month=0.0,
        utilization=0.0,
    )


def _one_workload_on_a() -> tuple[FleetInstance, FleetSolution]:
    instance = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", capex=100), option("b", capex=300)),
        inference=(InferenceDemand("A", (3.0,)),),
        candidates=(_candidate("A", "a", 2.0), _candidate("A", "b", 2.0)),
    )
    return instance, _solved(instance)


def test_every_gpu_type_of_the_fleet_names_the_workloads_it_serves() -> None:
    instance, solution = _one_workload_on_a()
    groups = deployment_lines(solution, instance)
    fleet = with_workloads((_fleet_line("a", 2),), groups, solution)
    assert fleet[0].workloads == ("A",)
    assert mapping_problems(fleet, groups, solution) == ()


def test_a_gpu_serving_nothing_or_too_few_gpus_is_a_problem_unless_owned() -> None:
    instance, solution = _one_workload_on_a()
    groups = deployment_lines(solution, instance)
    idle = with_workloads((_fleet_line("a", 2), _fleet_line("b", 1)), groups, solution)
    assert mapping_problems(idle, groups, solution) == ("b ×1 in the fleet serves no workload",)
    owned = with_workloads((_fleet_line("a", 2), _fleet_line("b", 1, owned=True)), groups, solution)
    assert mapping_problems(owned, groups, solution) == ()
    short = with_workloads((_fleet_line("a", 1),), groups, solution)
    assert mapping_problems(short, groups, solution) == (
        "a: deployment groups occupy 2 GPUs at hour 0, the fleet has 1",
    )


def _random_instance(seed: int) -> FleetInstance:
    """Two or three workloads on two GPU types over three buckets, each with its own candidates
    (TP1, TP2, a MIG 1/4 slice) and a share of one pool per GPU type."""
    rng = random.Random(seed)
    names = [f"w{i}" for i in range(rng.randint(2, 3))]
    demands = tuple(
        InferenceDemand(name, tuple(rng.uniform(0.2, 9.0) for _ in THREE_BUCKETS)) for name in names
    )
    candidates = []
    for gpu in ("g1", "g2"):
        for name in names:
            candidates.append(_candidate(name, gpu, rng.uniform(0.5, 3.0)))
            candidates.append(_candidate(name, gpu, rng.uniform(1.0, 7.0), tp=2))
            candidates.append(_candidate(name, gpu, rng.uniform(0.1, 0.6), mig=4))
            candidates.append(_candidate(name, gpu, rng.uniform(0.5, 3.0), pool=f"pool-{gpu}"))
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=THREE_BUCKETS,
        options=(
            option("g1", capex=rng.uniform(50, 150), per_server=4, domain=4),
            option("g2", capex=rng.uniform(50, 150), per_server=4, domain=4),
            option("g2", mode=AcquisitionMode.ON_DEMAND, busy_hourly=rng.uniform(0.005, 0.05), domain=4),
        ),
        inference=demands,
        candidates=tuple(candidates),
    )


def _bucket_of(hour: int, buckets: tuple[Bucket, ...]) -> int:
    return next(b.index for b in buckets if hour in b.hours)


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_rows_agree_with_the_solution(seed: int) -> None:
    instance = _random_instance(seed)
    solution = _solved(instance)
    groups = deployment_lines(solution, instance)
    rows = workload_lines(solution, groups)
    buckets = solution.buckets
    capacity = {c.id: c.capacity_req_s for c in instance.candidates}
    for g in groups:
        assert sum(s.share for s in g.shares) == pytest.approx(1.0)
        assert g.replicas_peak > 0
        for h in range(24):
            load = sum(s.replicas_by_hour[h] for s in g.shares)
            assert load <= g.replicas_by_hour[h] + 1e-6
    pools = {p.id: p for p in solution.pools}
    for g in groups:
        if g.id in pools:
            assert g.replicas_by_hour == tuple(
                pools[g.id].replicas[_bucket_of(h, buckets)] for h in range(24)
            )
    # No group occupies more GPUs than the fleet has in any hour, and the groups cover the fleet:
    # at the busiest hour every GPU held or rented is occupied by a group (no training here).
    for gpu in ("g1", "g2"):
        held, used = [], []
        for h in range(24):
            b = _bucket_of(h, buckets)
            options = [o for o in solution.options if o.gpu == gpu]
            held.append(sum(o.gpus + (o.on_demand_gpus[b] if o.on_demand_gpus else 0) for o in options))
            used.append(sum(g.replicas_by_hour[h] * g.gpus_per_replica for g in groups if g.gpu == gpu))
            assert used[h] <= held[h] + 1e-9
        assert max(held) == math.ceil(max(used) - 1e-6)
    for a, row in zip(solution.assignments, rows, strict=True):
        assert row.workload == a.workload
        peak = a.peak_bucket
        # Replica-equivalents from the raw solution: own replicas plus pool shares at peak.
        raw = sum(u.replicas[peak] + (u.shared_load[peak] if u.shared_load else 0.0) for u in a.uses)
        assert row.replicas == pytest.approx(raw)
        assert row.replicas > 0 and row.demand_req_s > 0
        raw_capacity = sum(
            (u.replicas[peak] + (u.shared_load[peak] if u.shared_load else 0.0)) * capacity[u.candidate.id]
            for u in a.uses
        )
        assert row.output_tok_s == pytest.approx(raw_capacity * TOKENS)
        assert row.output_tok_s >= row.demand_req_s * TOKENS * (1 - 1e-6)
        hour = row.peak_hour
        in_groups = sum(
            s.replicas_by_hour[hour] for g in groups for s in g.shares if s.workload == a.workload
        )
        assert in_groups == pytest.approx(raw)


def test_the_planners_rows_serve_what_the_request_asks(full_plan: PlanResult) -> None:
    """The real planner on two workloads: each row's tok/s is its capacity × output tokens, its
    capacity covers the request's rate, and every fleet line names the workloads on its GPUs."""
    output_tokens = {"chat": 500, "batch": 1024}
    tokens_per_request = {"chat": 2500, "batch": 8024}
    daily = {"chat": 2e9, "batch": 5e9}
    assert [w.workload for w in full_plan.workload_lines] == ["chat", "batch"]
    for w in full_plan.workload_lines:
        rate = daily[w.workload] / tokens_per_request[w.workload] / 86_400
        assert w.demand_req_s == pytest.approx(rate, rel=1e-9)
        assert w.capacity_req_s >= rate * (1 - 1e-9)
        assert w.output_tok_s == pytest.approx(w.capacity_req_s * output_tokens[w.workload], rel=1e-6)
        assert w.replicas > 0
    used = {g.gpu for g in full_plan.deployment_lines}
    assert {f.gpu for f in full_plan.fleet} == used
    assert all(f.workloads for f in full_plan.fleet)
    assert not [w for w in full_plan.warnings if "serves no workload" in w or "groups occupy" in w]


def test_rows_of_a_plan_without_assignments_are_empty() -> None:
    instance, solution = _one_workload_on_a()
    empty = dataclasses.replace(solution, assignments=(), pools=())
    assert deployment_lines(empty, instance) == ()
    assert workload_lines(empty, ()) == ()
