"""Capacity at a quantile of the calibrated band, and the chance a planned capacity is reached.

The calibrated band (``calibration.json`` ``band``) is the central 90 % of measured ÷ predicted
throughput over held-out sources: its low end is the ratio's 5th percentile, its high end the 95th.
The estimate is taken as the ratio's median (p50 = size on the estimate, as the planner always
did), and the ratio as log-normal on each side of it with the spread the band gives that side:
ln r ~ N(0, σ_low) below 1 with σ_low = −ln(band_low) / z₀.₉₅, and N(0, σ_high) above with
σ_high = ln(band_high) / z₀.₉₅. So the p95 capacity (what a replica reaches with 95 % probability)
is exactly the band's low end, and p80 lies between, at band_low^(z₀.₈ / z₀.₉₅).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from solver.domain import CapacityQuantile

_STANDARD = NormalDist()
Z_BAND = _STANDARD.inv_cdf(0.95)
"""The band's ends are the ratio's 5th and 95th percentiles: ±1.645 standard deviations."""

QUANTILE_PROBABILITY = {
    CapacityQuantile.P50: 0.50,
    CapacityQuantile.P80: 0.80,
    CapacityQuantile.P95: 0.95,
}
"""Probability that a replica reaches the capacity sized at each quantile."""


def _sigma(band_end: float) -> float:
    return abs(math.log(band_end)) / Z_BAND if band_end > 0 else math.inf


def quantile_factor(band_low: float, quantile: CapacityQuantile) -> float:
    """The factor on the estimated capacity that a replica reaches with the quantile's probability
    (1 at p50, ``band_low`` at p95)."""
    z = _STANDARD.inv_cdf(QUANTILE_PROBABILITY[quantile])
    if z <= 0 or band_low >= 1.0:
        return 1.0
    return math.exp(-z * _sigma(band_low))


def probability_reaching(load_ratio: float, band_low: float, band_high: float) -> float:
    """Probability that real capacity is at least ``load_ratio`` × the estimate (1 at ratio 0)."""
    if load_ratio <= 0:
        return 1.0
    if not math.isfinite(load_ratio):
        return 0.0
    x = math.log(load_ratio)
    sigma = _sigma(band_low) if x < 0 else _sigma(band_high)
    if sigma == 0:
        return 1.0 if x <= 0 else 0.0
    return 1.0 - _STANDARD.cdf(x / sigma)
