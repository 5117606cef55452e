"""How numbers read in a quote: money with thousands separators (KRW as won, and 억/만 원 in Korean
summaries), percentages, plain numbers. Dates are ISO (``date.isoformat()``) everywhere."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_EVEN, Decimal

from pricebook.schema import Money
from report.labels import Language
from report.text import DASH

MAN = 10_000
EOK = 100_000_000


def _grouped(amount: Decimal, places: int) -> str:
    return f"{amount:,.{places}f}"


def money(value: Money | None, lang: Language) -> str:
    """``247,591,848원`` / ``KRW 247,591,848`` / ``$46,807.56`` (``–`` when absent)."""
    if value is None:
        return DASH
    amount = value.amount
    if value.currency == "KRW":
        text = _grouped(amount, 0 if amount == amount.to_integral_value() else 2)
        return f"{text}원" if lang is Language.KO else f"KRW {text}"
    text = _grouped(amount, max(2, -min(0, int(amount.as_tuple().exponent))))
    if lang is Language.KO:
        return f"{text} USD"
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def korean_units(amount: Decimal) -> str:
    """Won in 억 and 만: 247,591,848 → ``2억 4,759만 원`` (to the nearest 만 원)."""
    sign = "-" if amount < 0 else ""
    whole = int(abs(amount).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    if whole < MAN:
        return f"{sign}{whole:,}원"
    man_total = (whole + MAN // 2) // MAN
    eok, man = divmod(man_total, EOK // MAN)
    parts = ([f"{eok:,}억"] if eok else []) + ([f"{man:,}만"] if man else [])
    return f"{sign}{' '.join(parts)} 원"


def money_summary(value: Money | None, lang: Language) -> str:
    """A summary figure: in Korean, KRW as 억/만 원 with the exact amount beside it."""
    if value is not None and lang is Language.KO and value.currency == "KRW" and abs(value.amount) >= MAN:
        return f"{korean_units(value.amount)} ({money(value, lang)})"
    return money(value, lang)


def percent(value: float | None, places: int = 1) -> str:
    return DASH if value is None else f"{value * 100:.{places}f}%"


def signed_percent(value: float | None, places: int = 1) -> str:
    return DASH if value is None else f"{value * 100:+.{places}f}%"


def number(value: float | None, places: int = 0) -> str:
    return DASH if value is None else f"{value:,.{places}f}"


BRACKET_TOLERANCE = 0.02 + 1e-9
"""The sensitivity search narrows a change to 2 percentage points (``solver.analysis.whatif``); a
wider bracket means it stopped first, and the change is somewhere inside it."""


def mix_change(change: float | None, last_same: float | None) -> str | None:
    """Where the mix changes: ``+36.7%``, or ``+0.0% … +300.0%`` when the search only bracketed it
    (None when no change was found in the range searched)."""
    if change is None:
        return None
    if last_same is not None and abs(change - last_same) > BRACKET_TOLERANCE:
        return f"{signed_percent(last_same)} … {signed_percent(change)}"
    return signed_percent(change)


def compact_json(text: str, width: int = 100) -> str:
    """A JSON document indented as before but with each list of plain values (an hourly profile,
    a list of GPU ids) on one line when it fits in ``width`` characters; text that is not JSON
    is returned as it is."""
    try:
        document = json.loads(text)
    except ValueError:
        return text
    return _compact(document, 0, width)


def _compact(value: object, indent: int, width: int) -> str:
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_compact(v, indent + 2, width)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if all(not isinstance(v, dict | list) for v in value) and len(flat) + indent <= width:
            return flat
        return "[\n" + ",\n".join(f"{inner}{_compact(v, indent + 2, width)}" for v in value) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)
