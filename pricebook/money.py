"""Currency conversion with the pricebook's dated FX rate, and VAT on/off.

Amounts stay ``Decimal``: a conversion multiplies (or divides) by the rate written in the book,
``Decimal(str(rate))``, so ``15,000,000 KRW`` at ``1,444.44`` is exactly ``10384.61...`` USD to 28
significant digits, and USD → KRW is exact. Every result says which rate was used and where it came
from (``ConvertedMoney.rate`` / ``rate_source`` / ``rate_as_of``), so a response can show it.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pydantic import Field

from pricebook.errors import UnknownEntryError
from pricebook.schema import Currency, FxRate, Money, Pricebook, SiteAssumptions

OVERRIDE_SOURCE = "request override"

FxSource = Pricebook | SiteAssumptions | FxRate | tuple[FxRate, ...] | list[FxRate]
"""Where rates come from: a whole book, its site assumptions, or the rates themselves."""


class ConvertedMoney(Money):
    """A ``Money`` that remembers how it was obtained: the original amount and the rate used."""

    original: Money
    rate: Decimal = Field(gt=0)
    """Units of ``currency`` per unit of ``original.currency`` (1 when no conversion was needed)."""
    rate_source: str
    rate_as_of: dt.date | None = None

    def describe(self) -> str:
        """Trace for a response: ``15000000 KRW → 10384.6473 USD at 1 USD = 1444.44 KRW (source, date)``."""
        if self.original.currency == self.currency:
            return f"{_plain(self.amount)} {self.currency} (no conversion)"
        usd_krw = self.rate if self.original.currency == "USD" else 1 / self.rate
        dated = f", {self.rate_as_of.isoformat()}" if self.rate_as_of else ""
        before = f"{_plain(self.original.amount)} {self.original.currency}"
        after = f"{_plain(self.amount)} {self.currency}"
        return f"{before} → {after} at 1 USD = {_plain(usd_krw)} KRW ({self.rate_source}{dated})"


def _plain(value: Decimal) -> str:
    """At most 4 decimals, never an exponent (display only; amounts keep full precision)."""
    shown = value if value == value.to_integral_value() else value.quantize(Decimal("0.0001"))
    return format(shown.normalize(), "f")


def _rates(fx: FxSource) -> tuple[FxRate, ...]:
    if isinstance(fx, Pricebook):
        return fx.site.fx_rates
    if isinstance(fx, SiteAssumptions):
        return fx.fx_rates
    if isinstance(fx, FxRate):
        return (fx,)
    return tuple(fx)


def find_rate(fx: FxSource, base: Currency, quote: Currency) -> tuple[Decimal, FxRate]:
    """Units of ``quote`` per unit of ``base``, and the book entry it came from (inverted if needed)."""
    for rate in _rates(fx):
        if rate.base == base and rate.quote == quote:
            return Decimal(str(rate.rate)), rate
        if rate.base == quote and rate.quote == base:
            return 1 / Decimal(str(rate.rate)), rate
    raise UnknownEntryError("fx rate", f"{base}->{quote}")


def usd_krw_override(rate: float, as_of: dt.date | None = None) -> FxRate:
    """An FX rate given by a request (``PricebookOverrides.fx_usd_krw``)."""
    return FxRate(
        base="USD",
        quote="KRW",
        rate=rate,
        source=OVERRIDE_SOURCE,
        as_of=as_of or dt.datetime.now(dt.UTC).date(),
    )


def convert(
    money: Money,
    to_currency: Currency,
    fx: FxSource,
    *,
    override: FxRate | float | None = None,
) -> ConvertedMoney:
    """``money`` in ``to_currency`` using the dated rate of ``fx`` (or ``override``).

    ``override`` as a float is a USD→KRW rate (KRW per USD), as requests give it.
    Raises ``UnknownEntryError`` if no rate links the two currencies.
    """
    if money.currency == to_currency:
        return ConvertedMoney(
            amount=money.amount,
            currency=to_currency,
            original=Money(amount=money.amount, currency=money.currency),
            rate=Decimal(1),
            rate_source="same currency",
        )
    if isinstance(override, float | int):
        override = usd_krw_override(float(override))
    rate, entry = find_rate(override if override is not None else fx, money.currency, to_currency)
    return ConvertedMoney(
        amount=money.amount * rate,
        currency=to_currency,
        original=Money(amount=money.amount, currency=money.currency),
        rate=rate,
        rate_source=entry.source,
        rate_as_of=entry.as_of,
    )


def add_vat(money: Money, vat_rate: float) -> Money:
    """The VAT-inclusive amount of a pre-VAT price (``vat_rate`` 0.10 = 10 %)."""
    return Money(amount=money.amount * (1 + Decimal(str(vat_rate))), currency=money.currency)


def remove_vat(money: Money, vat_rate: float) -> Money:
    """The pre-VAT amount of a VAT-inclusive price."""
    return Money(amount=money.amount / (1 + Decimal(str(vat_rate))), currency=money.currency)


def on_vat_basis(money: Money, includes_vat: bool, want_vat: bool, vat_rate: float) -> Money:
    """Bring a price that does (or does not) include VAT onto the basis the caller wants."""
    if includes_vat == want_vat:
        return money
    return add_vat(money, vat_rate) if want_vat else remove_vat(money, vat_rate)
