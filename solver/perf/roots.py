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


def smallest_fixed_point(
    g: Callable[[float], float], low: float, high: float, *, rel_tol: float = 1e-6
) -> float | None:
    """The smallest x in [low, high] with g(x) ≤ x, refined to g(x) = x; None when g(x) > x on the
    whole scan (no fixed point up to ``high``).

    g(x) − x is bracketed before any interpolation: a geometric scan from ``low`` finds the first
    point where it is ≤ 0, and the root between that point and the previous one is found by
    bisection steps interleaved with regula falsi — every iterate stays inside the bracket, so
    the solve never overshoots past ``high`` into a refusal (g may be +inf, e.g. a saturated
    prefill queue, anywhere on the way).
    """
    a, fa = low, g(low) - low
    if fa <= 0.0:
        return low
    while a < high:
        b = min(high, a * FIXED_POINT_GROWTH)
        fb = g(b) - b
        if fb <= 0.0:
            return _bracketed(g, a, fa, b, fb, rel_tol=rel_tol)
        a, fa = b, fb
    return None


def _bracketed(
    g: Callable[[float], float], a: float, fa: float, b: float, fb: float, *, rel_tol: float
) -> float:
    """x in (a, b] with g(x) = x, given g(a) − a > 0 ≥ g(b) − b; returns the ≤ 0 end."""
    for i in range(ITERATIONS):
        if b - a <= rel_tol * b or fb == 0.0:
            break
        interpolate = i % 2 == 0 and math.isfinite(fa)
        c = a + (b - a) * fa / (fa - fb) if interpolate else (a + b) / 2.0
        if not a < c < b:
            c = (a + b) / 2.0
        fc = g(c) - c
        if fc > 0.0:
            a, fa = c, fc
        else:
            b, fb = c, fc
    return b
