"""The MIP's formulation on hand-built instances whose optimum is derived by hand in each test,
and the exact reductions (same optimum with and without them on random instances)."""

from __future__ import annotations

import dataclasses
import math
import random
from fractions import Fraction

import pytest
from opt_factories import (
    ALL_DAY,
    candidate,
    flat_demand,
    option,
    proven_plan,
    two_gpu_instance,
)

from solver.domain import AcquisitionMode
from solver.optimizer import Caps, FleetInstance, SolveStatus, check_solution, solve
from solver.optimizer.driver import solve_mip
from solver.optimizer.gpu_costs import cheapest_cost_per_gpu, cost_alone
from solver.optimizer.instance import Bucket, CountLimit, InferenceDemand, TrainingChoice, TrainingDemand
from solver.optimizer.model import Relaxation
from solver.optimizer.reductions import reserved_dominated_by_on_demand, small_server_limits
from solver.optimizer.solution import build_solution
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH


def test_cheapest_mix_covers_demand() -> None:
    # 55 req/s: b×2 (60 req/s) = 500; a×6 = 600; b×1 + a×3 = 550 → b×2 is optimal.
    sol = solve(two_gpu_instance(55.0), time_limit_s=10)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.gpu_counts() == {"b": 2}
    assert sol.cost is not None
    assert sol.cost.total == pytest.approx(2 * 250)
    assert sol.stats.objective == pytest.approx(500, rel=1e-4)
    assert sol.stats.variables > 0 and sol.stats.constraints > 0
    assert check_solution(two_gpu_instance(55.0), sol) == []


def test_redundancy_adds_spare_replica_of_the_largest_used() -> None:
    # N+1 at 55 req/s: b only needs 30·r ≥ 55 + 30 → r = 3 → 750; a only: 10·r ≥ 65 → 7 → 700;
    # any mix must survive losing one b (30): a×k + b×j with 10k + 30j ≥ 85 → ≥ 100·… ≥ 700.
    sol = solve(two_gpu_instance(55.0, redundancy=1), time_limit_s=10)
    assert sol.cost is not None
    assert sol.cost.total == pytest.approx(700)
    assert sol.gpu_counts() == {"a": 7}


def test_binding_rack_cap_changes_the_mix() -> None:
    # 2 U per server of one GPU. 85 req/s: b×3 = 750 (6 U); cap 6 U is fine; cap 4 U: impossible
    # with ≤ 2 servers (max 60 req/s) → infeasible, needs 6 U.
    ok = solve(two_gpu_instance(85.0, Caps(rack_units_cap=6)), time_limit_s=10)
    assert ok.gpu_counts() == {"b": 3}
    bad = solve(two_gpu_instance(85.0, Caps(rack_units_cap=4)), time_limit_s=10)
    assert bad.status is SolveStatus.INFEASIBLE
    assert bad.diagnosis is not None
    assert bad.diagnosis.binding_caps[0].needed == pytest.approx(6)


def test_tp_must_fit_the_scale_up_domain() -> None:
    # A 2-GPU replica on an option whose servers have no GPU-to-GPU link (domain 1) is unusable.
    inst = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=ALL_DAY,
        options=(option("pcie", capex=10, per_server=4, domain=1),),
        inference=(flat_demand("big", 1.0),),
        candidates=(candidate("big", "pcie", 5.0, tp=2),),
    )
    sol = solve(inst, time_limit_s=5)
    assert sol.status is SolveStatus.INFEASIBLE
    assert sol.diagnosis is not None
    assert sol.diagnosis.unservable[0].workload == "big"
    assert "domain" in sol.diagnosis.unservable[0].reasons[0]


def test_tp_groups_are_packed_inside_servers() -> None:
    # TP4 replicas of 20 req/s, 8-GPU fixed boards (domain 8) at 80/GPU, demand 70 req/s → 4
    # replicas = 16 GPUs = 2 boards; the evaluator packs 2 groups per board.
    inst = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=ALL_DAY,
        options=(option("hgx", capex=80, per_server=8, domain=8, full=True),),
        inference=(flat_demand("llm", 70.0),),
        candidates=(candidate("llm", "hgx", 20.0, tp=4),),
    )
    sol = solve(inst, time_limit_s=5)
    assert sol.gpu_counts() == {"hgx": 16}
    assert sol.options[0].servers == 2
    assert sol.cost is not None and sol.cost.total == pytest.approx(16 * 80)


