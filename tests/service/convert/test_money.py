"""Money text: plain decimals (no exponent), amounts rounded to the currency's minor unit."""

from __future__ import annotations

from decimal import Decimal

import pytest

from service.convert.money import amount_to_proto, decimal_text, money_to_proto
from solver import domain


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (1234.5678, "USD", "1234.57"),
        (1234.5, "KRW", "1234"),
        (1235.5, "KRW", "1236"),
        (-0.001, "USD", "0"),
        (1e12, "KRW", "1000000000000"),
    ],
)
def test_amounts_round_to_the_currency_minor_unit(amount: float, currency: str, expected: str) -> None:
    money = amount_to_proto(amount, currency)
    assert (money.amount, money.currency_code) == (expected, currency)


def test_decimal_text_never_uses_an_exponent() -> None:
    assert decimal_text(Decimal("1E+8")) == "100000000"
    assert decimal_text(Decimal("3.9900")) == "3.99"


def test_domain_money_keeps_its_exact_amount() -> None:
    money = money_to_proto(domain.money("500000000.10", "KRW"))
    assert money is not None
    assert (money.amount, money.currency_code) == ("500000000.1", "KRW")
    assert money_to_proto(None) is None
