"""Default price paths of a multi-year plan (``constraints.price_by_year`` overrides them).

Estimates, labelled as such in every staged answer; the facts behind them are in the research
notes (economics over time, 5.4):

- **Purchases**: GPU hardware price-performance improves by 0.14 orders of magnitude a year
  (Epoch AI, the figure the pricebook cites): ×10^−0.14 ≈ 0.724 a year. Applied to the price of the
  same GPU bought later, it is an estimate (a part's street price tracks what newer parts offer
  per dollar, not exactly).
- **Rentals**: flat. Rental prices moved both ways (H100: $1.70/h in October 2025, $2.35/h on
  one-year contracts in March 2026, +40 %; "H100 spiked 10 % Dec 2025–Jan 2026"): no trend is
  sourced, so a path that rises or falls is the request's to give.
"""

from __future__ import annotations

from dataclasses import dataclass

from pricebook.schema import PriceLabel


@dataclass(frozen=True, slots=True)
class PriceTrend:
    per_year: float
    """Multiplier of the price a year later (compounded by the period's start month ÷ 12)."""
    label: PriceLabel
    source: str
    as_of: str

    def at_month(self, month: int) -> float:
        return float(self.per_year ** (month / 12))


PURCHASE_TREND = PriceTrend(
    per_year=10**-0.14,
    label=PriceLabel.ESTIMATE,
    source="Epoch AI: hardware price-performance +0.14 orders of magnitude a year (pricebook; research 5.4)",
    as_of="2025-03-12",
)
RENTAL_TREND = PriceTrend(
    per_year=1.0,
    label=PriceLabel.ESTIMATE,
    source="no rental trend sourced: H100 $1.70/h (Oct 2025) -> $2.35/h 1-yr (Mar 2026), paths go both ways",
    as_of="2026-03-31",
)