def test_day_night_profile_owned_base_and_on_demand_peak() -> None:
    # 12 night hours need 1 GPU (10 req/s), 12 day hours need 4 (40 req/s).
    # Buy: 1000 per GPU over the horizon; on-demand: 0.20 per GPU-hour. Buying k GPUs costs
    # 1000·k + 0.20·365·12·(4 − k) for the day hours (k ≥ 1 covers the night): k = 1 is cheapest.
    # Horizon 12 months × 365/12 days: one GPU-hour per hour of a 12-h bucket = 12·365 h/yr.
    days = 365.0
    inst = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=(Bucket(0, tuple(range(12))), Bucket(1, tuple(range(12, 24)))),
        options=(
            option("g", capex=1000),
            option("g", mode=AcquisitionMode.ON_DEMAND, busy_hourly=0.20),
        ),
        inference=(InferenceDemand(name="svc", rate_req_s=(10.0, 40.0)),),
        candidates=(candidate("svc", "g", 10.0),),
    )
    buy_all = 4 * 1000
    rent_all = 0.20 * days * (12 * 1 + 12 * 4)
    mixed = 1000 + 0.20 * days * 12 * 3
    assert mixed < 2000 + 0.20 * days * 12 * 2
    assert mixed < min(buy_all, rent_all)
    sol = solve(inst, time_limit_s=5)
    assert sol.cost is not None
    assert sol.cost.total == pytest.approx(mixed, rel=1e-6)
    held = {o.mode: o for o in sol.options}
    assert held[AcquisitionMode.BUY].gpus == 1
    assert held[AcquisitionMode.ON_DEMAND].on_demand_gpus == (0, 3)


def test_training_uses_idle_hours_of_serving_gpus() -> None:
    # Serving needs 1 GPU in hours 0–11 only; training needs 300 GPU-hours a month and 1 GPU.
    # Idle time of that GPU: 12 h × 365/12 days ≈ 365 GPU-hours ≥ 300 → no extra GPU.
    inst = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=(Bucket(0, tuple(range(12))), Bucket(1, tuple(range(12, 24)))),
        options=(option("g", capex=1000),),
        inference=(InferenceDemand(name="svc", rate_req_s=(10.0, 0.0)),),
        candidates=(candidate("svc", "g", 10.0),),
        training=(TrainingDemand("ft", (TrainingChoice("g", gpu_hours_per_month=300.0, min_gpus=1),)),),
    )
    sol = solve(inst, time_limit_s=5)
    assert sol.gpu_counts() == {"g": 1}
    # 400 GPU-hours no longer fit in 365 idle hours: a second GPU is needed.
    inst2 = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=inst.buckets,
        options=inst.options,
        inference=inst.inference,
        candidates=inst.candidates,
        training=(TrainingDemand("ft", (TrainingChoice("g", gpu_hours_per_month=400.0, min_gpus=1),)),),
    )
    assert solve(inst2, time_limit_s=5).gpu_counts() == {"g": 2}


def test_tp_group_never_straddles_two_options() -> None:
    # One owned GPU (free: sunk); a TP2 replica cannot use it plus one rented GPU.
    # Options: owned (0), rent 0.005 per GPU-hour = 0.005 × 8760 = 43.8 per GPU-year.
    # Straddling would cost 43.8 (owned + 1 rented); valid plans: rent 2 (87.6), the owned GPU idle.
    rent_year = 0.005 * 365 * 24
    inst = FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=ALL_DAY,
        options=(
            option("g", per_server=4, domain=2, owned=True),
            option("g", mode=AcquisitionMode.ON_DEMAND, busy_hourly=0.005, per_server=2, domain=2),
        ),
        inference=(flat_demand("big", 5.0),),
        candidates=(candidate("big", "g", 10.0, tp=2),),
        owned_counts={"g": 1},
    )
    sol = solve(inst, time_limit_s=5)
    assert sol.cost is not None
    assert sol.cost.total == pytest.approx(2 * rent_year)
    assert check_solution(inst, sol) == []


@pytest.mark.parametrize("price_scale", [0.01, 1e10])
def test_price_scale_does_not_change_the_plan(price_scale: float) -> None:
    base = two_gpu_instance(55.0)
    scaled = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", capex=100 * price_scale), option("b", capex=250 * price_scale)),
        inference=base.inference,
        candidates=base.candidates,
    )
    sol = solve(scaled, time_limit_s=10)
    assert sol.gpu_counts() == {"b": 2}
    assert sol.cost is not None
    assert sol.cost.total == pytest.approx(500 * price_scale)


@pytest.mark.parametrize(("rate", "expected"), [(1e-8, {"a": 1}), (3e6, {"b": 100_000})])
def test_extreme_demand_scales(rate: float, expected: dict[str, int]) -> None:
    # 1e-8 req/s (≈ 1 token a day): one replica of the cheapest GPU (a, 100).
    # 3e6 req/s: b serves 30 req/s for 250 (8.33 per req/s) vs a 10 for 100 (10 per req/s):
    # exactly 100,000 b.
    sol = solve(two_gpu_instance(rate), time_limit_s=10)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.gpu_counts() == expected


