"""The time-budget policy (``solver.budget``): the shares chain as its docstring says, and the
stage clock records what each stage used."""

from __future__ import annotations

import time

import pytest

from solver.budget import DEFAULT_BUDGET, StageClock, TimeBudget


def test_main_solve_gets_its_share_capped_by_the_request_limit() -> None:
    budget = TimeBudget(main_solve=0.7)
    assert budget.main_solve_share_of(60.0, with_extras=True) == pytest.approx(42.0)
    assert budget.main_solve_share_of(60.0, with_extras=False) == pytest.approx(60.0)
    assert budget.main_solve_limit(60.0, 10.0, with_extras=True) == pytest.approx(10.0)
    assert budget.main_solve_limit(5.0, 10.0, with_extras=True) == pytest.approx(3.5)
    # Never less than the shortest solve worth starting (its share of it).
    assert budget.main_solve_share_of(0.0, with_extras=False) == pytest.approx(budget.min_solve_s)


def test_extras_deadlines_chain_within_the_call() -> None:
    budget = TimeBudget(baselines=0.4, headroom=0.5, extras_end=0.9)
    started = time.monotonic()
    deadline = budget.extras_deadline(started, 10.0)
    assert deadline == pytest.approx(started + 9.0)
    now = time.monotonic()
    left = deadline - now
    with_sensitivity = budget.baselines_deadline(deadline, with_sensitivity=True)
    assert with_sensitivity == pytest.approx(now + 0.4 * left, abs=0.05)
    assert budget.baselines_deadline(deadline, with_sensitivity=False) == pytest.approx(deadline, abs=0.05)
    assert budget.headroom_deadline(deadline) == pytest.approx(now + 0.5 * left, abs=0.05)
    # A deadline already past gives no time, not negative time.
    assert budget.headroom_deadline(now - 5.0) == pytest.approx(time.monotonic(), abs=0.05)


def test_default_shares_are_fractions() -> None:
    shares = (
        DEFAULT_BUDGET.main_solve,
        DEFAULT_BUDGET.baselines,
        DEFAULT_BUDGET.headroom,
        DEFAULT_BUDGET.headroom_hints,
        DEFAULT_BUDGET.headroom_overall,
        DEFAULT_BUDGET.extras_end,
        DEFAULT_BUDGET.p50_resolve,
    )
    assert all(0 < s <= 1 for s in shares)


def test_stage_clock_records_wall_and_cpu_time_in_order() -> None:
    clock = StageClock()
    with clock.timed("busy", 1.5):
        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass
    with clock.timed("asleep"):
        time.sleep(0.05)
    busy, asleep = clock.stages
    assert (busy.stage, asleep.stage) == ("busy", "asleep")
    assert busy.budget_s == 1.5 and asleep.budget_s == 0.0
    assert busy.cpu_s >= 0.04 and busy.wall_s >= busy.cpu_s * 0.5
    assert asleep.wall_s >= 0.04 and asleep.cpu_s < asleep.wall_s
