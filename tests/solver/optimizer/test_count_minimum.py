"""Property (issue 28 item 7): ``count_bounds.min_count`` is honoured in every mode. A minimum
counts GPUs of every allowed mode at the plan's busiest hour (held + rented on demand, as the
plan's lines count them): the plan meets it, passes the independent check, and a minimum the
optimum without it already meets changes nothing."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opt_factories import THREE_BUCKETS, candidate, option

from solver.domain import AcquisitionMode
from solver.optimizer import SolveStatus, check_solution, solve
from solver.optimizer.instance import CountLimit, FleetInstance, InferenceDemand

MODES = {
    "buy": (AcquisitionMode.BUY,),
    "on_demand": (AcquisitionMode.ON_DEMAND,),
    "both": (AcquisitionMode.BUY, AcquisitionMode.ON_DEMAND),
}


def _instance(modes: tuple[AcquisitionMode, ...], rates: tuple[float, float, float]) -> FleetInstance:
    # GPU "a": 1,000 to buy or 0.2/h rented, 10 req/s a replica; GPU "b": 2,200 or 0.5/h, 25 req/s.
    options = []
    for gpu, capex, hourly in (("a", 1_000.0, 0.2), ("b", 2_200.0, 0.5)):
        if AcquisitionMode.BUY in modes:
            options.append(option(gpu, capex=capex))
        if AcquisitionMode.ON_DEMAND in modes:
            options.append(option(gpu, mode=AcquisitionMode.ON_DEMAND, busy_hourly=hourly))
    return FleetInstance(
        currency="USD",
        horizon_months=12,
        buckets=THREE_BUCKETS,
        options=tuple(options),
        inference=(InferenceDemand(name="w", rate_req_s=rates),),
        candidates=(candidate("w", "a", 10.0), candidate("w", "b", 25.0)),
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    modes=st.sampled_from(sorted(MODES)),
    rates=st.tuples(*(st.one_of(st.just(0.0), st.floats(0.01, 60.0)) for _ in range(3))),
    gpu=st.sampled_from(["a", "b"]),
    minimum=st.integers(1, 8),
)
def test_min_count_is_honoured_in_every_mode(
    modes: str, rates: tuple[float, float, float], gpu: str, minimum: int
) -> None:
    free = _instance(MODES[modes], rates)
    bounded = dataclasses.replace(free, count_limits=(CountLimit(gpu, min_count=minimum),))
    plan = solve(bounded, time_limit_s=10, relative_gap=1e-9, explain=False)
    assert plan.status is SolveStatus.OPTIMAL
    assert plan.gpu_counts().get(gpu, 0) >= minimum
    assert check_solution(bounded, plan) == []
    reference = solve(free, time_limit_s=10, relative_gap=1e-9, explain=False)
    assert reference.cost is not None and plan.cost is not None
    assert plan.cost.total >= reference.cost.total * (1 - 1e-9)
    if reference.gpu_counts().get(gpu, 0) >= minimum:
        assert plan.cost.total == pytest.approx(reference.cost.total, rel=1e-9, abs=1e-9)
