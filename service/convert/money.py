"""Money and decimal text: the ``Money`` message carries a plain decimal string (no exponent) and an
ISO currency code."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from google.protobuf.message import Message

from api.fleetplan.v1 import common_pb2
from pricebook.schema import Money


def money_to_dict(message: common_pb2.Money) -> dict[str, Any]:
    """A proto ``Money`` in the shape of the domain's ``Money`` (validated later)."""
    # An empty amount stays empty, so validation refuses it (it was read as 0: a zero budget).
    return {"amount": message.amount.strip(), "currency": message.currency_code.strip().upper()}


def decimal_text(amount: Decimal | float | int) -> str:
    """A plain decimal string (no exponent), as the Money contract requires."""
    value = (
        amount
        if isinstance(amount, Decimal)
        else Decimal(repr(float(amount)))
        if isinstance(amount, float)
        else Decimal(amount)
    )
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def money_to_proto(value: Money | None) -> common_pb2.Money | None:
    if value is None:
        return None
    return common_pb2.Money(amount=decimal_text(value.amount), currency_code=value.currency)


def set_money(target: Message, name: str, value: Money | None) -> None:
    """Set the ``Money`` field ``name`` of ``target`` unless ``value`` is None (the field stays unset)."""
    if value is not None:
        getattr(target, name).CopyFrom(money_to_proto(value))


def amount_to_proto(amount: float | Decimal, currency: str, *, places: int | None = None) -> common_pb2.Money:
    """A float amount in ``currency``, rounded to the currency's minor unit (KRW 0, USD 2) by default."""
    digits = places if places is not None else (0 if currency == "KRW" else 2)
    quantum = Decimal(1).scaleb(-digits)
    value = Decimal(str(amount)).quantize(quantum)
    return common_pb2.Money(amount=decimal_text(value), currency_code=currency)
