"""One-dimensional root finding for the performance model (no scipy at run time)."""

from __future__ import annotations

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
