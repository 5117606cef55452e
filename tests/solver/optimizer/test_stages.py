"""The multi-period MIP (``solver.optimizer.stages``): one period is today's model; staging never
costs more than buying the fleet at once; hand-priced tranches."""

from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opt_factories import ALL_DAY, candidate, flat_demand, option
from test_model import random_instance

from solver.errors import SolveCancelled
from solver.optimizer import Caps, FleetInstance, SolveStatus, stages
from solver.optimizer.cancel import CancelToken
from solver.optimizer.driver import solve_mip
from solver.optimizer.stage_eval import check_staged, price_staged, staged_solutions
from solver.optimizer.stage_instance import period_instance
from solver.optimizer.stages import StagedInstance, solve_staged
from solver.pricing.options import AcquisitionOption


def _with_residual_and_budget(inst: FleetInstance, residual: float, budget: float | None) -> FleetInstance:
    options = tuple(
        dataclasses.replace(o, residual_fraction=residual) if o.mode.value == "buy" else o
        for o in inst.options
    )
    return dataclasses.replace(inst, options=options, caps=Caps(capex_budget=budget))


@pytest.mark.parametrize("seed", range(4))
def test_one_period_is_the_single_period_model(seed: int) -> None:
    inst = _with_residual_and_budget(random_instance(seed), 0.3 if seed % 2 else 0.0, None)
    single = solve_mip(inst, time_limit_s=20, relative_gap=1e-9)
    staged = solve_staged(StagedInstance(periods=(inst,)), time_limit_s=20, relative_gap=1e-9)
    assert single.stats.status is SolveStatus.OPTIMAL
    assert staged.stats.status is SolveStatus.OPTIMAL
    assert single.stats.objective is not None and staged.stats.objective is not None
    assert staged.stats.objective == pytest.approx(single.stats.objective, rel=1e-7)
    assert staged.values is not None and single.values is not None
    assert staged.values[0].n == single.values.n


def test_one_period_keeps_a_binding_capex_budget() -> None:
    inst = random_instance(3)
    free = solve_mip(inst, time_limit_s=20, relative_gap=1e-9)
    assert free.values is not None
    spent = sum(inst.option(o).capex_per_gpu * n for o, n in free.values.n.items())
    spent += sum(inst.option(o).capex_per_server * s for o, s in free.values.s.items())
    tight = dataclasses.replace(inst, caps=Caps(capex_budget=0.5 * spent))
    single = solve_mip(tight, time_limit_s=20, relative_gap=1e-9)
    staged = solve_staged(StagedInstance(periods=(tight,)), time_limit_s=20, relative_gap=1e-9)
    assert single.stats.objective is not None and staged.stats.objective is not None
    assert staged.stats.objective == pytest.approx(single.stats.objective, rel=1e-7)


def _three_years(inst: FleetInstance, growth: tuple[float, ...]) -> tuple[FleetInstance, ...]:
    return tuple(
        period_instance(
            inst, months=12, demand_factor={w.name: g for w in inst.inference}, rental_multiplier={}
        )
        for g in growth
    )


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 50),
    early=st.lists(st.one_of(st.just(0.0), st.floats(0.05, 1.0)), min_size=2, max_size=2),
    later_price=st.lists(st.floats(0.5, 1.5), min_size=2, max_size=2),
)
def test_staging_is_never_dearer_than_buying_the_last_years_fleet_at_once(
    seed: int, early: list[float], later_price: list[float]
) -> None:
    """Demand at most the stated one in years 1–2 and the stated one in year 3, purchases at
    today's price in year 1 and any price later: buying the single-period plan's fleet (which
    serves the stated demand over 36 months) in year 1 is one staged plan, so the staged optimum
    is never dearer than the single-period optimum."""
    inst = random_instance(seed)
    periods = _three_years(inst, (*early, 1.0))
    bought = {o.id for o in inst.options if o.mode.value == "buy"}
    staged = StagedInstance(periods=periods, purchase_multiplier={o: (1.0, *later_price) for o in bought})
    single = solve_mip(inst, time_limit_s=20, relative_gap=1e-9)
    plan = solve_staged(staged, time_limit_s=20, relative_gap=1e-9)
    assert single.stats.objective is not None
    assert plan.stats.status is SolveStatus.OPTIMAL and plan.tco is not None
    assert plan.tco <= single.stats.objective * (1 + 1e-6)
    solutions = staged_solutions(staged, plan)
    assert check_staged(staged, solutions) == []
    assert price_staged(staged, solutions).tco == pytest.approx(plan.tco, rel=1e-7)


