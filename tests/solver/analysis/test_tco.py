"""TCO lines and unit costs against hand-computed examples (test book in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from econ_factories import site

from pricebook.schema import Money, Pricebook
from solver.analysis.tco import (
    CostComponentName,
    FleetLine,
    UnitCostKind,
    WorkloadUsage,
    cost_components,
    daily_requests,
    fleet_tco,
    to_money,
    to_unit_price,
    unit_costs,
)
from solver.domain import (
    AcquisitionMode,
    Constraints,
    InferenceWorkload,
    ModelRef,
    TrainingMethod,
    TrainingWorkload,
)
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption

BookFactory = Callable[..., Pricebook]
MODES = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)


def options(make_book: BookFactory) -> dict[str, AcquisitionOption]:
    opts = acquisition_options(
        make_book(), Constraints(currency="USD", horizon_months=36, allowed_modes=MODES)
    )
    return {o.id: o for o in opts}


def usd(amount: str) -> Money:
    return Money(amount=Decimal(amount), currency="USD")


def test_bought_hgx_h200_every_line(make_book: BookFactory) -> None:
    opt = options(make_book)["h200-sxm/buy/hgx-h200-8gpu"]
    busy = 8 * 730 * 0.5  # half the held GPU-hours in use: 2,920 GPU-h per month
    tco = fleet_tco([FleetLine(opt, gpus=8, servers=1, busy_gpu_hours_per_month=busy)], 36, "USD")
    total = tco.total
    # Purchase: 8 × $35,000 GPUs, one $40,000 host.
    assert total.purchase_gpus == usd("280000.00")
    assert total.purchase_hosts == usd("40000.00")
    assert total.capex == usd("320000.00")
    # Market value after 36 months: the test book's 30 % of $320,000.
    assert total.residual_value == usd("96000.00")
    assert total.depreciation == usd("224000.00")
    assert total.depreciation_monthly == usd("6222.22")  # 224,000 / 36
    # Support 1 %/month: 8 × $350 + $400 on the host.
    assert total.support_monthly == usd("3200.00")
    # Power: 2,920 busy h × 0.7875 kW × $0.08 = $183.96, host 3 kW × 730 h × $0.08 = $175.20.
    assert total.power_monthly == usd("359.16")
    assert total.colocation_monthly == usd("800.00")  # 8 RU × $100
    assert total.opex_monthly == usd("4359.16")
    assert total.opex_horizon == usd("156929.76")
    assert total.horizon_total == usd("380929.76")
    assert tco.by_option[0].utilization == pytest.approx(0.5)
    # The same number the MIP objective uses (its busy hours are over the whole horizon).
    assert tco.total_float == pytest.approx(opt.horizon_cost(8, 1, 36, busy * 36))


def test_rentals(make_book: BookFactory) -> None:
    opts = options(make_book)
    lines = [
        FleetLine(opts["h200-sxm/reserved/h200-res-12"], gpus=2, servers=0, busy_gpu_hours_per_month=1000),
        FleetLine(opts["rtx-pro-6000/on_demand/rtx-od"], gpus=0, servers=0, busy_gpu_hours_per_month=100),
    ]
    tco = fleet_tco(lines, 36, "USD")
    # Reserved: 2 GPUs × $2.5 × 730 h whether busy or not; on-demand: 100 h × $1.5.
    assert tco.total.reserved_monthly == usd("3650.00")
    assert tco.total.on_demand_monthly == usd("150.00")
    assert tco.total.capex == usd("0.00")
    assert tco.total.horizon_total == usd(str((3650 + 150) * 36) + ".00")
    assert [o.mode for o in tco.by_option] == [AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND]


def test_krw_rounds_to_whole_won() -> None:
    assert to_money(1234.5, "KRW").amount == Decimal("1234")  # banker's rounding to even
    assert to_money(1235.5, "KRW").amount == Decimal("1236")
    assert to_money(0.125, "USD").amount == Decimal("0.12")
    # Unit prices keep 1/100 of the minor unit: $0.075 per 1M tokens stays $0.0750.
    assert to_unit_price(0.07549, "USD").amount == Decimal("0.0755")
    assert to_unit_price(105.004, "KRW").amount == Decimal("105.00")


def test_unit_costs_split_by_gpu_hours(make_book: BookFactory) -> None:
    opt = options(make_book)["h200-sxm/buy/hgx-h200-8gpu"]
    lines = [FleetLine(opt, gpus=8, servers=1, busy_gpu_hours_per_month=2920)]
    chat = InferenceWorkload(
        name="chat",
        model=ModelRef(model_id="m"),
        input_tokens=900,
        output_tokens=100,
        daily_tokens=100_000_000,
    )
    tune = TrainingWorkload(
        name="tune",
        model=ModelRef(model_id="m"),
        method=TrainingMethod.LORA,
        tokens_per_run=1e9,
        runs_per_month=2,
    )
    usages = [
        WorkloadUsage("chat", {"h200-sxm": 2000.0}),
        WorkloadUsage("tune", {"h200-sxm": 920.0}),
    ]
    costs = {
        u.workload: u
        for u in unit_costs(
            lines, usages, inference=[chat], training=[tune], horizon_months=36, currency="USD"
        )
    }
    fleet_total = 380_929.76  # from test_bought_hgx_h200_every_line
    chat_share = fleet_total * 2000 / 2920
    assert float(costs["chat"].horizon_cost.amount) == pytest.approx(chat_share, abs=0.01)
    # 100M tokens a day, 10 % of them output, 365/12 days a month.
    output_per_month = 100e6 * 0.1 * 365 / 12
    expected = chat_share / 36 / output_per_month * 1e6
    per_output, per_total = costs["chat"].per_million_output_tokens, costs["chat"].per_million_total_tokens
    per_run = costs["tune"].per_training_run
    assert per_output is not None and per_total is not None and per_run is not None
    assert float(per_output.amount) == pytest.approx(expected, abs=0.00005)
    total_per_month = 100e6 * 365 / 12
    expected_total = chat_share / 36 / total_per_month * 1e6
    assert float(per_total.amount) == pytest.approx(expected_total, abs=0.00005)
    tune_share = fleet_total * 920 / 2920
    assert float(per_run.amount) == pytest.approx(tune_share / 36 / 2, abs=0.005)
    assert costs["chat"].share_of_fleet + costs["tune"].share_of_fleet == pytest.approx(1.0)


def test_idle_power_counts_as_power_not_support(make_book: BookFactory) -> None:
    book = make_book(site=site(idle_gpu_power_fraction=0.1))
    opt = {o.id: o for o in acquisition_options(book, Constraints(horizon_months=36))}[
        "h200-sxm/buy/hgx-h200-8gpu"
    ]
    tco = fleet_tco([FleetLine(opt, gpus=8, servers=1, busy_gpu_hours_per_month=0.0)], 36, "USD").total
    # Idle month: 8 GPUs × $6.132 idle power + host $175.20; support unchanged at $3,200.
    assert tco.power_monthly == usd("224.26")  # 49.056 + 175.2 = 224.256
    assert tco.support_monthly == usd("3200.00")


def test_daily_requests_from_daily_tokens_or_from_the_hourly_rates() -> None:
    model = ModelRef(model_id="meta-llama/Llama-3.1-8B")
    by_tokens = InferenceWorkload(
        name="a", model=model, input_tokens=2000, output_tokens=500, daily_tokens=2_500_000_000
    )
    assert daily_requests(by_tokens) == pytest.approx(1_000_000)  # 2.5e9 tokens ÷ 2,500 per request
    # 10 requests/s at peak, half of the day at half of the peak: 7.5/s on average, 86,400 s a day.
    profile = (2.0,) * 12 + (1.0,) * 12
    by_rate = InferenceWorkload(
        name="b",
        model=model,
        input_tokens=100,
        output_tokens=100,
        peak_request_rate_per_s=10,
        hourly_profile=profile,
    )
    assert daily_requests(by_rate) == pytest.approx(7.5 * 86_400)


def test_unit_cost_kinds_and_component_names_keep_their_wire_strings(make_book: BookFactory) -> None:
    opt = options(make_book)["h200-sxm/buy/hgx-h200-8gpu"]
    line = FleetLine(opt, gpus=8, servers=1, busy_gpu_hours_per_month=8 * 730 * 0.5)
    names = [c.name for c in cost_components(fleet_tco([line], 36, "USD").total)]
    # Bought hardware: purchase, residual, support, power, colocation (no rentals), in report order.
    assert names == ["gpu_purchase", "host_purchase", "residual_value", "support", "power", "colocation"]
    assert all(isinstance(n, CostComponentName) for n in names)
    assert {k.value for k in UnitCostKind} == {"inference", "training"}
