"""Batch work with a completion window (``solver.optimizer.batch_window``, model constraint 1').

Expected values are worked out by hand in each test; the property compares two solves of the
same instance, one with the window and one served every hour."""

from __future__ import annotations

import dataclasses
import itertools
import random
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.linear_solver import pywraplp

from pricebook import load_default
from solver.domain import AcquisitionMode, Constraints, PlanRequest, Sla, SolverOptions
from solver.optimizer.api import optimize, solve
from solver.optimizer.batch_window import add_window_demand, window_misses
from solver.optimizer.candidates import build_instance
from solver.optimizer.instance import Bucket, FleetInstance, InferenceDemand
from solver.optimizer.results import SolveStatus
from solver.optimizer.risk import demand_probabilities
from tests.solver.optimizer.opt_factories import THREE_BUCKETS, candidate, chat_workload, option

FLAT = [10.0] * 24
PROPERTY = settings(
    max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def test_capacity_equal_to_arrivals_every_hour_meets_any_window() -> None:
    for deadline in (1, 2, 24, 168):
        assert window_misses(deadline, FLAT, FLAT) == ""


def test_night_only_capacity_meets_a_day_but_not_a_short_window() -> None:
    """Flat arrivals of 10/h-unit, all served in hours 0-5 at 40: a request arriving as hour 6
    starts waits until hour 24, 18 hours (the check counts whole hours: 19 passes, 17 fails)."""
    night = [40.0] * 6 + [0.0] * 18
    assert window_misses(24, night, FLAT) == ""
    assert window_misses(19, night, FLAT) == ""
    assert "not done within 17 h" in window_misses(17, night, FLAT)
    assert "backlog" in window_misses(1, night, FLAT)


def test_less_capacity_than_the_daily_volume_is_a_miss() -> None:
    assert "serves 50.0% of the daily volume" in window_misses(24, [5.0] * 24, FLAT)


def _day_and_batch(deadline: int | None, *, batch: float = 10.0, day: float = 40.0) -> FleetInstance:
    """GPU "g" bought at 1,000 each (10 req/s a replica, either workload); chat needs ``day`` req/s
    from 8:00 to 18:00 and nothing otherwise; batch arrives at ``batch`` req/s all day."""
    return FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=THREE_BUCKETS,
        options=(option("g", capex=1000.0), option("g", mode=AcquisitionMode.ON_DEMAND, busy_hourly=2.0)),
        inference=(
            InferenceDemand(name="chat", rate_req_s=(0.0, day, 0.0)),
            InferenceDemand(
                name="batch",
                rate_req_s=(batch, batch, batch),
                hourly_rate_req_s=(batch,) * 24,
                deadline_hours=deadline,
            ),
        ),
        candidates=(candidate("chat", "g", 10.0), candidate("batch", "g", 10.0)),
    )


def _cost(instance: FleetInstance) -> float:
    plan = solve(instance, time_limit_s=20, relative_gap=1e-9, explain=False)
    assert plan.status is SolveStatus.OPTIMAL and plan.cost is not None
    return plan.cost.total


def test_batch_with_a_day_window_fills_the_night_instead_of_a_fifth_gpu() -> None:
    """Every hour: 40 + 10 req/s by day = 5 GPUs (5,000). Within the day: 4 GPUs carry chat by
    day and the day's 240 batch request-hours in the 14 other hours (4 × 10 × 14 = 560 ≥ 240);
    cheaper still than renting the peak (10 h × 2 × 365 days > 1,000)."""
    assert _cost(_day_and_batch(None)) == pytest.approx(5000.0)
    assert _cost(_day_and_batch(24)) == pytest.approx(4000.0)
    assert _cost(_day_and_batch(1)) == pytest.approx(5000.0)  # within the hour: as it arrives


@PROPERTY
@given(
    st.integers(1, 48),
    st.floats(0.5, 60.0),
    st.floats(1.0, 80.0),
    st.floats(0.2, 8.0),
)
def test_a_deferrable_batch_workload_never_makes_a_plan_dearer(
    deadline: int, batch: float, day: float, busy_hourly: float
) -> None:
    base = _day_and_batch(None, batch=batch, day=day)
    base = dataclasses.replace(
        base,
        options=(
            option("g", capex=1000.0),
            option("g", mode=AcquisitionMode.ON_DEMAND, busy_hourly=busy_hourly),
        ),
    )
    every_hour = _cost(base)
    windowed = dataclasses.replace(
        base, inference=(base.inference[0], dataclasses.replace(base.inference[1], deadline_hours=deadline))
    )
    assert _cost(windowed) <= every_hour * (1 + 1e-7)


