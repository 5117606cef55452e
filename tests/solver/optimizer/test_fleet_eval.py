"""EvaluateFleet on fixed fleets: the share of demand served, headroom."""

from __future__ import annotations

import pytest
from opt_factories import (
    fixed_fleet_instance,
    fleet_of_a,
)

from solver.optimizer.fleet_eval import evaluate_fixed_fleet


def test_short_fleet_reports_the_share_it_serves() -> None:
    # 3 GPUs × 10 req/s = 30 of 55 req/s.
    ev = evaluate_fixed_fleet(fixed_fleet_instance(3), fleet_of_a(3), time_limit_s=5)
    assert not ev.feasible
    (fit,) = ev.fits
    assert fit.served_fraction == pytest.approx(30 / 55, rel=1e-6)
    assert fit.headroom_fraction == pytest.approx(30 / 55 - 1, rel=1e-6)
    assert ev.tco == pytest.approx(300)


def test_big_enough_fleet_is_feasible_with_headroom() -> None:
    # 6 GPUs serve 60 req/s: headroom 60/55 − 1; TCO = 6 × 100 (the fleet is paid whether busy or not).
    ev = evaluate_fixed_fleet(fixed_fleet_instance(6), fleet_of_a(6), time_limit_s=5)
    assert ev.feasible
    assert ev.fits[0].served_fraction == 1.0
    assert ev.fits[0].headroom_fraction == pytest.approx(60 / 55 - 1, rel=1e-6)
    assert ev.tco == pytest.approx(600)
