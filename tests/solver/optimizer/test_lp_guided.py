"""The LP-guided search beside the full MIP: its plans are plans of the full model, its bound is
the full model's, the optimum does not change, and cancellation stops both solvers."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import structlog
from ortools.linear_solver import linear_solver_pb2

from bench.solver_scaling import portfolio
from pricebook.loader import load_default
from solver.errors import SolveCancelled
from solver.optimizer import CancelToken, driver, solve
from solver.optimizer.candidates import build_instance
from solver.optimizer.driver import build_model, solve_mip
from solver.optimizer.evaluate import check_solution
from solver.optimizer.instance import FleetInstance
from solver.optimizer.lp_guided import LpGuidedSearch, SearchCandidate
from solver.optimizer.model import MipResult, cheapest_cost_per_gpu, cost_alone
from solver.optimizer.results import LimitFired, SolveStatus
from solver.optimizer.solution import build_solution
from tests.solver.optimizer.opt_factories import random_portfolio

SEEDS = tuple(range(6))


@pytest.mark.parametrize("seed", SEEDS)
def test_restricted_plan_is_a_verified_plan_of_the_full_model(seed: int) -> None:
    inst = random_portfolio(seed)
    builder = build_model(inst, "scip")
    model = linear_solver_pb2.MPModelProto()
    builder.solver.ExportModelToProto(model)
    per_gpu = cheapest_cost_per_gpu(inst)
    search = LpGuidedSearch(
        model,
        [
            SearchCandidate(
                workload=c.workload,
                replica_indices=tuple(var.index() for var in builder.r[c.id]),
                cost_alone=cost_alone(c, builder.demand_of[c.workload], inst.buckets, per_gpu),
            )
            for c in builder.cands
        ],
        relative_gap=1e-6,
        solver_parameters="randomization/randomseedshift = 0\n",
    )
    found = search.run(time_limit_s=20)
    assert found is not None
    assert found.lp_bound is not None and found.lp_bound <= found.objective * (1 + 1e-9)
    assert found.kept_replica_vars < sum(len(vs) for vs in builder.r.values())  # it did restrict
    full = solve_mip(inst, time_limit_s=20, relative_gap=1e-9, lp_guided=False)
    assert full.stats.objective is not None
    # A plan of the full model costs at least the full model's optimum.
    assert found.objective * builder.unit >= full.stats.objective * (1 - 1e-6)
    values = builder.values(lambda var: found.values[var.index()])
    solution = build_solution(inst, MipResult(stats=full.stats, values=values))
    assert check_solution(inst, solution) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_same_optimum_with_and_without_the_search(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    inst = random_portfolio(seed)
    plain = solve_mip(inst, time_limit_s=20, relative_gap=1e-9, lp_guided=False)
    monkeypatch.setattr(driver, "LP_GUIDED_MIN_REPLICA_VARS", 0)
    guided = solve_mip(inst, time_limit_s=20, relative_gap=1e-9)
    assert plain.stats.status is SolveStatus.OPTIMAL
    assert guided.stats.status is SolveStatus.OPTIMAL
    assert guided.stats.objective == pytest.approx(plain.stats.objective, rel=1e-6)
    assert guided.values is not None
    solution = build_solution(inst, guided)
    assert check_solution(inst, solution) == []


@pytest.fixture(scope="module")
def twenty_workloads() -> FleetInstance:
    return build_instance(portfolio(20), load_default())


@pytest.mark.slow
def test_large_portfolio_gets_a_verified_plan_with_an_honest_gap(
    twenty_workloads: FleetInstance, capfd: pytest.CaptureFixture[str]
) -> None:
    """The benchmark's 20-workload portfolio is big enough for the search (``solve`` re-checks the
    plan with the independent evaluator and raises if it fails)."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    assert sum(1 for _ in twenty_workloads.candidates) * len(twenty_workloads.buckets) > (
        driver.LP_GUIDED_MIN_REPLICA_VARS
    )
    sol = solve(twenty_workloads, time_limit_s=6, relative_gap=1e-3, explain=False)
    st = sol.stats
    assert st.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
    assert st.objective is not None and st.best_bound is not None and st.gap is not None
    assert st.best_bound <= st.objective
    assert st.gap == pytest.approx((st.objective - st.best_bound) / st.objective, abs=1e-9)
    if st.status is SolveStatus.FEASIBLE:
        assert st.gap > 1e-3 and st.limit_fired is LimitFired.TIME
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # neither solver nor GLOP writes to the terminal


@pytest.mark.slow
def test_cancel_stops_the_full_mip_and_the_search(twenty_workloads: FleetInstance) -> None:
    token = CancelToken()
    for delay in (0.05, 0.3, 0.8, 2.5):  # while building, during the LP, during a restricted MIP
        token = CancelToken()
        timer = threading.Timer(delay, token.cancel)
        started = time.perf_counter()
        timer.start()
        with pytest.raises(SolveCancelled):
            solve(twenty_workloads, time_limit_s=120, cancel=token)
        assert time.perf_counter() - started < delay + 10.0
