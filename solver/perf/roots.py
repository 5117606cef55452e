"""One-dimensional root finding for the performance model (no scipy at run time)."""

from __future__ import annotations

import math
from collections.abc import Callable

ITERATIONS = 100
TOLERANCE = 1e-13
"""Relative width of the bracket at which the root is returned."""


def falling_root(f: Callable[[float], float], a: float, fa: float, b: float, fb: float) -> float:
    """The root of an increasing ``f`` between a (f < 0) and b (f > 0): Illinois regula falsi."""
    side = 0
    for _ in range(ITERATIONS):
        c = (a * fb - b * fa) / (fb - fa)
        fc = f(c)
        if fc == 0.0 or b - a <= TOLERANCE * b:
            return c
        if fc < 0.0:
            a, fa = c, fc
            if side == -1:
                fb /= 2.0
            side = -1
        else:
            b, fb = c, fc
            if side == 1:
                fa /= 2.0
            side = 1
    return (a * fb - b * fa) / (fb - fa)


FIXED_POINT_GROWTH = 1.5
"""Ratio between the points of the scan for the first sign change of g(x) − x."""
LOWER_BOUND_STEPS = 1
"""Fixed-point iterations x ← g(x) from below before the scan."""
SECANT_REACH = 1.05
"""The secant step is stretched by this much so that it lands just past the root (a bracket)."""


def smallest_fixed_point(
    g: Callable[[float], float], low: float, high: float, *, rel_tol: float = 1e-6
) -> float | None:
    """The smallest x in [low, high] with g(x) ≤ x, refined to g(x) = x; None when g(x) > x on the
    whole scan (no fixed point up to ``high``).

    g(x) − x is bracketed before any interpolation: a geometric scan from ``low`` finds the first
    point where it is ≤ 0, and the root between that point and the previous one is found by
    bisection steps interleaved with regula falsi — every iterate stays inside the bracket, so
    the solve never overshoots past ``high`` into a refusal. g is taken to be increasing: once
    infinite (a saturated prefill queue) it stays infinite, so a fixed point lies before that.
    """
    a, fa = low, g(low) - low
    if fa <= 0.0:
        return low
    if math.isinf(fa):
        return None  # g increasing: infinite here, infinite everywhere above
    # Fixed-point steps from below first: for an increasing g, a < x* gives g(a) ≤ g(x*) = x*, so
    # each step is a lower bound that never passes the smallest fixed point — and near it fast.
    previous: tuple[float, float] | None = None
    for _ in range(LOWER_BOUND_STEPS):
        x = a + fa  # g(a)
        if not x < high:
            break
        fx = g(x) - x
        if fx <= 0.0:
            return _bracketed(g, a, fa, x, fx, rel_tol=rel_tol)
        previous, (a, fa) = (a, fa), (x, fx)
    # A secant step through the last two lower bounds, a little long: kept only if it brackets.
    if previous is not None and previous[1] > fa:
        b = a + SECANT_REACH * fa * (a - previous[0]) / (previous[1] - fa)
        if a < b < high:
            fb = g(b) - b
            if fb <= 0.0:
                return _bracketed(g, a, fa, b, fb, rel_tol=rel_tol)
    while a < high:
        b = min(high, a * FIXED_POINT_GROWTH)
        fb = g(b) - b
        if math.isinf(fb):
            return _before_infinite(g, a, fa, b, rel_tol=rel_tol)
        if fb <= 0.0:
            return _bracketed(g, a, fa, b, fb, rel_tol=rel_tol)
        a, fa = b, fb
    return None


def _before_infinite(
    g: Callable[[float], float], a: float, fa: float, b: float, *, rel_tol: float
) -> float | None:
    """g finite above a at a, infinite at b (and, increasing, beyond): a fixed point lies before
    the blow-up or nowhere — bisection for a point with g(x) ≤ x, None when the finite part ends
    first."""
    while b - a > rel_tol * b:
        c = (a + b) / 2.0
        fc = g(c) - c
        if fc <= 0.0:
            return _bracketed(g, a, fa, c, fc, rel_tol=rel_tol)
        if math.isinf(fc):
            b = c
        else:
            a, fa = c, fc
    return None


def _bracketed(
    g: Callable[[float], float], a: float, fa: float, b: float, fb: float, *, rel_tol: float
) -> float:
    """x in (a, b] with g(x) = x, given g(a) − a > 0 ≥ g(b) − b; returns the ≤ 0 end. Illinois
    regula falsi (the kept end's value halved when the same end is kept twice), a bisection step
    where an end's value is infinite or the interpolation falls outside the bracket."""
    side = 0
    for _ in range(ITERATIONS):
        if b - a <= rel_tol * b or fb == 0.0:
            break
        c = a + (b - a) * fa / (fa - fb) if math.isfinite(fa) and math.isfinite(fb) else (a + b) / 2.0
        if not a < c < b:
            c = (a + b) / 2.0
        fc = g(c) - c
        if fc > 0.0:
            a, fa = c, fc
            if side == 1:
                fb /= 2.0
            side = 1
        else:
            b, fb = c, fc
            if side == -1:
                fa /= 2.0
            side = -1
    return b
