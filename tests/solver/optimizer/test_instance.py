"""The instance: demand buckets, option predicates, lookups."""

from __future__ import annotations

import pytest
from opt_factories import option, two_gpu_instance

from solver.domain import AcquisitionMode
from solver.optimizer.instance import (
    buckets_from_rates,
    is_on_site,
    is_rental_on_demand,
    tp_domain,
)


def test_hours_with_the_same_rates_share_a_bucket() -> None:
    day = [1.0] * 8 + [3.0] * 16
    night = [2.0] * 8 + [0.0] * 16
    buckets, busiest, quietest = buckets_from_rates([day, night])
    assert [b.hours_per_day for b in buckets] == [8, 16]
    assert busiest == quietest == [[1.0, 3.0], [2.0, 0.0]]


def test_every_distinct_hour_keeps_its_own_bucket() -> None:
    """No clustering: 24 different hours are 24 buckets, each at its own rate (exact)."""
    rates = [float(h) for h in range(24)]
    buckets, busiest, quietest = buckets_from_rates([rates])
    assert len(buckets) == 24
    assert sorted(h for b in buckets for h in b.hours) == list(range(24))
    for b, rate in zip(buckets, busiest[0], strict=True):
        assert [rates[h] for h in b.hours] == [rate]
    assert quietest == busiest


def test_clustered_hours_carry_their_busiest_and_quietest_rates() -> None:
    rates = [float(h) for h in range(24)]
    buckets, busiest, quietest = buckets_from_rates([rates], max_buckets=6)
    assert len(buckets) == 6
    assert sorted(h for b in buckets for h in b.hours) == list(range(24))
    for b, high, low in zip(buckets, busiest[0], quietest[0], strict=True):
        assert high == max(rates[h] for h in b.hours)
        assert low == min(rates[h] for h in b.hours)


def test_option_predicates_and_tp_domain() -> None:
    bought = option("a", capex=100, per_server=8, domain=4)
    assert is_on_site(bought) and not is_rental_on_demand(bought)
    assert tp_domain(bought) == 4  # a TP group stays inside one NVLink domain of one server
    assert tp_domain(option("a", per_server=2, domain=8)) == 2
    rented = option("a", mode=AcquisitionMode.ON_DEMAND, busy_hourly=2.0)
    assert is_rental_on_demand(rented) and not is_on_site(rented)


def test_lookups() -> None:
    inst = two_gpu_instance(55.0)
    assert inst.gpu_types() == ("a", "b")
    assert [c.gpu for c in inst.candidates_of("chat")] == ["a", "b"]
    with pytest.raises(KeyError):
        inst.option("missing")