def test_a_longer_window_is_never_dearer() -> None:
    rng = random.Random(28)
    for _ in range(4):
        batch, day = rng.uniform(1, 40), rng.uniform(1, 60)
        costs = [_cost(_day_and_batch(d, batch=batch, day=day)) for d in (1, 4, 12, 24, 72)]
        assert all(b <= a * (1 + 1e-7) for a, b in itertools.pairwise(costs)), costs


def test_the_chance_of_meeting_a_window_comes_from_the_window() -> None:
    """Served by night on GPUs busy with chat by day, the batch work's demand is met (ratio below
    1 with an exact band), though some buckets give it no capacity at all."""
    instance = dataclasses.replace(
        _day_and_batch(24, batch=5.0),
        candidates=tuple(
            dataclasses.replace(c, band_low=0.8, band_high=1.2) for c in _day_and_batch(24).candidates
        ),
    )
    plan = solve(instance, time_limit_s=20, relative_gap=1e-9, explain=False)
    (batch,) = [a for a in plan.assignments if a.workload == "batch"]
    assert any(batch.capacity_req_s[b] == 0 for b in range(3))
    assert demand_probabilities(instance, plan)["batch"] >= 0.5


def _request(deadline: int | None) -> PlanRequest:
    """Daytime chat and a nightly-able batch job on the same model, L40S or H100 bought or rented."""
    day = tuple(0.1 if h < 8 or h >= 20 else 1.0 for h in range(24))
    chat = chat_workload(20.0).model_copy(update={"hourly_profile": day})
    batch = chat_workload(1.0).model_copy(
        update={
            "name": "batch",
            "peak_request_rate_per_s": None,
            "daily_tokens": 3 * 10**10,
            "interactive": False,
            "sla": Sla(),
            "batch_deadline_hours": deadline,
        }
    )
    return PlanRequest(
        inference=(chat, batch),
        constraints=Constraints(
            currency="USD",
            allowed_gpus=("l40s", "h100-sxm"),
            allowed_modes=(AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
        ),
        options=SolverOptions(
            time_limit_s=30, relative_gap=1e-6, compute_baselines=False, compute_sensitivity=False
        ),
    )


def test_a_planned_request_with_a_window_is_never_dearer() -> None:
    book = load_default()
    windowed = build_instance(_request(24), book)
    assert [w.deadline_hours for w in windowed.inference] == [None, 24]
    every_hour = optimize(_request(None), book, time_limit_s=30)
    within_day = optimize(_request(24), book, time_limit_s=30)
    assert every_hour.cost is not None and within_day.cost is not None
    assert within_day.status is SolveStatus.OPTIMAL
    assert within_day.cost.total <= every_hour.cost.total * (1 + 1e-6)


def _rows_feasible(deadline: int, capacity: list[float], arriving: list[float]) -> bool:
    """Whether constraint 1' (the MIP's rows, ``add_window_demand``) admits ``capacity``."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    hours = tuple(Bucket(index=h, hours=(h,)) for h in range(24))
    demand = InferenceDemand(
        name="batch", rate_req_s=tuple(arriving), hourly_rate_req_s=tuple(arriving), deadline_hours=deadline
    )
    model = SimpleNamespace(
        solver=solver,
        inst=SimpleNamespace(buckets=hours),
        relax=SimpleNamespace(elastic_demand=False),
        alpha=None,
        r={"c": list(capacity)},
        short={},
    )
    add_window_demand(model, demand, 1.0, [dataclasses.replace(candidate("batch", "g", 1.0), id="c")], "b")
    return bool(solver.Solve() == pywraplp.Solver.OPTIMAL)


def test_the_rows_and_the_simulation_agree() -> None:
    """Random hourly capacities and arrivals: what the queue simulation accepts the MIP's rows
    admit, and what the rows admit with 1 % more capacity the simulation accepts."""
    rng = random.Random(28)
    for _ in range(150):
        deadline = rng.choice((1, 2, 3, 6, 12, 18, 24, 36))
        arriving = [rng.uniform(0.5, 2.0) for _ in range(24)]
        on = set(rng.sample(range(24), rng.randint(1, 24)))
        daily = sum(arriving) * rng.uniform(0.9, 1.3)
        capacity = [daily / len(on) if h in on else 0.0 for h in range(24)]
        if window_misses(deadline, capacity, arriving) == "":
            assert _rows_feasible(deadline, capacity, arriving)
        if _rows_feasible(deadline, capacity, arriving):
            assert window_misses(deadline, [c * 1.01 for c in capacity], arriving) == ""
