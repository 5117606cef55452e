"""Amounts of money as people write them in a scenario: ``300000000``, ``"300,000,000"``,
``"3.5억"``, ``"3억 5천만"``, ``"5천만 원"``, ``"1,500만 KRW"``.

Korean units: 조 = 10^12, 억 = 10^8, 만 = 10^4 (each once, largest first), and inside each of
them 천 = 1,000, 백 = 100, 십 = 10 (largest first); a unit without a number before it counts
one (``"천만"`` = 10,000,000). ``원`` means KRW. Anything else is an ``AmountError`` saying which
forms are accepted.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

ACCEPTED_FORMS = "'300000000', '300,000,000', '3억', '3억 5천만', '3.5억 원' or '500000000 KRW'"

_BIG = {"조": Decimal(10**12), "억": Decimal(10**8), "만": Decimal(10**4)}
_SMALL = {"천": Decimal(1000), "백": Decimal(100), "십": Decimal(10)}
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_TOKEN = re.compile(rf"\s*({_NUMBER}|[조억만천백십])")
_CURRENCY = re.compile(r"^(?P<amount>.*?)\s*(?P<currency>원|[A-Za-z]{3})?$")


class AmountError(ValueError):
    """Text that is not an amount of money in any accepted form."""


def parse_amount(value: object) -> tuple[Decimal, str | None, bool]:
    """``value`` (a YAML number or text) as (amount, currency code or None, written with Korean
    units). The currency is the one written after the amount (``원`` = KRW), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise AmountError(f"money must look like {ACCEPTED_FORMS}, got {value!r}")
    if isinstance(value, int):
        return Decimal(value), None, False
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AmountError(f"must be a finite amount, got {value!r}")
        return Decimal(repr(value)), None, False
    match = _CURRENCY.match(value.strip())
    assert match is not None  # the pattern matches any text
    written, code = match["amount"], match["currency"]
    currency = None if code is None else ("KRW" if code == "원" else code.upper())
    korean = any(unit in written for unit in (*_BIG, *_SMALL))
    amount = _korean_amount(written, value) if korean else _plain_amount(written, value)
    return amount, currency, korean


def _plain_amount(written: str, original: str) -> Decimal:
    text = written.strip()
    if not re.fullmatch(_NUMBER, text):
        raise AmountError(f"money must look like {ACCEPTED_FORMS}, got {original!r}")
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only decimals
        raise AmountError(f"money must look like {ACCEPTED_FORMS}, got {original!r}") from exc


def _korean_amount(written: str, original: str) -> Decimal:
    """Sum of the groups of ``written`` (module docstring), refusing units out of order."""
    tokens = _tokens(written.strip(), original)
    total, section = Decimal(0), Decimal(0)
    number: Decimal | None = None
    last_big, last_small = Decimal("Infinity"), Decimal("Infinity")
    for token in tokens:
        if token in _SMALL:
            unit = _SMALL[token]
            _in_order(unit < last_small, original)
            section += (Decimal(1) if number is None else number) * unit
            number, last_small = None, unit
        elif token in _BIG:
            unit = _BIG[token]
            _in_order(unit < last_big, original)
            part = section + (number if number is not None else Decimal(0))
            total += (part if part else Decimal(1)) * unit
            section, number, last_big, last_small = Decimal(0), None, unit, Decimal("Infinity")
        else:
            _in_order(number is None, original)
            number = Decimal(token.replace(",", ""))
    return total + section + (number if number is not None else Decimal(0))


def _tokens(written: str, original: str) -> list[str]:
    """Numbers and units, spaces allowed between them (not inside a number)."""
    tokens, position = [], 0
    while position < len(written):
        match = _TOKEN.match(written, position)
        if match is None:
            raise AmountError(f"money must look like {ACCEPTED_FORMS}, got {original!r}")
        tokens.append(match[1])
        position = match.end()
    return tokens


def _in_order(ok: bool, original: str) -> None:
    if not ok:
        raise AmountError(
            f"money must look like {ACCEPTED_FORMS} (Korean units largest first, each once: 조, 억, "
            f"만; 천, 백, 십 within each), got {original!r}"
        )


def canonical(amount: Decimal, currency: str) -> str:
    """The form scenario files and answers use: ``'350000000 KRW'``."""
    normalized = amount.normalize()
    return f"{format(normalized, 'f') if not normalized.is_zero() else '0'} {currency}"
