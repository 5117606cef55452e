"""The solve driver: determinism, the tie-break stage, hints, quiet output, and the LP-guided
search run beside the full MIP."""

from __future__ import annotations

import logging
import random
import threading
import time
from pathlib import Path

import pytest
import structlog
from opt_factories import (
    ALL_DAY,
    candidate,
    fixed_fleet_instance,
    flat_demand,
    option,
    random_portfolio,
    two_gpu_instance,
)

from api.fleetplan.v1 import fleet_planner_pb2 as api
from bench.solver_scaling import portfolio
from clients.scenario import load_scenario
from pricebook.loader import load_default
from service.convert.scenario import plan_request_from_proto
from solver.analysis.whatif import scale_demand, scale_gpu_price
from solver.errors import SolveCancelled
from solver.optimizer import (
    CancelToken,
    FleetInstance,
    SolveStatus,
    check_solution,
    driver,
    solve,
)
from solver.optimizer.candidates import build_instance
from solver.optimizer.driver import solve_mip
from solver.optimizer.explain import (
    _cheapest_alone,
)
from solver.optimizer.results import LimitFired
from solver.optimizer.solution import build_solution
from solver.resolve import resolve


def test_same_instance_same_plan() -> None:
    a = solve(two_gpu_instance(123.0), time_limit_s=5, explain=False)
    b = solve(two_gpu_instance(123.0), time_limit_s=5, explain=False)
    assert a.options == b.options and a.assignments == b.assignments


def _tie_instance(
    workloads: dict[str, tuple[tuple[str, float], ...]], prices: dict[str, float]
) -> FleetInstance:
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=tuple(option(g, capex=p) for g, p in prices.items()),
        inference=tuple(flat_demand(w, 1.0) for w in workloads),
        candidates=tuple(candidate(w, g, cap) for w, cands in workloads.items() for g, cap in cands),
    )


def test_ties_go_to_fewer_gpu_types() -> None:
    # Three GPU types at one price; each workload can use two of them, all can use "x". Every
    # assignment costs 300 with 3 GPUs; the plan must use one type. (The main MIP alone returns
    # one GPU of each type here: its GPU-count tie-break cannot see types.)
    inst = _tie_instance(
        {"w0": (("y", 1.0), ("x", 1.0)), "w1": (("x", 1.0), ("y", 1.0)), "w2": (("z", 1.0), ("x", 1.0))},
        {"x": 100, "y": 100, "z": 100},
    )
    sol = solve(inst, time_limit_s=10)
    assert sol.status is SolveStatus.OPTIMAL
    assert sol.cost is not None and sol.cost.total == pytest.approx(300)
    assert sol.gpu_counts() == {"x": 3}


def test_ties_go_to_fewer_gpus_before_fewer_types() -> None:
    # "big" serves 2 req/s for 200, "small" 1 req/s for 100. "pair" needs 2 req/s (big ×1 or
    # small ×2, both 200); "solo" runs on small only. Same TCO (300) either way: big + small is
    # 2 GPUs of 2 types, small ×3 is 3 GPUs of 1 type — fewer GPUs wins.
    inst = FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("big", capex=200), option("small", capex=100)),
        inference=(flat_demand("pair", 2.0), flat_demand("solo", 1.0)),
        candidates=(
            candidate("pair", "big", 2.0),
            candidate("pair", "small", 1.0),
            candidate("solo", "small", 1.0),
        ),
    )
    sol = solve(inst, time_limit_s=10)
    assert sol.cost is not None and sol.cost.total == pytest.approx(300)
    assert sol.gpu_counts() == {"big": 1, "small": 1}


def test_solver_writes_nothing_to_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    for backend in ("scip", "highs"):
        solve(fixed_fleet_instance(6), time_limit_s=5, backend=backend, explain=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


SEEDS = (0, 1, 2)
SEARCH_SEEDS = tuple(range(6))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_replica_hint_does_not_change_the_optimum(seed: int) -> None:
    inst = random_portfolio(seed, workloads=4)
    plain = solve_mip(inst, time_limit_s=30, relative_gap=1e-9)
    hint = tuple(item for w in inst.inference for item in _cheapest_alone(inst, w.name))
    hinted = solve_mip(inst, time_limit_s=30, relative_gap=1e-9, replica_hint=hint)
    assert plain.stats.status is SolveStatus.OPTIMAL
    assert hinted.stats.status is SolveStatus.OPTIMAL
    assert hinted.stats.objective == pytest.approx(plain.stats.objective, rel=1e-6)


@pytest.mark.parametrize("seed", SEARCH_SEEDS)
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
    # 10 s: quietly the first verified plan comes after ~3 s, but a loaded box (load 3+) took over 6.
    sol = solve(twenty_workloads, time_limit_s=10, relative_gap=1e-3, explain=False)
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


EXAMPLE_500M = Path(__file__).resolve().parents[3] / "examples" / "500m_krw_portfolio.yaml"


@pytest.fixture(scope="module")
def example_500m_instance() -> FleetInstance:
    book = load_default()
    request = plan_request_from_proto(load_scenario(EXAMPLE_500M, api.PlanFleetRequest), book)
    return build_instance(resolve(request, book).request, book)


def _example_variants(instance: FleetInstance, count: int, seed: int) -> list[FleetInstance]:
    """The re-solves sensitivity makes: demand and GPU prices scaled (random, seeded), led by the
    two variants SCIP 10's dual-sparsify presolver got wrong (RTX PRO 6000 at ×0.8 proved
    0.53 % dearer than optimal, demand ×1.47 0.15 %)."""
    rng = random.Random(seed)
    gpus = sorted({o.gpu for o in instance.options})
    variants = [scale_gpu_price(instance, "rtx-pro-6000-ws", 0.8), scale_demand(instance, 1.47)]
    for _ in range(count):
        variant = scale_demand(instance, rng.uniform(0.2, 4.0))
        for gpu in gpus:
            if rng.random() < 0.6:
                variant = scale_gpu_price(variant, gpu, rng.uniform(0.3, 3.0))
        variants.append(variant)
    return variants


def test_scip_agrees_with_highs_on_example_variants(example_500m_instance: FleetInstance) -> None:
    """SCIP's proven optimum equals HiGHS's on the sensitivity re-solves of the 500M KRW example
    (an independent backend as the reference: a wrong "optimal" is dearer than the other's).
    Variant 31 was proven 0.19 % dearer while the model's training idle-hours row was stated in
    GPU-hours (coefficients ~730; SCIP's root conflicts cut the optimum off, docs/optimizer.md)."""
    disagreements: list[tuple[int, object, object]] = []
    for i, variant in enumerate(_example_variants(example_500m_instance, count=40, seed=2)):
        scip = solve_mip(variant, time_limit_s=20, relative_gap=0.0, backend="scip").stats
        highs = solve_mip(variant, time_limit_s=20, relative_gap=0.0, backend="highs").stats
        if scip.status is not highs.status:
            disagreements.append((i, scip.status, highs.status))
        elif (
            scip.objective is not None
            and highs.objective is not None
            and abs(scip.objective - highs.objective) > 1e-6 * abs(highs.objective)
        ):
            disagreements.append((i, scip.objective, highs.objective))
    assert disagreements == []
