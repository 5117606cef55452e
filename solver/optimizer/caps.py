"""The caps a request can set on the whole fleet: one closed set, and how each is named.

``Cap`` values are the ``instance.Caps`` field names, the same strings the planner and the service
use (``CapRelaxation.cap``). A GPU type's maximum count is a cap too, keyed ``"count:<gpu>"``
(``count_cap``): ``CapKey`` is either. The words, amount format and usage key of each cap come
from ``_TEXT`` alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from solver.optimizer.instance import CountLimit


class Cap(StrEnum):
    CAPEX_BUDGET = "capex_budget"
    MONTHLY_OPEX = "monthly_opex_cap"
    POWER_KW = "power_cap_kw"
    RACK_UNITS = "rack_units_cap"

    @property
    def words(self) -> str:
        """The cap in a sentence, e.g. "capex budget"."""
        return _TEXT[self].words

    @property
    def usage_key(self) -> str:
        """Its key in ``FleetSolution.usage`` (what a plan uses of it)."""
        return _TEXT[self].usage_key

    def amount(self, value: float, currency: str) -> str:
        """``value`` of this cap in words, e.g. "40.0 kW" or "60,000,000 KRW"."""
        return _TEXT[self].amount.format(value, cur=currency)

    def overage(self, used: float, limit: float, currency: str) -> str:
        """E.g. "over the capex budget by 86,176,863 KRW (uses 586,176,863 KRW of 500,000,000 KRW)"."""
        return (
            f"over the {self.words} by {self.amount(used - limit, currency)} "
            f"(uses {self.amount(used, currency)} of {self.amount(limit, currency)})"
        )


@dataclass(frozen=True, slots=True)
class _CapText:
    words: str
    amount: str
    usage_key: str


_TEXT: dict[Cap, _CapText] = {
    Cap.CAPEX_BUDGET: _CapText("capex budget", "{:,.0f} {cur}", "capex"),
    Cap.MONTHLY_OPEX: _CapText("monthly opex cap", "{:,.0f} {cur}", "monthly_opex"),
    Cap.POWER_KW: _CapText("power cap", "{:,.1f} kW", "power_kw"),
    Cap.RACK_UNITS: _CapText("rack-unit cap", "{:,.0f} U", "rack_units"),
}

CapKey = Cap | str
"""A ``Cap``, or ``count_cap(gpu)`` for the maximum count of one GPU type."""

_COUNT_PREFIX = "count:"


def count_cap(gpu: str) -> str:
    """The key of ``gpu``'s maximum-count cap."""
    return f"{_COUNT_PREFIX}{gpu}"


def counted_gpu(cap: CapKey) -> str | None:
    """The GPU type of a count cap; None for the other caps."""
    if not cap.startswith(_COUNT_PREFIX):
        return None
    return cap.removeprefix(_COUNT_PREFIX)


def add_count_minimum(
    solver: Any, limit: CountLimit, held: Sequence[Any], rented: Sequence[Sequence[Any]], buckets: int
) -> None:
    """Model constraint 9's minimum on ``solver``: ``limit.min_count`` GPUs of its type, every mode
    counted at the plan's busiest hour (as its fleet lines count them): held GPUs alone without
    on-demand options; else held + rented ones in one bucket the solver picks (``k_gb``)."""
    if not rented:
        solver.Add(sum(held) >= limit.min_count, f"count_min[{limit.gpu}]")
        return
    at = [solver.BoolVar(f"count_min_at[{limit.gpu},{b}]") for b in range(buckets)]
    solver.Add(sum(at) == 1, f"count_min_hour[{limit.gpu}]")
    for b, flag in enumerate(at):
        in_use = sum(held) + sum(d[b] for d in rented)
        solver.Add(in_use >= limit.min_count * flag, f"count_min[{limit.gpu},{b}]")
