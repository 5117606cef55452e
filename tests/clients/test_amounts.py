"""Amounts as people write them (issue 30 item 12): the expected values are the Korean numerals
worked out by hand (억 = 10^8, 만 = 10^4, 천 = 10^3)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clients.amounts import AmountError, canonical, parse_amount


@pytest.mark.parametrize(
    ("text", "amount", "currency", "korean"),
    [
        (300000000, 300_000_000, None, False),
        ("300,000,000", 300_000_000, None, False),
        ("3.99 USD", Decimal("3.99"), "USD", False),
        ("500000000 krw", 500_000_000, "KRW", False),
        ("3억", 300_000_000, None, True),
        ("3억 5천만", 350_000_000, None, True),
        ("3억5천만원", 350_000_000, "KRW", True),
        ("3억 5,000만 원", 350_000_000, "KRW", True),
        ("3.5억", 350_000_000, None, True),
        ("5천만", 50_000_000, None, True),
        ("천만", 10_000_000, None, True),
        ("1,500만 KRW", 15_000_000, "KRW", True),
        ("1조 2억 3만 4천", 1_000_200_034_000, None, True),
        ("2천5백만", 25_000_000, None, True),
        ("5천3만", 50_030_000, None, True),
        ("만천", 11_000, None, True),
    ],
)
def test_accepted_forms(text: object, amount: int | Decimal, currency: str | None, korean: bool) -> None:
    assert parse_amount(text) == (Decimal(amount), currency, korean)


@pytest.mark.parametrize(
    "text",
    [
        "3억억",
        "5천만 3억",
        "3 5억",
        "3,5억",
        "three hundred",
        "",
        "3억x",
        "1,50만",
        "천천",
        True,
        None,
        float("inf"),
    ],
)
def test_malformed_amounts_are_refused(text: object) -> None:
    with pytest.raises(AmountError):
        parse_amount(text)


def test_canonical_form() -> None:
    assert canonical(Decimal("3.5E+8"), "KRW") == "350000000 KRW"
    assert canonical(Decimal("3.990"), "USD") == "3.99 USD"


@given(eok=st.integers(0, 9999), man=st.integers(0, 9999))
def test_eok_and_man_add_up(eok: int, man: int) -> None:
    if eok == 0 and man == 0:
        return
    text = " ".join(part for part in (f"{eok}억" if eok else "", f"{man}만" if man else "") if part)
    assert parse_amount(text)[0] == eok * 10**8 + man * 10**4
