"""Currency conversion with the dated rate (or an override), and VAT, in exact Decimal arithmetic."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricebook.errors import UnknownEntryError
from pricebook.loader import load_default
from pricebook.money import ConvertedMoney, add_vat, convert, find_rate, on_vat_basis, remove_vat
from pricebook.schema import FxRate, Money, Pricebook

MAN_WON = 10_000  # 만 원


@pytest.fixture(scope="module")
def book() -> Pricebook:
    return load_default()


def _krw(amount: int | str) -> Money:
    return Money(amount=Decimal(amount), currency="KRW")


def _usd(amount: int | str) -> Money:
    return Money(amount=Decimal(amount), currency="USD")


def test_the_book_rate_is_the_reuters_pair_rounded_to_two_decimals(book: Pricebook) -> None:
    # Reuters 2025-12-31: an H200 at "about $27,000 (about 3,900만원)".
    implied = Decimal(3_900 * MAN_WON) / Decimal(27_000)
    rate, entry = find_rate(book, "USD", "KRW")
    assert rate == implied.quantize(Decimal("0.01"))
    assert entry.as_of == dt.date(2025, 12, 31)


def test_krw_to_usd_divides_by_the_book_rate(book: Pricebook) -> None:
    rate, _ = find_rate(book, "USD", "KRW")
    # Seed 000's RTX PRO 6000 at 1,500만 원.
    converted = convert(_krw(1_500 * MAN_WON), "USD", book)
    assert converted.currency == "USD"
    assert converted.amount == Decimal(15_000_000) / rate
    assert converted.amount == pytest.approx(Decimal("10384.647"), abs=Decimal("0.001"))
    assert converted.original == _krw(15_000_000)
    assert converted.rate_as_of == dt.date(2025, 12, 31)
    assert "Reuters" in converted.rate_source


def test_usd_to_krw_is_exact(book: Pricebook) -> None:
    rate, _ = find_rate(book, "USD", "KRW")
    converted = convert(_usd("3.5"), "KRW", book)  # seed 001's cheapest H200 hour
    assert converted.amount == Decimal("3.5") * rate
    assert converted.amount == Decimal("5055.54")  # 3.5 × 1444.44, exactly


def test_round_trip_is_the_identity_to_many_digits(book: Pricebook) -> None:
    there = convert(_usd("31905.00"), "KRW", book)
    back = convert(there, "USD", book)
    assert abs(back.amount - Decimal("31905")) < Decimal("1e-20")


def test_the_same_currency_is_not_converted(book: Pricebook) -> None:
    same = convert(_krw(42_000_000), "KRW", book)
    assert same.amount == Decimal(42_000_000)
    assert same.rate == 1
    assert same.describe() == "42000000 KRW (no conversion)"


def test_a_request_override_replaces_the_book_rate(book: Pricebook) -> None:
    converted = convert(_krw(1_400_000), "USD", book, override=1400.0)
    assert converted.amount == Decimal(1000)
    assert converted.rate_source == "request override"
    assert "1 USD = 1400 KRW" in converted.describe()


def test_an_explicit_rate_entry_can_be_given_instead_of_a_book() -> None:
    rate = FxRate(base="KRW", quote="USD", rate=0.0007, source="test quote", as_of=dt.date(2026, 1, 1))
    converted = convert(_usd(7), "KRW", rate)
    assert converted.amount == Decimal(7) / Decimal("0.0007")
    assert converted.amount == Decimal(10_000)


def test_description_names_the_rate_and_its_date(book: Pricebook) -> None:
    text = convert(_krw(50_000_000), "USD", book).describe()
    assert text.startswith("50000000 KRW → 34615.49")
    assert "1 USD = 1444.44 KRW" in text
    assert "2025-12-31" in text


def test_a_missing_rate_is_an_unknown_entry() -> None:
    with pytest.raises(UnknownEntryError, match="fx rate"):
        convert(_usd(1), "KRW", ())


def test_converted_money_is_still_money(book: Pricebook) -> None:
    converted = convert(_usd(1), "KRW", book)
    assert isinstance(converted, ConvertedMoney)
    assert isinstance(converted, Money)


def test_vat_add_and_remove_are_exact_inverses() -> None:
    # Seed 000's H200 at 5,000만 원 before VAT, Korean VAT 10 %.
    with_vat = add_vat(_krw(50_000_000), 0.10)
    assert with_vat == _krw(55_000_000)
    assert remove_vat(with_vat, 0.10) == _krw(50_000_000)


def test_vat_basis_only_changes_what_needs_changing() -> None:
    price = _krw(11_000)
    assert on_vat_basis(price, includes_vat=True, want_vat=True, vat_rate=0.1) == price
    assert on_vat_basis(price, includes_vat=True, want_vat=False, vat_rate=0.1) == _krw(10_000)
    assert on_vat_basis(price, includes_vat=False, want_vat=True, vat_rate=0.1) == _krw(12_100)


amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("1e12"), places=2, allow_nan=False)


@given(amount=amounts, vat=st.sampled_from([0.0, 0.05, 0.1, 0.2]))
def test_removing_added_vat_gives_the_amount_back_exactly(amount: Decimal, vat: float) -> None:
    price = Money(amount=amount, currency="KRW")
    assert remove_vat(add_vat(price, vat), vat) == price


@given(amount=amounts)
def test_usd_krw_round_trip_keeps_the_amount(amount: Decimal) -> None:
    rate = FxRate(base="USD", quote="KRW", rate=1444.44, source="test rate", as_of=dt.date(2025, 12, 31))
    back = convert(convert(Money(amount=amount, currency="USD"), "KRW", rate), "USD", rate)
    assert back.amount == amount
