"""Properties of the economics over generated books and fleets: the VAT line adds up, the default
offer policy never settles for a less reliable price label, and rentals come in whole instances."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from econ_factories import AS_OF, SRC, offer
from econ_factories import book as make_book
from hypothesis import given, settings
from hypothesis import strategies as st

from pricebook.overrides import PricebookOverrides, apply_overrides
from pricebook.schema import LABEL_RELIABILITY, PriceLabel, label_rank
from solver.analysis.tco import FleetLine, fleet_tco, report, storage_lines, vat_lines
from solver.domain import AcquisitionMode, Constraints, OfferPolicy
from solver.planner.summary import fx_note
from solver.pricing.costs import acquisition_options

MODES = (AcquisitionMode.BUY, AcquisitionMode.RESERVED, AcquisitionMode.ON_DEMAND)
KIND_OF_MODE = {AcquisitionMode.RESERVED: "reserved", AcquisitionMode.ON_DEMAND: "on_demand"}

labels = st.sampled_from(LABEL_RELIABILITY)
prices = st.integers(min_value=1, max_value=100_000)


@st.composite
def offer_sets(draw: st.DrawFn) -> tuple:  # type: ignore[type-arg]
    """Purchase, reserved and on-demand offers for the test book's H200, random labels and prices."""
    made = []
    for kind, unit in (("purchase_gpu", 1), ("reserved", 10_000), ("on_demand", 10_000)):
        for i in range(draw(st.integers(min_value=1, max_value=5))):
            made.append(
                offer(
                    f"h200-{kind}-{i}",
                    kind,
                    "h200-sxm",
                    f"{draw(prices) / unit} USD",
                    label=draw(labels),
                    term_months=12 if kind == "reserved" else 0,
                )
            )
    return tuple(made)