def _physical_gpus_for(halves: int, sevenths: int) -> int:
    """GPUs of NVIDIA's 7-compute / 8-memory-slice layout that hold ``halves`` 3g instances
    (3 compute + 4 memory slices) and ``sevenths`` 1g instances (1 + 1): pairs of halves, an odd
    half with up to three 1g beside it, the other 1g seven to a GPU."""
    gpus, beside = halves // 2, 0
    if halves % 2:
        gpus += 1
        beside = min(3, sevenths)
        assert 3 + beside <= 7 and 4 + beside <= 8  # the shared GPU's compute and memory slices
    return gpus + -(-(sevenths - beside) // 7)


@pytest.mark.parametrize("halves", range(0, 9))
def test_mig_instances_packed_by_fractional_sum_fit_as_many_physical_gpus(halves: int) -> None:
    """Constraint 2 counts a MIG instance of 1/m as 1/m of a GPU; on the 7-instance layout that is
    exact: whatever fits N GPUs by that count fits N real GPUs."""
    for sevenths in range(0, 60):
        fractional = halves * Fraction(1, 2) + sevenths * Fraction(1, 7)
        assert _physical_gpus_for(halves, sevenths) <= math.ceil(fractional)


def test_cost_alone_counts_whole_replicas_in_every_bucket_at_the_cheapest_option() -> None:
    # Buckets of 8, 10 and 6 hours; 5, 25 and 12 req/s; 10 req/s per TP-2 replica plus 1 spare:
    # 2, 4 and 3 replicas → (8·2 + 10·4 + 6·3)/24 replica-days × 2 GPUs × 100 (buying beats the
    # on-demand rate: 0.01 per hour for 36 months is 262.8 per GPU).
    buckets = (
        Bucket(index=0, hours=tuple(range(8))),
        Bucket(index=1, hours=tuple(range(8, 18))),
        Bucket(index=2, hours=tuple(range(18, 24))),
    )
    inst = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=buckets,
        options=(
            option("a", capex=100),
            option("a", mode=AcquisitionMode.ON_DEMAND, busy_hourly=0.01),
        ),
        inference=(InferenceDemand(name="chat", rate_req_s=(5.0, 25.0, 12.0), redundancy=1),),
        candidates=(candidate("chat", "a", 10.0, tp=2),),
    )
    per_gpu = cheapest_cost_per_gpu(inst)
    assert per_gpu == {"a": pytest.approx(100.0)}
    cost = cost_alone(inst.candidates[0], inst.inference[0], inst.buckets, per_gpu)
    assert cost == pytest.approx(74 / 24 * 2 * 100)


def test_cost_alone_sees_the_idle_part_of_a_large_replica() -> None:
    # 9.5 req/s: one TP-8 replica (100 req/s, 12.5 per GPU) beats TP-1 replicas (10 req/s per GPU)
    # per GPU, but serving this workload alone it takes 8 GPUs against 1.
    per_gpu = {"a": 100.0}
    demand = flat_demand("chat", 9.5)
    large = candidate("chat", "a", 100.0, tp=8)
    small = candidate("chat", "a", 10.0, tp=1)
    assert large.capacity_req_s / large.gpus_per_replica > small.capacity_req_s / small.gpus_per_replica
    assert cost_alone(small, demand, ALL_DAY, per_gpu) == pytest.approx(100.0)
    assert cost_alone(large, demand, ALL_DAY, per_gpu) == pytest.approx(800.0)


TWO_BUCKETS = (Bucket(index=0, hours=tuple(range(8))), Bucket(index=1, hours=tuple(range(8, 24))))


def _gpu_options(rng: random.Random, gpu: str) -> list[AcquisitionOption]:
    """A 4-GPU and an 8-GPU chassis (the 8-GPU one no dearer per slot), a reservation and an
    on-demand rental whose round-the-clock price is drawn either side of the reservation's."""
    capex = rng.uniform(1_000, 30_000)
    chassis = rng.uniform(5_000, 40_000)
    colo = rng.uniform(300, 1_500)
    small = dataclasses.replace(
        option(gpu, capex=capex, per_server=4, domain=rng.choice((2, 4))),
        id=f"{gpu}/buy/4gpu",
        capex_per_server=chassis,
        fixed_monthly_per_server=colo,
        rack_units_per_server=2,
    )
    big = dataclasses.replace(
        option(gpu, capex=capex, per_server=8, domain=8),
        id=f"{gpu}/buy/8gpu",
        capex_per_server=2 * chassis * rng.uniform(0.9, 1.0),
        fixed_monthly_per_server=2 * colo * rng.uniform(0.9, 1.0),
        rack_units_per_server=4,
    )
    reserved_monthly = rng.uniform(500, 3_000)
    reserved = option(
        gpu, mode=AcquisitionMode.RESERVED, per_server=8, domain=8, fixed_monthly=reserved_monthly
    )
    od_hourly = reserved_monthly / (24 * DAYS_PER_MONTH) * rng.uniform(0.7, 1.3)
    on_demand = option(gpu, mode=AcquisitionMode.ON_DEMAND, per_server=8, domain=8, busy_hourly=od_hourly)
    return [small, big, reserved, on_demand]


