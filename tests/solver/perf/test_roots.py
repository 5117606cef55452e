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


def test_infinite_values_on_the_way_are_bracketed_not_interpolated() -> None:
    # g is +inf below 3 (a saturated queue) and x/2 + 1 above; x = x/2 + 1 would be 2, inside the
    # infinite region, so the first x with g(x) <= x is 3 itself.
    def g(x: float) -> float:
        return math.inf if x < 3.0 else x / 2.0 + 1.0

    got = smallest_fixed_point(g, 1.0, 100.0, rel_tol=1e-9)
    assert got is not None
    assert got == pytest.approx(3.0, rel=1e-6)
    assert g(got) <= got


def test_no_fixed_point_up_to_the_limit_is_none() -> None:
    assert smallest_fixed_point(lambda x: 2.0 * x + 1.0, 1.0, 500.0) is None


def test_the_returned_point_satisfies_g_below_or_at_x() -> None:
    got = smallest_fixed_point(lambda x: 5.0 + 0.5 * x, 1.0, 64.0, rel_tol=1e-3)
    assert got is not None
    assert 5.0 + 0.5 * got <= got
