"""The caps as one closed set: values, words, amounts and count caps."""

from __future__ import annotations

from solver.optimizer.caps import Cap, count_cap, counted_gpu
from solver.optimizer.instance import Caps


def test_cap_values_are_the_caps_field_names() -> None:
    # The planner and the service compare these strings (CapRelaxation.cap).
    assert [str(cap) for cap in Cap] == ["capex_budget", "monthly_opex_cap", "power_cap_kw", "rack_units_cap"]
    assert all(hasattr(Caps(), cap.value) for cap in Cap)


def test_each_cap_has_its_words_amount_and_usage_key() -> None:
    assert Cap.CAPEX_BUDGET.words == "capex budget"
    assert Cap.POWER_KW.amount(40, "USD") == "40.0 kW"
    assert Cap.CAPEX_BUDGET.amount(6e7, "KRW") == "60,000,000 KRW"
    assert Cap.RACK_UNITS.amount(42, "USD") == "42 U"
    assert [cap.usage_key for cap in Cap] == ["capex", "monthly_opex", "power_kw", "rack_units"]


def test_count_caps_name_their_gpu() -> None:
    assert count_cap("h100-sxm") == "count:h100-sxm"
    assert counted_gpu(count_cap("h100-sxm")) == "h100-sxm"
    assert counted_gpu(Cap.POWER_KW) is None


def test_caps_limit_and_present() -> None:
    caps = Caps(capex_budget=100.0, rack_units_cap=8.0)
    assert caps.limit(Cap.CAPEX_BUDGET) == 100.0
    assert caps.limit(Cap.POWER_KW) is None
    assert caps.present() == (Cap.CAPEX_BUDGET, Cap.RACK_UNITS)
