"""Runner-ups on large portfolios: one workload moves off its GPU type while the others keep their
planned replicas. Checked against the full re-plan (which can only be cheaper) and the plan itself."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from solver.optimizer import api
from solver.optimizer.api import solve
from solver.optimizer.driver import solve_mip
from solver.optimizer.explain import (
    _cheaper_than_plan,
    _cheapest_alone,
    explain_local_runner_ups,
    explain_runner_ups,
)
from solver.optimizer.instance import FleetInstance
from solver.optimizer.model import MipResult, Relaxation
from solver.optimizer.results import FleetSolution, LimitFired, RunnerUp, SolveStatus
from solver.optimizer.solution import build_solution
from tests.solver.optimizer.opt_factories import random_portfolio

SEEDS = (0, 1, 2)


def _plan(seed: int, workloads: int) -> tuple[FleetInstance, FleetSolution]:
    inst = random_portfolio(seed, workloads=workloads)
    sol = solve(inst, time_limit_s=30, relative_gap=1e-9, explain=False)
    assert sol.status is SolveStatus.OPTIMAL
    return inst, sol


@pytest.mark.parametrize("seed", SEEDS)
def test_fixing_every_planned_replica_reproduces_the_plan_cost(seed: int) -> None:
    inst, sol = _plan(seed, 6)
    assert sol.cost is not None
    fixed = tuple((u.candidate.id, u.replicas) for a in sol.assignments for u in a.uses)
    used = {cid for cid, _ in fixed}
    only_used = dataclasses.replace(inst, candidates=tuple(c for c in inst.candidates if c.id in used))
    again = solve_mip(only_used, time_limit_s=20, relative_gap=1e-9, relax=Relaxation(fixed_replicas=fixed))
    rebuilt = build_solution(only_used, again)
    assert rebuilt.cost is not None
    assert rebuilt.cost.total == pytest.approx(sol.cost.total, rel=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_local_runner_up_is_a_real_plan_no_cheaper_than_the_full_re_plan(seed: int) -> None:
    inst, sol = _plan(seed, 6)
    assert sol.cost is not None
    local = explain_local_runner_ups(inst, sol, time_limit_s=60)
    full = explain_runner_ups(inst, sol, time_limit_s=60)
    compared = 0
    for a_local, a_full in zip(local.assignments, full.assignments, strict=True):
        assert a_local.workload == a_full.workload
        chosen = a_local.primary.candidate.gpu
        if a_local.runner_up is None:
            assert a_local.runner_up_note  # says why
            continue
        assert a_local.runner_up.gpu != chosen
        # Any plan costs at least the optimum, and the full re-plan is the best plan without that GPU.
        assert a_local.runner_up.total_cost >= sol.cost.total * (1 - 1e-6)
        assert a_full.runner_up is not None
        assert a_full.runner_up.total_cost <= a_local.runner_up.total_cost * (1 + 1e-3)
        assert "kept as planned" in a_local.runner_up_note
        compared += 1
    assert compared >= 3


def test_large_portfolios_get_local_runner_ups_largest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "RUNNER_UP_MAX_WORKLOADS", 3)
    inst = random_portfolio(4, workloads=6)
    sol = solve(inst, time_limit_s=40, relative_gap=1e-6)
    assert sol.has_plan
    with_runner_up = [a for a in sol.assignments if a.runner_up is not None]
    assert with_runner_up, [a.runner_up_note for a in sol.assignments]
    assert all("kept as planned" in a.runner_up_note for a in with_runner_up)
    assert all(a.runner_up is not None or a.runner_up_note for a in sol.assignments)


@pytest.mark.parametrize("seed", SEEDS)
def test_cheapest_alone_start_serves_the_workload_on_one_candidate(seed: int) -> None:
    inst = random_portfolio(seed, workloads=4)
    for w in inst.inference:
        start = _cheapest_alone(inst, w.name)
        assert len(start) == 1
        cid, replicas = start[0]
        cand = next(c for c in inst.candidates if c.id == cid)
        assert cand.workload == w.name
        for lam, count in zip(w.rate_req_s, replicas, strict=True):
            if lam <= 0:
                assert count == 0
                continue
            # Enough replicas for the demand after losing the spares, and one fewer would not do.
            assert (count - w.redundancy) * cand.capacity_req_s >= lam * (1 - 1e-9)
            assert (count - w.redundancy - 1) * cand.capacity_req_s < lam


@pytest.mark.parametrize("seed", SEEDS)
def test_a_replica_hint_does_not_change_the_optimum(seed: int) -> None:
    inst = random_portfolio(seed, workloads=4)
    plain = solve_mip(inst, time_limit_s=30, relative_gap=1e-9)
    hint = tuple(item for w in inst.inference for item in _cheapest_alone(inst, w.name))
    hinted = solve_mip(inst, time_limit_s=30, relative_gap=1e-9, replica_hint=hint)
    assert plain.stats.status is SolveStatus.OPTIMAL
    assert hinted.stats.status is SolveStatus.OPTIMAL
    assert hinted.stats.objective == pytest.approx(plain.stats.objective, rel=1e-6)


def _stopped_at_time_limit(mip: MipResult) -> MipResult:
    """``mip`` as if its time limit had fired 1 % from the bound (a plan that is not proven)."""
    stats = dataclasses.replace(mip.stats, status=SolveStatus.FEASIBLE, gap=0.01, limit_fired=LimitFired.TIME)
    return dataclasses.replace(mip, stats=stats)


def test_a_small_portfolio_whose_plan_is_not_proven_gets_local_runner_ups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inst = random_portfolio(4, workloads=4)
    main_solves: list[float] = []

    def main_then_runner_ups(instance: FleetInstance, **kwargs: Any) -> MipResult:
        if not main_solves:
            main_solves.append(kwargs["time_limit_s"])
            return _stopped_at_time_limit(solve_mip(instance, **kwargs))
        return solve_mip(instance, **kwargs)

    monkeypatch.setattr(api, "solve_mip", main_then_runner_ups)
    sol = solve(inst, time_limit_s=40)
    assert sol.status is SolveStatus.FEASIBLE
    # The main solve left the runner-ups their share of the time limit.
    assert main_solves == [pytest.approx(40 * (1 - api.LOCAL_RUNNER_UP_SHARE))]
    with_runner_up = [a for a in sol.assignments if a.runner_up is not None]
    assert with_runner_up
    assert all("kept as planned" in a.runner_up_note for a in with_runner_up)


def test_a_runner_up_cheaper_than_a_plan_stopped_by_its_time_limit_says_so() -> None:
    _, sol = _plan(0, 4)
    cheaper = RunnerUp(
        gpu="other", tp=1, precision="fp8", replicas_at_peak=1, total_cost=90.0, cost_difference=-10.0
    )
    assert _cheaper_than_plan(cheaper, sol) == ""  # proven: cheaper only within the solver's gap
    stopped = dataclasses.replace(
        sol,
        status=SolveStatus.FEASIBLE,
        stats=dataclasses.replace(sol.stats, status=SolveStatus.FEASIBLE, gap=0.0123),
    )
    remark = _cheaper_than_plan(cheaper, stopped)
    assert f"costs 10 {sol.currency} less than the plan" in remark and "1.23%" in remark
    dearer = dataclasses.replace(cheaper, total_cost=110.0, cost_difference=10.0)
    assert _cheaper_than_plan(dearer, stopped) == ""
