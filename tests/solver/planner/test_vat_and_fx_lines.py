"""VAT is a line of the answer, not a different plan; the FX rate is in every plan."""

from __future__ import annotations

from planner_factories import BARE, request

from pricebook.schema import Pricebook
from solver.planner import plan
from solver.resolve import resolve


def test_include_vat_adds_a_line_and_changes_nothing_else(book: Pricebook) -> None:
    base = request(**BARE)
    with_vat = base.model_copy(
        update={"constraints": base.constraints.model_copy(update={"include_vat": True})}
    )
    without = plan(resolve(base, book), time_limit_s=10)
    added = plan(resolve(with_vat, book), time_limit_s=10)
    assert without.vat is None and added.vat is not None
    assert [(f.option_id, f.gpus) for f in added.fleet] == [(f.option_id, f.gpus) for f in without.fleet]
    assert added.horizon_tco == without.horizon_tco  # ex-VAT both
    assert added.tco is not None
    total = added.tco.total
    vat = added.vat
    assert vat.supply.amount == total.capex.amount + total.opex_horizon.amount
    assert vat.horizon_total_with_vat.amount == total.horizon_total.amount + vat.vat.amount
    assert abs(float(vat.vat.amount) - 0.10 * float(vat.supply.amount)) <= 0.005
    # Book depreciation: a row per year of the 36 months, straight line over 60 months.
    assert [row.year for row in added.depreciation] == [1, 2, 3]
    assert added.depreciation[-1].book_value_end.amount == total.capex.amount - sum(
        row.depreciation.amount for row in added.depreciation
    )
    assert added.fx_rate_note.startswith("1 USD = 1,444.44 KRW (2025-12-31")
