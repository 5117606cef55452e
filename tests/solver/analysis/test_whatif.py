"""Baselines and sensitivity on a hand-built instance whose thresholds are known in closed form.

Workload: 10 req/s. GPU "a": 1 req/s per GPU at $100 → 10 GPUs = $1,000. GPU "b": 2 req/s per GPU at
$250 → 5 GPUs = $1,250. So the plan buys "a"; it switches to "b" when a's price rises above
1,250 / 1,000 = ×1.25, or when b's price falls below 1,000 / 1,250 = ×0.8.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from solver.analysis.whatif import (
    TOLERANCE,
    find_threshold,
    mix_of,
    restrict_to_gpu,
    run_baselines,
    scale_demand,
    scale_gpu_price,
    scale_option_price,
)
from solver.domain import AcquisitionMode, Precision
from solver.errors import SolveCancelled
from solver.optimizer.api import solve as optimizer_solve
from solver.optimizer.instance import Bucket, Candidate, FleetInstance, InferenceDemand
from solver.optimizer.results import FleetSolution, LimitFired, SolverStats, SolveStatus
from solver.pricing.options import AcquisitionOption

ALL_DAY = (Bucket(index=0, hours=tuple(range(24))),)
BUY = AcquisitionMode.BUY


def option(
    gpu: str,
    capex: float,
    mode: AcquisitionMode = BUY,
    *,
    fixed_monthly_per_gpu: float = 0.0,
    busy_hourly_per_gpu: float = 0.0,
) -> AcquisitionOption:
    return AcquisitionOption(
        id=f"{gpu}/{mode.value}/x",
        gpu=gpu,
        mode=mode,
        offer_id=f"{gpu}-offer",
        server_id=f"{gpu}-server" if mode is BUY else None,
        gpus_per_server=1,
        server_must_be_full=False,
        scale_up_domain_size=1,
        capex_per_gpu=capex,
        capex_per_server=0.0,
        residual_fraction=0.0,
        fixed_monthly_per_gpu=fixed_monthly_per_gpu,
        fixed_monthly_per_server=0.0,
        busy_hourly_per_gpu=busy_hourly_per_gpu,
        power_kw_per_gpu=0.0,
        power_kw_per_server=0.0,
        rack_units_per_server=0.0,
    )


def candidate(gpu: str, capacity: float) -> Candidate:
    return Candidate(
        id=f"w/{gpu}",
        workload="w",
        gpu=gpu,
        tp=1,
        precision=Precision.BF16,
        kv_precision=Precision.BF16,
        capacity_req_s=capacity,
    )


def instance() -> FleetInstance:
    return FleetInstance(
        currency="USD",
        horizon_months=36,
        buckets=ALL_DAY,
        options=(option("a", 100.0), option("b", 250.0), option("c", 1.0)),
        inference=(InferenceDemand(name="w", rate_req_s=(10.0,)),),
        candidates=(candidate("a", 1.0), candidate("b", 2.0)),
    )


def solve(inst: FleetInstance, limit: float) -> FleetSolution:
    return optimizer_solve(inst, time_limit_s=min(limit, 5.0), explain=False)


def later(seconds: float = 30.0) -> float:
    return time.monotonic() + seconds


def test_base_plan_buys_a() -> None:
    plan = solve(instance(), 5)
    assert mix_of(plan) == {("a", BUY)}
    assert plan.cost is not None and plan.cost.total == pytest.approx(1_000)


def test_price_up_threshold_of_the_planned_gpu() -> None:
    base = mix_of(solve(instance(), 5))
    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "a", m), base, 4.0, solve, deadline=later()
    )
    assert outcome.complete and outcome.threshold is not None
    t = outcome.threshold
    # The switch happens at ×1.25 (both plans cost the same there, so either may be chosen) and
    # the search brackets it within the tolerance.
    assert 1.25 <= t.multiplier <= 1.25 + TOLERANCE
    assert 1.25 - TOLERANCE <= t.last_same_multiplier <= 1.25
    assert mix_of(t.plan_past) == {("b", BUY)}


def test_price_down_threshold_of_the_alternative() -> None:
    base = mix_of(solve(instance(), 5))
    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "b", m), base, 0.25, solve, deadline=later()
    )
    assert outcome.threshold is not None
    assert 0.8 - TOLERANCE <= outcome.threshold.multiplier <= 0.8  # a tie at ×0.8: either mix
    assert 0.8 <= outcome.threshold.last_same_multiplier <= 0.8 + TOLERANCE


def test_no_threshold_within_range() -> None:
    base = mix_of(solve(instance(), 5))
    # Cheaper "a" only strengthens the plan; demand scales both options alike (a stays cheaper).
    down = find_threshold(lambda m: scale_gpu_price(instance(), "a", m), base, 0.25, solve, deadline=later())
    assert down.threshold is None and down.complete and down.searched_to == 0.25
    demand = find_threshold(lambda m: scale_demand(instance(), m), base, 4.0, solve, deadline=later())
    assert demand.threshold is None and demand.solves == 1


def test_search_without_time_is_reported_incomplete() -> None:
    base = mix_of(solve(instance(), 5))
    outcome = find_threshold(lambda m: scale_gpu_price(instance(), "a", m), base, 4.0, solve, deadline=0.0)
    assert not outcome.complete and outcome.threshold is None and outcome.solves == 0


def test_baselines_per_gpu() -> None:
    runs = {r.gpu: r for r in run_baselines(instance(), ("a", "b", "c", "d"), solve, deadline=later())}
    assert runs["a"].horizon_tco == pytest.approx(1_000)
    assert runs["b"].horizon_tco == pytest.approx(1_250)
    assert not runs["c"].feasible and "cannot be served on c" in runs["c"].reason
    assert not runs["d"].feasible and "no offer" in runs["d"].reason


def test_restrict_keeps_only_that_gpu() -> None:
    single, reason = restrict_to_gpu(instance(), "b")
    assert single is not None and reason == ""
    assert {o.gpu for o in single.options} == {"b"}
    assert {c.gpu for c in single.candidates} == {"b"}


def test_scale_option_price_per_mode() -> None:
    bought = option("a", 100.0, fixed_monthly_per_gpu=10.0, busy_hourly_per_gpu=0.5)
    scaled = scale_option_price(bought, 2.0)
    # Purchase price and the support priced on it double; the power price does not.
    assert (scaled.capex_per_gpu, scaled.fixed_monthly_per_gpu, scaled.busy_hourly_per_gpu) == (
        200.0,
        20.0,
        0.5,
    )
    reserved = scale_option_price(
        option("a", 0.0, AcquisitionMode.RESERVED, fixed_monthly_per_gpu=700.0), 0.5
    )
    assert reserved.fixed_monthly_per_gpu == 350.0
    on_demand = scale_option_price(option("a", 0.0, AcquisitionMode.ON_DEMAND, busy_hourly_per_gpu=3.0), 1.5)
    assert on_demand.busy_hourly_per_gpu == 4.5
    owned = replace(bought, owned=True)
    assert scale_option_price(owned, 3.0) == owned  # sunk cost does not move


def status_only(status: SolveStatus) -> FleetSolution:
    stats = SolverStats(
        backend="none",
        status=status,
        objective=None,
        best_bound=None,
        gap=None,
        seconds=0.0,
        limit_fired=LimitFired.CANCEL if status is SolveStatus.CANCELLED else LimitFired.TIME,
        variables=0,
        constraints=0,
    )
    return FleetSolution(status=status, stats=stats, currency="USD", horizon_months=36, buckets=ALL_DAY)


def test_cancelled_or_timed_out_solves_are_not_mix_changes() -> None:
    base = mix_of(solve(instance(), 5))
    with pytest.raises(SolveCancelled):
        find_threshold(
            lambda m: instance(), base, 4.0, lambda i, t: status_only(SolveStatus.CANCELLED), deadline=later()
        )
    # A solve that found nothing in time leaves the answer unknown (incomplete), not "changed".
    outcome = find_threshold(
        lambda m: instance(), base, 4.0, lambda i, t: status_only(SolveStatus.NO_SOLUTION), deadline=later()
    )
    assert outcome.threshold is None and not outcome.complete
    with pytest.raises(SolveCancelled):
        run_baselines(instance(), ("a",), lambda i, t: status_only(SolveStatus.CANCELLED), deadline=later())


def test_baselines_keep_gpus_already_owned() -> None:
    # 4 "a" GPUs are owned (sunk, free here); a "b"-only baseline still has them, so it needs
    # only 3 "b" GPUs (6 req/s) for the remaining demand: 3 × $250 = $750.
    owned_a = replace(option("a", 0.0), id="a/owned/x", owned=True)
    inst = replace(instance(), options=(*instance().options, owned_a), owned_counts={"a": 4})
    single, reason = restrict_to_gpu(inst, "b")
    assert single is not None, reason
    assert {(o.gpu, o.owned) for o in single.options} == {("b", False), ("a", True)}
    runs = {r.gpu: r for r in run_baselines(inst, ("b",), solve, deadline=later())}
    assert runs["b"].horizon_tco == pytest.approx(750)


def test_a_price_search_from_todays_plan_probes_where_the_plans_cost_the_same() -> None:
    """Plan costs are linear in a price multiplier: from today's plan and the plan at the far end,
    the search probes either side of where their costs cross (×1.25 here) — three solves, where
    bisection over ×1…×4 to the same tolerance takes eight."""
    today = solve(instance(), 5)
    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "a", m), mix_of(today), 4.0, solve, deadline=later(), base=today
    )
    assert outcome.complete and outcome.threshold is not None
    assert 1.25 <= outcome.threshold.multiplier <= 1.25 + TOLERANCE
    assert 1.25 - TOLERANCE <= outcome.threshold.last_same_multiplier <= 1.25
    assert outcome.solves == 3


def _stopped_by_time(solution: FleetSolution) -> FleetSolution:
    """``solution`` as a solve the time limit stopped would return it (same plan, not proven)."""
    stats = replace(solution.stats, status=SolveStatus.FEASIBLE, limit_fired=LimitFired.TIME)
    return replace(solution, status=SolveStatus.FEASIBLE, stats=stats)


def test_an_unproven_plan_never_proves_the_mix_unchanged() -> None:
    """At ×4 the optimum is "b" (10 × $400 > 5 × $250); a solve stopped by its time limit that
    returns today's "a" plan there proves nothing: the search ends incomplete, no threshold."""
    today = solve(instance(), 5)
    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "a", m),
        mix_of(today),
        4.0,
        lambda inst, limit: _stopped_by_time(today),
        deadline=later(),
        base=today,
    )
    assert outcome.threshold is None and not outcome.complete


