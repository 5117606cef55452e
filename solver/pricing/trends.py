"""Default price paths of a multi-year plan (``constraints.price_by_year`` replaces them).

The pricebook's ``site.price_trends`` (sourced, labelled estimates): purchases ×10^−0.14 ≈ 0.724 a
year (Epoch's hardware price-performance trend applied to the same part bought later), rentals
flat (rental prices moved both ways: no trend is sourced). A kind without a trend stays flat.
"""

from __future__ import annotations

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode

MONTHS_PER_YEAR = 12


def default_multiplier(book: Pricebook, mode: AcquisitionMode, month: int) -> float:
    """The book's price multiplier ``month`` months from the start for offers of ``mode``."""
    kind = "purchase" if mode is AcquisitionMode.BUY else "rental"
    trend = next((t for t in book.site.price_trends if t.applies_to == kind), None)
    per_year = trend.multiplier_per_year if trend is not None else 1.0
    return float(per_year ** (month / MONTHS_PER_YEAR))
