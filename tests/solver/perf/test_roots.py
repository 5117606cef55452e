"""solver.perf.roots: the bracketed fixed-point search returns the smallest fixed point, never a
point past it, and says when there is none."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.perf.roots import smallest_fixed_point


@settings(max_examples=200, deadline=None)
@given(st.floats(0.1, 1000.0), st.floats(0.0, 0.99))
def test_affine_map_fixed_point_is_a_over_one_minus_b(a: float, b: float) -> None:
    expected = a / (1.0 - b)  # x = a + b·x
    got = smallest_fixed_point(lambda x: a + b * x, 1.0, 1e6, rel_tol=1e-9)
    assert got is not None
    assert got == pytest.approx(max(expected, 1.0), rel=1e-6)


def test_two_fixed_points_the_smaller_is_returned() -> None:
    # g(x) = 2 + x²/40 crosses x at 20 ± sqrt(400 − 80) ≈ 2.11 and 37.9; the secant from 1 would
    # jump over the first one. The smaller is where the queue is stable.
    smaller = 20.0 - math.sqrt(320.0)
    got = smallest_fixed_point(lambda x: 2.0 + x * x / 40.0, 1.0, 1000.0, rel_tol=1e-9)
    assert got == pytest.approx(smaller, rel=1e-6)


def test_a_fixed_point_just_before_g_blows_up_is_found() -> None:
    # g = x/2 + 10 (fixed point 20) up to 21, +inf beyond (a saturated queue): the scan's step
    # from 15 lands at 22.5, past the blow-up, and the root before it is still found.
    def g(x: float) -> float:
        return x / 2.0 + 10.0 if x < 21.0 else math.inf

    got = smallest_fixed_point(g, 15.0, 100.0, rel_tol=1e-9)
    assert got == pytest.approx(20.0, rel=1e-6)


def test_infinite_from_the_start_or_before_any_fixed_point_is_none() -> None:
    assert smallest_fixed_point(lambda x: math.inf, 1.0, 100.0) is None
    assert smallest_fixed_point(lambda x: 2.0 * x if x < 10.0 else math.inf, 1.0, 100.0) is None


def test_no_fixed_point_up_to_the_limit_is_none() -> None:
    assert smallest_fixed_point(lambda x: 2.0 * x + 1.0, 1.0, 500.0) is None


def test_the_returned_point_satisfies_g_below_or_at_x() -> None:
    got = smallest_fixed_point(lambda x: 5.0 + 0.5 * x, 1.0, 64.0, rel_tol=1e-3)
    assert got is not None
    assert 5.0 + 0.5 * got <= got
