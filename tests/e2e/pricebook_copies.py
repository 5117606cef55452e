"""Copies of the embedded pricebook with one offer's price changed, for tests of saved plans against
a pricebook that moved on."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import yaml

from pricebook import loader

PRICEBOOK_DATA = Path(loader.__file__).resolve().parent / "data"


def with_offer_price(tmp_path: Path, offer_id: str, factor: Decimal) -> tuple[Path, Decimal]:
    """A copy of the embedded pricebook with one offer's price times ``factor``; the old price."""
    book = tmp_path / "pricebook"
    shutil.copytree(PRICEBOOK_DATA, book)
    offers_file = book / "offers.yaml"
    data = yaml.safe_load(offers_file.read_text(encoding="utf-8"))
    (offer,) = [o for o in data["offers"] if o["id"] == offer_id]
    amount, currency = str(offer["price"]).split()
    offer["price"] = f"{(Decimal(amount) * factor).normalize():f} {currency}"
    offers_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return book, Decimal(amount)