def test_an_unproven_cheaper_plan_of_another_mix_proves_a_change() -> None:
    """An unproven "b" plan ($1,250) beats today's "a" plan at ×4 ($4,000): the mix changes by ×4
    whatever the optimum is; the search goes on from there with proven solves."""
    today = solve(instance(), 5)
    calls = []

    def first_unproven(inst: FleetInstance, limit: float) -> FleetSolution:
        calls.append(inst)
        found = solve(inst, limit)
        return _stopped_by_time(found) if len(calls) == 1 else found

    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "a", m),
        mix_of(today),
        4.0,
        first_unproven,
        deadline=later(),
        base=today,
    )
    assert outcome.complete and outcome.threshold is not None
    assert 1.25 <= outcome.threshold.multiplier <= 1.25 + TOLERANCE


def test_a_proven_infeasible_probe_is_a_change_of_plan() -> None:
    """With a budget of $1,500, demand ×2 (20 GPUs of "a" = $2,000, 10 of "b" = $2,500) cannot be
    served: the infeasible solve decides the probe (today's plan ends there), it is not unknown."""
    budgeted = replace(instance(), caps=replace(instance().caps, capex_budget=1_500.0))
    today = solve(budgeted, 5)
    outcome = find_threshold(lambda m: scale_demand(budgeted, m), mix_of(today), 4.0, solve, deadline=later())
    assert outcome.complete and outcome.threshold is not None
    assert 1.5 - TOLERANCE <= outcome.threshold.last_same_multiplier <= 1.5 <= outcome.threshold.multiplier


