"""Capacity quantiles and the chance of reaching a capacity (``solver.perf.risk``)."""

from __future__ import annotations

import math

import pytest

from solver.domain import CapacityQuantile
from solver.perf.calibration import load_calibration
from solver.perf.risk import probability_reaching, quantile_factor

BAND = load_calibration()


def test_p50_is_the_estimate_and_p95_the_band_low_end() -> None:
    assert quantile_factor(BAND.band_low, CapacityQuantile.P50) == 1.0
    assert quantile_factor(BAND.band_low, CapacityQuantile.P95) == pytest.approx(BAND.band_low)


def test_p80_lies_between_in_log_space() -> None:
    p80 = quantile_factor(BAND.band_low, CapacityQuantile.P80)
    # z(0.80) / z(0.95) = 0.8416 / 1.6449 of the way from 1 to the band's low end, in logs.
    assert math.log(p80) == pytest.approx(math.log(BAND.band_low) * 0.841621 / 1.644854, rel=1e-5)
    assert BAND.band_low < p80 < 1.0


def test_the_probability_of_reaching_a_quantile_is_its_level() -> None:
    for quantile, level in (
        (CapacityQuantile.P50, 0.5),
        (CapacityQuantile.P80, 0.8),
        (CapacityQuantile.P95, 0.95),
    ):
        factor = quantile_factor(BAND.band_low, quantile)
        assert probability_reaching(factor, BAND.band_low, BAND.band_high) == pytest.approx(level, abs=1e-9)
    assert probability_reaching(BAND.band_high, BAND.band_low, BAND.band_high) == pytest.approx(0.05)
    assert probability_reaching(0.0, BAND.band_low, BAND.band_high) == 1.0