def random_instance(seed: int) -> FleetInstance:
    rng = random.Random(seed)
    gpus = ("g1", "g2")
    options = [o for g in gpus for o in _gpu_options(rng, g)]
    demands = []
    cands = []
    for i in range(3):
        name = f"w{i}"
        peak = rng.uniform(0.5, 40.0)
        demands.append(
            InferenceDemand(
                name=name,
                rate_req_s=(peak * rng.uniform(0.1, 1.0), peak),
                redundancy=rng.choice((0, 0, 1)),
            )
        )
        for g in gpus:
            cands.append(candidate(name, g, rng.uniform(1.0, 10.0)))
            cands.append(candidate(name, g, rng.uniform(2.0, 25.0), tp=2))
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=TWO_BUCKETS,
        options=tuple(options),
        inference=tuple(demands),
        candidates=tuple(cands),
    )


REDUCTION_SEEDS = tuple(range(8))


def test_random_instances_exercise_the_reductions() -> None:
    """Guard: the comparison below is only meaningful if the reductions fire on these instances."""
    dominated = [reserved_dominated_by_on_demand(random_instance(s), Relaxation()) for s in REDUCTION_SEEDS]
    limits = [small_server_limits(random_instance(s)) for s in REDUCTION_SEEDS]
    assert sum(len(d) for d in dominated) >= 3  # some reservations dominated…
    assert any(len(d) < 2 for d in dominated)  # …and some not
    # Every 8-GPU chassis costs at most two 4-GPU ones here, so one 4-GPU server at most.
    assert all(lim == {"g1/buy/4gpu": 1, "g2/buy/4gpu": 1} for lim in limits)


@pytest.mark.parametrize("seed", REDUCTION_SEEDS)
def test_same_optimum_with_and_without_reductions(seed: int) -> None:
    inst = random_instance(seed)
    fast = solve_mip(inst, time_limit_s=20, relative_gap=1e-9)
    plain = solve_mip(inst, time_limit_s=20, relative_gap=1e-9, exact_reductions=False)
    assert fast.stats.status is SolveStatus.OPTIMAL
    assert plain.stats.status is SolveStatus.OPTIMAL
    assert fast.stats.objective is not None and plain.stats.objective is not None
    assert fast.stats.objective == pytest.approx(plain.stats.objective, rel=1e-6)


def test_minimum_count_keeps_the_reservation() -> None:
    """A minimum count is met by held GPUs only, so a dominated reservation must stay usable."""
    inst = next(
        random_instance(s)
        for s in REDUCTION_SEEDS
        if reserved_dominated_by_on_demand(random_instance(s), Relaxation())
    )
    base = reserved_dominated_by_on_demand(inst, Relaxation())
    gpu = inst.option(next(iter(base))).gpu
    limited = dataclasses.replace(inst, count_limits=(CountLimit(gpu, min_count=1),))
    assert not any(inst.option(o).gpu == gpu for o in reserved_dominated_by_on_demand(limited, Relaxation()))


PLAN_SEEDS = (0, 1, 2)


@pytest.mark.parametrize("seed", PLAN_SEEDS)
def test_fixing_every_planned_replica_reproduces_the_plan_cost(seed: int) -> None:
    inst, sol = proven_plan(seed, 6)
    assert sol.cost is not None
    fixed = tuple((u.candidate.id, u.replicas) for a in sol.assignments for u in a.uses)
    used = {cid for cid, _ in fixed}
    only_used = dataclasses.replace(inst, candidates=tuple(c for c in inst.candidates if c.id in used))
    again = solve_mip(only_used, time_limit_s=20, relative_gap=1e-9, relax=Relaxation(fixed_replicas=fixed))
    rebuilt = build_solution(only_used, again)
    assert rebuilt.cost is not None
    assert rebuilt.cost.total == pytest.approx(sol.cost.total, rel=1e-6)