@settings(max_examples=60, deadline=None)
@given(offers=offer_sets())
def test_most_reliable_never_uses_a_less_reliable_label(offers: tuple) -> None:  # type: ignore[type-arg]
    book = make_book(offers=offers)
    constraints = Constraints(allowed_gpus=("h200-sxm",), allowed_modes=MODES)
    by_offer = {o.id: o for o in book.offers}
    for option in acquisition_options(book, constraints):
        chosen = by_offer[option.offer_id]
        same_mode = [
            o
            for o in book.offers
            if o.gpu == chosen.gpu
            and (
                o.kind == chosen.kind
                or (option.mode is AcquisitionMode.BUY and o.kind.startswith("purchase"))
            )
        ]
        best = min(label_rank(o.label) for o in same_mode)
        assert label_rank(chosen.label) == best
        # ... and the cheapest of that label.
        cheapest = min(o.price.amount for o in same_mode if label_rank(o.label) == best)
        assert chosen.price.amount == cheapest
    cheapest_policy = acquisition_options(
        book, constraints.model_copy(update={"offer_policy": OfferPolicy.CHEAPEST})
    )
    for option in cheapest_policy:
        chosen = by_offer[option.offer_id]
        kind = chosen.kind
        assert chosen.price.amount == min(o.price.amount for o in book.offers if o.kind == kind)


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.integers(min_value=0, max_value=64),
    busy=st.floats(min_value=0.0, max_value=1.0),
    rented_hours=st.floats(min_value=0.0, max_value=50_000.0),
    horizon=st.integers(min_value=1, max_value=120),
    rate=st.sampled_from([0.0, 0.05, 0.1, 0.2]),
)
def test_total_with_vat_is_the_ex_vat_total_plus_the_vat_line(
    *, gpus: int, busy: float, rented_hours: float, horizon: int, rate: float
) -> None:
    book = make_book()
    options = {
        o.id: o for o in acquisition_options(book, Constraints(horizon_months=horizon, allowed_modes=MODES))
    }
    servers = -(-gpus // 8)
    lines = [
        FleetLine(options["h200-sxm/buy/hgx-h200-8gpu"], gpus=servers * 8, servers=servers,
                  busy_gpu_hours_per_month=servers * 8 * 730 * busy),
        FleetLine(options["h200-sxm/on_demand/h200-od-cheap"], gpus=0, servers=0,
                  busy_gpu_hours_per_month=rented_hours),
    ]  # fmt: skip
    tco = fleet_tco(lines, horizon, "USD").total
    vat = vat_lines(tco, rate)
    assert vat.horizon_total_with_vat.amount == tco.horizon_total.amount + vat.vat.amount
    assert vat.total.amount == vat.supply.amount + vat.vat.amount
    assert vat.supply.amount == tco.capex.amount + tco.opex_horizon.amount
    # The VAT is the rate on the supply, to the cent.
    assert abs(float(vat.vat.amount) - rate * float(vat.supply.amount)) <= 0.005 + 1e-9 * float(
        vat.supply.amount
    )


def test_label_order_is_quote_list_street_derived_estimate() -> None:
    assert [label.value for label in LABEL_RELIABILITY] == ["quote", "list", "street", "derived", "estimate"]
    assert set(LABEL_RELIABILITY) == set(PriceLabel)


def test_rentals_of_multi_gpu_instances_carry_their_size() -> None:
    eight = offer("h200-od-8x", "on_demand", "h200-sxm", "1.0 USD", gpus_per_instance=8)
    book = make_book(offers=(eight,))
    (option,) = acquisition_options(
        book, Constraints(allowed_modes=(AcquisitionMode.ON_DEMAND,), allowed_gpus=("h200-sxm",))
    )
    assert option.rental_instance_gpus == 8


def test_the_fx_note_names_the_rate_used_with_its_date_and_source() -> None:
    book = make_book()
    assert fx_note(book) == f"1 USD = 1,400.00 KRW ({AS_OF.isoformat()}, {SRC})"
    overridden, _ = apply_overrides(book, PricebookOverrides(fx_usd_krw=1390.5), today=dt.date(2026, 12, 3))
    assert fx_note(overridden) == "1 USD = 1,390.50 KRW (2026-12-03, request override)"


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=6),
    busy=st.floats(min_value=0.0, max_value=1.0),
    horizon=st.integers(min_value=1, max_value=120),
    currency=st.sampled_from(["USD", "KRW"]),
    storage=st.tuples(st.floats(0.0, 1e7), st.floats(0.0, 1e5)),
)
def test_fleet_lines_and_fleet_wide_lines_sum_to_the_tco_exactly(
    *, counts: list[int], busy: float, horizon: int, currency: str, storage: tuple[float, float]
) -> None:
    # Issue 28 item 9: each fleet line is rounded once, and the TCO is the sum of the rounded
    # lines (the 500M-class bid was 59 KRW apart when the total was rounded on its own).
    book = make_book()
    constraints = Constraints(horizon_months=horizon, allowed_modes=MODES, currency=currency)
    options = acquisition_options(book, constraints)
    lines = []
    for i, count in enumerate(counts):
        opt = options[i % len(options)]
        held = 0 if opt.mode is AcquisitionMode.ON_DEMAND else count
        per_server = max(1, opt.gpus_per_server)
        servers = -(-held // per_server) if opt.mode is AcquisitionMode.BUY else 0
        gpus = servers * per_server if opt.mode is AcquisitionMode.BUY else held
        lines.append(FleetLine(opt, gpus=gpus, servers=servers, busy_gpu_hours_per_month=count * 730 * busy))
    fleet_wide = storage_lines(*storage)
    tco = fleet_tco(lines, horizon, currency, fleet_wide=fleet_wide)  # type: ignore[arg-type]
    wide = report(fleet_wide, horizon, currency)  # type: ignore[arg-type]
    parts = [o.tco for o in tco.by_option] + [wide]
    for name in ("horizon_total", "capex", "residual_value", "opex_monthly", "depreciation", "opex_horizon"):
        assert getattr(tco.total, name).amount == sum((getattr(p, name).amount for p in parts), Decimal(0))
    assert tco.total.horizon_total.amount == (
        tco.total.capex.amount - tco.total.residual_value.amount + tco.total.opex_monthly.amount * horizon
    )
