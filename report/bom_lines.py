"""The bill of materials' lines as the quote writes them: a purchase amount ÷ its quantity as a
unit price to the minor unit, the fabric named by kind, and the 단수 조정 line closing rounded unit
prices to the capex they must add up to."""

from __future__ import annotations

from pricebook import catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import Money, Pricebook, label_rank
from report.data import BomKind, BomLine
from solver.analysis.tco import to_money
from solver.domain import Storage


def _unit_price(amount: Money, quantity: int) -> Money:
    """A line's amount ÷ its quantity, to the currency's minor unit."""
    return to_money(float(amount.amount / quantity), amount.currency) if quantity else amount


def _times(unit: Money, quantity: int) -> Money:
    return Money(amount=unit.amount * quantity, currency=unit.currency)


REQUEST_SUPPLIED = "request"
"""Offer, provider and label of a BOM line priced by the request itself (installation, storage)."""


def bom_line(
    kind: BomKind,
    item_id: str,
    item_name: str,
    *,
    total: Money,
    quantity: int,
    origin: tuple[str, str, str],
    owned: bool = False,
) -> BomLine:
    unit = _unit_price(total, quantity)
    offer_id, provider, label = origin
    return BomLine(
        kind=kind,
        item_id=item_id,
        item_name=item_name,
        offer_id=offer_id,
        provider=provider,
        price_label=label,
        unit_price=unit,
        quantity=quantity,
        amount=_times(unit, quantity),
        owned=owned,
    )


def network_item(
    book: Pricebook, server_id: str, amount: Money, servers: int
) -> tuple[BomKind, str, str, Money, int, tuple[str, str, str]]:
    """The fabric of ``servers`` servers: named by kind, labelled by its least reliable component."""
    spec = catalog.server(book, server_id)
    fabric = catalog.network_fabric(book.site, spec)
    kind = fabric.kind if fabric is not None else "fabric"
    parts = catalog.network_parts(fabric, spec) if fabric is not None else ()
    label = max((p.label for p in parts), key=label_rank).value if parts else ""
    name = f"{kind} scale-out fabric per {server_name(book, server_id)}"
    return (
        BomKind.NETWORKING,
        f"{server_id}.{kind}",
        name,
        amount,
        servers,
        (f"site.network_fabrics.{kind}", "", label),
    )


def rounding_line(capex: Money, lines_sum: Money) -> BomLine | None:
    """What the lines' rounded unit prices leave between their sum and the plan's capex."""
    difference = Money(amount=capex.amount - lines_sum.amount, currency=capex.currency)
    if difference.amount == 0:
        return None
    name = "unit prices rounded to the minor unit"
    origin = ("", "", "derived")
    return bom_line(BomKind.ROUNDING, "rounding", name, total=difference, quantity=1, origin=origin)


def gpu_name(book: Pricebook, gpu_id: str) -> str:
    try:
        return catalog.gpu(book, gpu_id).name
    except UnknownEntryError:
        return gpu_id


def server_name(book: Pricebook, server_id: str) -> str:
    try:
        return catalog.server(book, server_id).name
    except UnknownEntryError:
        return server_id


def storage_line(storage: Storage | None, amount: Money) -> BomLine | None:
    """The request's storage bought up front (storage rented per TB-month is in the cash flow)."""
    if storage is None or amount.amount == 0:
        return None
    request = (REQUEST_SUPPLIED, REQUEST_SUPPLIED, REQUEST_SUPPLIED)
    name = f"storage, {storage.capacity_tb:g} TB"
    line = bom_line(BomKind.STORAGE, "storage", name, total=amount, quantity=1, origin=request)
    return line.model_copy(update={"covers": round(storage.capacity_tb)})