def _one_option(gpu_option: AcquisitionOption, *, months: int, replicas: float) -> FleetInstance:
    """One workload "w" served all day by one replica per GPU of ``gpu_option`` (GPU "g")."""
    return FleetInstance(
        currency="USD",
        horizon_months=months,
        buckets=ALL_DAY,
        options=(gpu_option,),
        inference=(flat_demand("w", replicas),),
        candidates=(candidate("w", "g", 1.0),),
    )


def test_a_tranche_is_priced_by_hand() -> None:
    """One GPU type bought (capex 1,000, support 10 a month, 50 % residual after 12 months, 25 %
    after 24), demand of 1 replica in year 1 and 2 in year 2, purchases at 0.8 in year 2: one GPU
    bought in year 1, one in year 2 at 800."""
    gpu = dataclasses.replace(option("g", capex=1_000.0, fixed_monthly=10.0), residual_fraction=0.25)
    base = _one_option(gpu, months=24, replicas=1.0)
    periods = _three_years(base, (1.0, 2.0))[:2]
    staged = StagedInstance(
        periods=periods, purchase_multiplier={gpu.id: (1.0, 0.8)}, residual={gpu.id: (0.25, 0.5)}
    )
    plan = solve_staged(staged, time_limit_s=10, relative_gap=1e-9)
    assert plan.values is not None
    assert [v.n[gpu.id] for v in plan.values] == [1, 2]
    # support 10 a month is all "support": a tranche at 0.8 pays 8 a month
    first = 1_000 - 0.25 * 1_000 + 24 * 10
    second = 800 - 0.5 * 800 + 12 * 8
    assert plan.tco == pytest.approx(first + second)
    cost = price_staged(staged, staged_solutions(staged, plan))
    assert [(t.period, t.gpus, t.hardware, t.residual) for t in cost.tranches] == [
        (0, 1, 1_000, 250),
        (1, 1, 800, 400),
    ]
    assert [p.capex for p in cost.periods] == [1_000, 800]
    assert [p.monthly for p in cost.periods] == [10, 18]


def test_one_server_bought_in_a_later_year_pays_no_fabric() -> None:
    """Nothing in year 1, one 8-GPU server in years 2 and 3: a single node needs no fabric (500 a
    server with two or more; found by the independent pricing: the first formulation kept "single
    node" at 0 from the year without servers and charged one server's fabric)."""
    board = dataclasses.replace(
        option("g", capex=1_000.0, per_server=8, domain=8, full=True), network_capex_per_server=500.0
    )
    base = _one_option(board, months=36, replicas=8.0)
    staged = StagedInstance(periods=_three_years(base, (0.0, 1.0, 1.0)))
    plan = solve_staged(staged, time_limit_s=10, relative_gap=1e-9)
    assert plan.values is not None
    assert [v.s.get(board.id, 0) for v in plan.values] == [0, 1, 1]
    assert plan.tco == pytest.approx(8_000)
    assert price_staged(staged, staged_solutions(staged, plan)).tco == pytest.approx(plan.tco)


def test_a_cancelled_staged_solve_stops() -> None:
    """Cancelled before the solver starts: it stops at once instead of running to its limit."""
    inst = random_instance(1)
    staged = StagedInstance(periods=_three_years(inst, (0.5, 0.8, 1.0)))
    token = CancelToken()
    token.cancel()
    started = time.perf_counter()
    with pytest.raises(SolveCancelled):
        solve_staged(staged, time_limit_s=30, relative_gap=0.0, cancel=token)
    assert time.perf_counter() - started < 10


def test_the_lp_guided_search_beside_the_staged_model_keeps_the_optimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search runs on any model here (threshold 0): the plan is valid and as cheap as without."""
    inst = random_instance(2)
    staged = StagedInstance(periods=_three_years(inst, (0.5, 0.8, 1.0)))
    alone = solve_staged(staged, time_limit_s=20, relative_gap=1e-9)
    monkeypatch.setattr(stages, "LP_GUIDED_MIN_REPLICA_VARS", 0)
    beside = solve_staged(staged, time_limit_s=20, relative_gap=1e-9)
    assert alone.stats.objective is not None and beside.stats.objective is not None
    assert beside.stats.objective == pytest.approx(alone.stats.objective, rel=1e-7)
    assert check_staged(staged, staged_solutions(staged, beside)) == []