def solve_below(inst: FleetInstance, limit: float, cutoff: float) -> FleetSolution:
    return optimizer_solve(inst, time_limit_s=min(limit, 5.0), explain=False, objective_cutoff=cutoff)


def test_a_solve_with_a_cutoff_below_the_optimum_proves_none_is_that_cheap() -> None:
    """Today's optimum costs $1,000: nothing is strictly cheaper (INFEASIBLE under a cutoff just
    below it), and a cutoff above it leaves the optimum as it is."""
    assert solve_below(instance(), 5, 999.99).status is SolveStatus.INFEASIBLE
    above = solve_below(instance(), 5, 1_000.01)
    assert above.status is SolveStatus.OPTIMAL and mix_of(above) == {("a", BUY)}
    assert above.cost is not None and above.cost.total == pytest.approx(1_000)


def test_a_parametric_search_finds_the_same_threshold_with_cutoff_probes() -> None:
    """With cutoff solves, the probes where today's mix stays optimal are answered by INFEASIBLE
    (no plan cheaper than today's there), and the threshold is the one the plain search finds."""
    today = solve(instance(), 5)
    cut: list[SolveStatus] = []

    def counted(inst: FleetInstance, limit: float, cutoff: float) -> FleetSolution:
        found = solve_below(inst, limit, cutoff)
        cut.append(found.status)
        return found

    def make(m: float) -> FleetInstance:
        return scale_gpu_price(instance(), "a", m)

    plain = find_threshold(make, mix_of(today), 4.0, solve, deadline=later(), base=today)
    parametric = find_threshold(
        make, mix_of(today), 4.0, solve, deadline=later(), base=today, solve_below=counted
    )
    assert parametric.complete and parametric.threshold is not None and plain.threshold is not None
    assert parametric.threshold.multiplier == pytest.approx(plain.threshold.multiplier)
    assert parametric.threshold.last_same_multiplier == pytest.approx(plain.threshold.last_same_multiplier)
    assert 1.25 <= parametric.threshold.multiplier <= 1.25 + TOLERANCE
    assert mix_of(parametric.threshold.plan_past) == {("b", BUY)}
    assert SolveStatus.INFEASIBLE in cut  # the probe just below ×1.25: today's plan proven optimal
    assert len(cut) == parametric.solves


