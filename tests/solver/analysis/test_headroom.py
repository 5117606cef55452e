"""Headroom search (``solver.analysis.headroom``): the bisection against a known threshold, the
next step of growth, and the fixed fleet."""

from __future__ import annotations

import time
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.analysis.headroom import MIN_STEP_AHEAD, STEP, next_step
from solver.optimizer.headroom import GROWTH_SEARCHED_TO, TOLERANCE, FleetCheck, largest_served
from solver.optimizer.instance import FleetInstance


class _Threshold:
    """A fleet that serves every multiplier up to ``limit`` (monotone, like a fixed fleet)."""

    def __init__(self, limit: float, unknown_after: int | None = None) -> None:
        self.limit = limit
        self.calls = 0
        self.unknown_after = unknown_after

    def __call__(self, instance: Any, time_limit_s: float) -> bool | None:
        self.calls += 1
        if self.unknown_after is not None and self.calls > self.unknown_after:
            return None
        return bool(instance <= self.limit)


def _search(check: _Threshold, *, start: float = 1.0, hint: float | None = None) -> Any:
    return largest_served(
        lambda m: cast(FleetInstance, m),
        cast(FleetCheck, check),
        start=start,
        hint=hint,
        deadline=time.monotonic() + 60,
    )


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    limit=st.floats(min_value=1.0, max_value=6.0),
    hint=st.none() | st.floats(min_value=1.0, max_value=6.0),
)
def test_the_largest_multiplier_served_is_found_within_the_tolerance(
    limit: float, hint: float | None
) -> None:
    found = _search(_Threshold(limit), hint=hint)
    assert found.multiplier <= limit  # only multipliers the fleet served are reported
    if limit >= GROWTH_SEARCHED_TO:
        assert found.at_least and found.multiplier == GROWTH_SEARCHED_TO
    else:
        assert not found.at_least
        assert limit - found.multiplier <= TOLERANCE


def test_no_answer_in_time_gives_a_lower_bound() -> None:
    found = _search(_Threshold(2.0, unknown_after=2))
    assert found.at_least and 1.0 <= found.multiplier <= 2.0


def test_the_next_step_is_a_multiple_of_the_step_far_enough_past_the_headroom() -> None:
    for percent in range(300):
        growth = percent / 100
        step = next_step(growth)
        assert step >= growth + MIN_STEP_AHEAD - 1e-9
        assert step - STEP < growth + MIN_STEP_AHEAD - 1e-9  # the first such multiple
        assert abs(step / STEP - round(step / STEP)) < 1e-9
    assert next_step(0.01) == 0.1 and next_step(0.12) == 0.2
