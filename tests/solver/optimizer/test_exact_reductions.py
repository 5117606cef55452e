"""The MIP's speed-ups (replica bounds, dominated reservations, small-chassis limits) are exact:
on small random instances the optimum is the same with and without them."""

from __future__ import annotations

import dataclasses
import random

import pytest

from solver.domain import AcquisitionMode
from solver.optimizer.driver import solve_mip
from solver.optimizer.instance import Bucket, CountLimit, FleetInstance, InferenceDemand
from solver.optimizer.model import (
    Relaxation,
    _reserved_dominated_by_on_demand,
    _small_server_limits,
)
from solver.optimizer.results import SolveStatus
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH
from tests.solver.optimizer.opt_factories import candidate, option

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


SEEDS = tuple(range(8))


def test_random_instances_exercise_the_reductions() -> None:
    """Guard: the comparison below is only meaningful if the reductions fire on these instances."""
    dominated = [_reserved_dominated_by_on_demand(random_instance(s), Relaxation()) for s in SEEDS]
    limits = [_small_server_limits(random_instance(s)) for s in SEEDS]
    assert sum(len(d) for d in dominated) >= 3  # some reservations dominated…
    assert any(len(d) < 2 for d in dominated)  # …and some not
    # Every 8-GPU chassis costs at most two 4-GPU ones here, so one 4-GPU server at most.
    assert all(lim == {"g1/buy/4gpu": 1, "g2/buy/4gpu": 1} for lim in limits)


@pytest.mark.parametrize("seed", SEEDS)
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
        for s in SEEDS
        if _reserved_dominated_by_on_demand(random_instance(s), Relaxation())
    )
    base = _reserved_dominated_by_on_demand(inst, Relaxation())
    gpu = inst.option(next(iter(base))).gpu
    limited = dataclasses.replace(inst, count_limits=(CountLimit(gpu, min_count=1),))
    assert not any(inst.option(o).gpu == gpu for o in _reserved_dominated_by_on_demand(limited, Relaxation()))