def test_no_cutoff_from_a_plan_that_breaks_a_cap_at_the_probe() -> None:
    """Capex budget $1,100: today's 10 × "a" ($1,000) breaks it beyond ×1.1, and "b" ($1,250)
    never fits, so there is no plan beyond ×1.1. A cutoff from today's plan there would wrongly
    prove the mix unchanged; the search solves those probes without one."""
    budgeted = replace(instance(), caps=replace(instance().caps, capex_budget=1_100.0))
    today = solve(budgeted, 5)
    outcome = find_threshold(
        lambda m: scale_gpu_price(budgeted, "a", m),
        mix_of(today),
        4.0,
        solve,
        deadline=later(),
        base=today,
        solve_below=solve_below,
    )
    assert outcome.complete and outcome.threshold is not None
    assert 1.1 - TOLERANCE <= outcome.threshold.last_same_multiplier <= 1.1 <= outcome.threshold.multiplier
    assert not outcome.threshold.plan_past.has_plan


def test_baselines_are_solved_side_by_side_in_the_types_order() -> None:
    """Two types' solves run at once (both cores); the runs come back in the types' order."""
    inst = replace(instance(), candidates=(*instance().candidates, candidate("c", 0.5)))
    running: list[int] = [0]
    most: list[int] = [0]
    lock = threading.Lock()

    def slow(single: FleetInstance, limit: float) -> FleetSolution:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return solve(single, limit)

    runs = run_baselines(inst, ("a", "b", "c"), slow, deadline=later())
    assert [r.gpu for r in runs] == ["a", "b", "c"]
    assert [r.horizon_tco for r in runs] == pytest.approx([1_000, 1_250, 20])
    assert most[0] == 2


def _b_fleet() -> FleetSolution:
    """The baseline fleet of "b" alone (5 GPUs, $1,250 today), a plan of the request."""
    single, reason = restrict_to_gpu(instance(), "b")
    assert single is not None, reason
    return solve(single, 5)


def test_a_known_fleet_of_another_mix_is_the_far_probes_cutoff() -> None:
    """At ×4 today's "a" plan costs $4,000 and the known "b" fleet $1,250: the far probe admits
    only plans at most $1,250, and the search ends where the plain search does."""
    today = solve(instance(), 5)
    cutoffs: list[float] = []

    def recorded(inst: FleetInstance, limit: float, cutoff: float) -> FleetSolution:
        cutoffs.append(cutoff)
        return solve_below(inst, limit, cutoff)

    def make(m: float) -> FleetInstance:
        return scale_gpu_price(instance(), "a", m)

    plain = find_threshold(make, mix_of(today), 4.0, solve, deadline=later(), base=today)
    found = find_threshold(
        make,
        mix_of(today),
        4.0,
        solve,
        deadline=later(),
        base=today,
        solve_below=recorded,
        known=(_b_fleet(),),
    )
    assert cutoffs[0] == pytest.approx(1_250, rel=1e-6)
    assert found.complete and found.threshold is not None and plain.threshold is not None
    assert found.threshold.multiplier == pytest.approx(plain.threshold.multiplier)
    assert found.threshold.last_same_multiplier == pytest.approx(plain.threshold.last_same_multiplier)
    assert mix_of(found.threshold.plan_past) == {("b", BUY)}


def test_a_known_fleet_that_beats_todays_stands_when_the_probe_finds_nothing_in_time() -> None:
    """A probe stopped by its time limit before any plan within the cutoff: the known "b" fleet
    beats today's plan there, so the mix changes by then (as an unproven cheaper plan would)."""
    today = solve(instance(), 5)
    fleet = _b_fleet()

    def nothing_in_time(inst: FleetInstance, limit: float, cutoff: float) -> FleetSolution:
        found = solve_below(inst, limit, cutoff)
        if found.has_plan and mix_of(found) == {("b", BUY)}:
            stats = replace(found.stats, status=SolveStatus.NO_SOLUTION, limit_fired=LimitFired.TIME)
            return replace(found, status=SolveStatus.NO_SOLUTION, stats=stats, options=(), assignments=())
        return found

    outcome = find_threshold(
        lambda m: scale_gpu_price(instance(), "a", m),
        mix_of(today),
        4.0,
        solve,
        deadline=later(),
        base=today,
        solve_below=nothing_in_time,
        known=(fleet,),
    )
    assert outcome.threshold is not None and outcome.threshold.plan_past is fleet
    assert 1.25 <= outcome.threshold.multiplier <= 1.25 + TOLERANCE
