"""A multi-year plan's quote figures over the whole horizon, copied from the planner's schedule
and yearly cash (``PlanResult.schedule``, ``cash_flows``, ``vat``): the bill of materials as each
year's purchases (every tranche's GPUs, hosts, fabric and installation at its year's price, with
a 단수 조정 line per year where rounded unit prices leave the lines off that year's capex), and
the economics — TCO (nominal, Σ the years), capex (every purchase of the horizon), the residual
value, the VAT of every payment and the present value. The answer's cost lines are the final
year's alone: nothing here reads them."""

from __future__ import annotations

from decimal import Decimal

from pricebook.schema import Money, Pricebook
from report.bom_lines import (
    REQUEST_SUPPLIED,
    bom_line,
    gpu_name,
    network_item,
    rounding_line,
    server_name,
    storage_line,
)
from report.data import Bom, BomKind, BomLine, Economics, OpexMonthly
from solver.analysis.tco import add_money
from solver.domain import Storage
from solver.planner.results import PlanResult
from solver.planner.schedule import StagedSchedule, TrancheLine


def capex_by_year(s: StagedSchedule) -> tuple[tuple[int, Money], ...]:
    """(year, capex) of each year that buys something."""
    return tuple((y.year, y.capex) for y in s.years if y.capex.amount)


def _origin(result: PlanResult, offer_id: str) -> tuple[str, str, str]:
    line = next((f for f in result.fleet if f.offer_id == offer_id), None)
    if line is None:
        return offer_id, "", ""
    return offer_id, line.provider, line.price_label.value if line.price_label is not None else ""


def _tranche_lines(t: TrancheLine, result: PlanResult, book: Pricebook) -> list[BomLine]:
    origin = _origin(result, t.offer_id)
    request = (REQUEST_SUPPLIED,) * 3
    lines = [
        bom_line(
            BomKind.GPU,
            t.gpu,
            gpu_name(book, t.gpu),
            total=t.gpu_purchase,
            quantity=t.gpus,
            origin=origin,
        )
    ]
    if t.host_purchase.amount and t.server_id is not None:
        name = server_name(book, t.server_id)
        lines.append(
            bom_line(
                BomKind.HOST, t.server_id, name, total=t.host_purchase, quantity=t.servers, origin=origin
            )
        )
    if t.networking.amount and t.server_id is not None:
        kind, item_id, name, amount, quantity, source = network_item(
            book, t.server_id, t.networking, t.servers
        )
        line = bom_line(kind, item_id, name, total=amount, quantity=quantity, origin=source)
        lines.append(line.model_copy(update={"server_name": server_name(book, t.server_id)}))
    if t.installation.amount:
        covers = t.servers or t.gpus
        name = f"installation / integration of {covers} {'servers' if t.servers else 'GPUs'}"
        line = bom_line(
            BomKind.INSTALLATION, t.offer_id, name, total=t.installation, quantity=1, origin=request
        )
        lines.append(line.model_copy(update={"covers": covers, "covers_servers": bool(t.servers)}))
    return [b.model_copy(update={"year": t.year}) for b in lines]


def staged_bom(result: PlanResult, book: Pricebook, storage: Storage | None = None) -> Bom | None:
    """Each year's purchases in year order, closed to that year's capex; supply = Σ the years'
    capex, VAT on it at the request's rate (the planner's ``vat.capex_vat``). Rentals change
    from year to year: they are in the schedule (each year's opex), not listed here."""
    s = result.schedule
    if s is None or result.tco is None:
        return None
    currency = result.currency
    lines: list[BomLine] = []
    for y in s.years:
        year = [b for t in s.tranches if t.year == y.year for b in _tranche_lines(t, result, book)]
        stored = storage_line(storage, result.tco.total.storage) if y.year == 1 else None
        if stored is not None:  # the request's storage, bought with the first year
            year.append(stored.model_copy(update={"year": 1}))
        rounding = rounding_line(y.capex, add_money((b.amount for b in year), currency))
        if rounding is not None:
            year.append(rounding.model_copy(update={"year": y.year}))
        lines += year
    supply = add_money((b.amount for b in lines), currency)
    vat = result.vat.capex_vat if result.vat is not None else None
    return Bom(
        lines=tuple(lines),
        rentals=(),
        supply_amount=supply,
        vat_rate=result.vat.rate if result.vat is not None else 0.0,
        vat=vat,
        total=add_money((supply, vat), currency) if vat is not None else supply,
    )


def staged_economics(result: PlanResult, single: Economics | None) -> Economics | None:
    """``single`` (the final year's economics) with the horizon's figures: the nominal TCO, the
    capex of every purchase, the tranches' residual value; no monthly breakdown or components
    (they change from year to year: the schedule has each year's opex)."""
    s = result.schedule
    if s is None or single is None:
        return single
    capex = Money(amount=sum((y.capex.amount for y in s.years), Decimal(0)), currency=s.nominal_tco.currency)
    zero = Money(amount=Decimal(0) * capex.amount, currency=capex.currency)
    return single.model_copy(
        update={
            "horizon_tco": s.nominal_tco,
            "capex": capex,
            "residual_value": s.residual,
            "depreciation_monthly": zero,
            "opex": OpexMonthly(
                support=zero, power=zero, colocation=zero, reserved=zero, on_demand=zero, total=zero
            ),
            "components": (),
            "book_depreciation": (),
            "lease_by_year": (),
        }
    )
