"""What makes a quote a bid document, in words of the chosen language: the header block (수신,
견적번호, 공급자 …), the headline 제안 금액, the budget against the spend and its 잔액, the bill of
materials as Korean bids write it (품명 / 규격 / 단위 / 수량 / 단가 / 금액 / 비고), the internal
sourcing annex, and the planner's facts worded from their structure (fleets, sensitivity) rather
than copied from its English sentences. Shared by the HTML page and the workbook."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from pricebook.schema import Money
from report.data import (
    Alternative,
    AlternativeKind,
    ApiRow,
    Bom,
    BomKind,
    BomLine,
    BuyVsRentRow,
    QuoteCap,
    QuoteData,
    SensitivityRow,
    WorkloadRow,
)
from report.formatting import mix_change, money, number, percent
from report.labels import Language, label
from report.text import DASH

BOM_COLUMNS = ("bom_item", "bom_spec", "bom_unit", "quantity", "unit_price", "amount", "bom_remarks")
"""The customer's bill of materials, in the order Korean bids print it."""
SOURCING_COLUMNS = ("bom_item", "bom_spec", "offer", "provider", "price_label", "unit_price", "quantity")
"""The internal sourcing of each bill-of-materials line (an annex of the internal quote)."""
HEADER_FIELDS = ("customer", "quote_number", "quoted_on", "validity", "delivery", "payment_terms")
SUPPLIER_FIELDS = (
    "supplier_name",
    "supplier_registration_number",
    "supplier_representative",
    "supplier_address",
    "supplier_contact",
)
UNITS = {
    BomKind.GPU: "unit.each",
    BomKind.HOST: "unit.server",
    BomKind.NETWORKING: "unit.set",
    BomKind.INSTALLATION: "unit.lot",
    BomKind.STORAGE: "unit.lot",
    BomKind.ROUNDING: "unit.lot",
}


def header_rows(quote: QuoteData, lang: Language) -> list[tuple[str, str]]:
    """(label, value) of the header block's filled fields; the quote date always."""
    values = quote.header.model_dump() | {"quoted_on": quote.quoted_on.isoformat()}
    return [(label(f"header.{k}", lang), values[k]) for k in HEADER_FIELDS if values[k]]


def supplier_rows(quote: QuoteData, lang: Language) -> list[tuple[str, str]]:
    values = quote.header.model_dump()
    return [(label(f"header.{k}", lang), values[k]) for k in SUPPLIER_FIELDS if values[k]]


def proposed_amount(quote: QuoteData) -> Money | None:
    """제안 금액: what the bid asks the customer to pay for what it supplies — the bill of
    materials' total (with VAT when the request asked for it), or the horizon TCO when nothing is
    bought (a rental fleet)."""
    if quote.schedule is not None:
        return _staged_amount(quote)
    if quote.bom is not None and quote.bom.lines:
        return quote.bom.total
    return quote.economics.horizon_tco if quote.economics is not None else None


def _staged_amount(quote: QuoteData) -> Money | None:
    """A multi-year plan's: its horizon total on the measure it minimised (NPV, else nominal)."""
    econ = quote.economics
    if econ is None:
        return None
    d = econ.discounting
    return d.npv if d is not None and d.objective == "npv" else econ.horizon_tco


def proposed_label(quote: QuoteData, lang: Language) -> str:
    """제안 금액's label: with VAT when the BOM adds it; a multi-year plan's names its measure."""
    s = quote.schedule
    if s is not None:
        d = quote.economics.discounting if quote.economics is not None else None
        key = "proposed_amount_npv" if d is not None and d.objective == "npv" else "proposed_amount_nominal"
        return label(key, lang).format(years=len(s.years))
    vat = quote.bom is not None and quote.bom.vat is not None
    return label("proposed_amount_vat" if vat else "proposed_amount", lang)


def proposed_beside(quote: QuoteData, lang: Language) -> str:
    """A multi-year plan's other measure beside 제안 금액 (nominal beside the NPV, or the NPV
    beside the nominal) and the nominal total with VAT when the request adds VAT; "" otherwise."""
    econ = quote.economics
    if quote.schedule is None or econ is None:
        return ""
    d = econ.discounting
    if d is not None and d.objective == "npv":
        out = [label("proposed_beside.nominal", lang).format(amount=money(econ.horizon_tco, lang))]
    elif d is not None:
        rate = percent(d.rate, 2)
        out = [label("proposed_beside.npv", lang).format(rate=rate, amount=money(d.npv, lang))]
    else:
        out = []
    if econ.vat is not None:
        out.append(
            label("proposed_beside.vat", lang).format(amount=money(econ.vat.horizon_tco_with_vat, lang))
        )
    return " · ".join(out)


def recommended_fleet(quote: QuoteData, lang: Language) -> str:
    """The summary's fleet: a multi-year plan's is the one in service in its last year (each
    year's is in the schedule)."""
    text = fleet_text(quote.fleet_summary, lang)
    s = quote.schedule
    if s is None:
        return text
    return label("sched.final_fleet", lang).format(
        fleet=text, year=label("year_n", lang).format(n=s.years[-1].year)
    )


def year_subtotal(bom: Bom, year: int) -> Money:
    """The purchases of one plan year (a multi-year plan's BOM)."""
    amounts = [b.amount for b in bom.lines if b.year == year]
    return Money(amount=sum((a.amount for a in amounts), Decimal(0)), currency=amounts[0].currency)


def proposed_note(quote: QuoteData, lang: Language) -> str:
    return label("proposed_note" if quote.schedule is None else "proposed_note_staged", lang)


@dataclass(frozen=True, slots=True)
class BudgetUse:
    budget: Money
    spend: Money
    """The capex (with its VAT when the budget includes VAT)."""
    remaining: Money
    """잔액: budget − spend (negative: over budget)."""


def budget_use(quote: QuoteData) -> BudgetUse | None:
    if quote.capex_budget is None or quote.bom is None:
        return None
    spend = quote.bom.total if quote.budget_includes_vat else quote.bom.supply_amount
    budget = quote.capex_budget
    remaining = Money(amount=budget.amount - spend.amount, currency=budget.currency)
    return BudgetUse(budget=budget, spend=spend, remaining=remaining)


def bom_item(line: BomLine, lang: Language) -> str:
    """품명: what the line is."""
    return label(f"item.{line.kind.value}", lang)


def bom_spec(line: BomLine, lang: Language) -> str:
    """규격: the product (its catalogue name), or what a request-priced line covers."""
    if line.kind is BomKind.INSTALLATION:
        key = "spec.installation_servers" if line.covers_servers else "spec.installation_gpus"
        return label(key, lang).format(count=line.covers)
    if line.kind is BomKind.STORAGE:
        return label("spec.storage", lang).format(tb=number(line.covers))
    if line.kind is BomKind.ROUNDING:
        return label("spec.rounding", lang)
    if line.kind is BomKind.NETWORKING:
        fabric = line.item_id.rsplit(".", 1)[-1]
        return label("spec.networking", lang).format(fabric=fabric, server=line.server_name)
    return line.item_name


def bom_unit(line: BomLine, lang: Language) -> str:
    return label(UNITS[line.kind], lang)


def bom_remarks(line: BomLine, lang: Language) -> str:
    """비고: owned hardware (no price paid) and the rounding line's reason."""
    if line.owned:
        return label("remark.owned", lang)
    bought = label("remark.bought_year", lang).format(n=line.year) if line.year else ""
    if line.kind is BomKind.ROUNDING:
        return ", ".join(w for w in (bought, label("remark.rounding", lang)) if w)
    return bought


MODE_WORD = re.compile(r"\b(buy|reserved|on_demand|lease)\b")


def fleet_text(summary: str, lang: Language) -> str:
    """A planner's fleet (``h100-nvl ×3 buy + l40s ×1 on_demand``) with its modes in ``lang``."""
    if lang is Language.EN:
        return summary
    text = MODE_WORD.sub(
        lambda m: label("fleet.lease" if m.group(1) == "lease" else f"mode.{m.group(1)}", lang), summary
    )
    return text.replace(" owned", " " + label("owned", lang)).replace(
        "GPU-h/month", label("gpu_h_month", lang)
    )


def alternative_reason(alt: Alternative, currency: str, lang: Language) -> str:
    """Why an alternative is infeasible or not comparable: the planner's words in English; in
    another language the caps a single-GPU fleet exceeds worded from the catalogue, else the
    verdict alone (the words are in the internal annex)."""
    if lang is Language.EN:
        return alt.reason
    if alt.binding_caps:
        return "; ".join(cap_shortfall(c, currency, lang) for c in alt.binding_caps)
    key = "reason.no_api_price" if alt.kind is AlternativeKind.API else "reason.see_annex"
    return label(key, lang)


COUNT_CAP = "count:"
CAP_UNITS = {"power_cap_kw": ("unit.kw", 1), "rack_units_cap": ("unit.rack_units", 0)}


def cap_shortfall(c: QuoteCap, currency: str, lang: Language) -> str:
    """E.g. 구매 예산 300,000,000원 초과 (필요 359,115,654원, h100-nvl ×6 구매)."""
    gpu = c.cap.removeprefix(COUNT_CAP) if c.cap.startswith(COUNT_CAP) else None

    def amount(value: float) -> str:
        if gpu is not None:
            return label("unit.gpus", lang).format(n=number(value))
        if c.cap in CAP_UNITS:
            key, digits = CAP_UNITS[c.cap]
            return label(key, lang).format(n=number(value, digits))
        places = 0 if currency == "KRW" else 2
        return money(Money(amount=Decimal(f"{value:.{places}f}"), currency=currency), lang)

    name = label("cap.count", lang).format(gpu=gpu) if gpu is not None else label(f"cap.{c.cap}", lang)
    needed = amount(c.needed) if c.proven else label("cap.at_most", lang).format(amount=amount(c.needed))
    fleet = label("cap.fleet", lang).format(fleet=fleet_text(c.fleet, lang)) if c.fleet else ""
    return label("cap.shortfall", lang).format(cap=name, limit=amount(c.limit), needed=needed, fleet=fleet)


PARAMETERS = {
    "price (in the plan)": "param.price_in_plan",
    "price (strongest alternative not in the plan)": "param.price_alternative",
    "total demand (all workloads)": "param.demand",
}


MIX_CHANGES = "where the optimal mix changes"
"""What the planner adds to a price row's parameter (``price (in the plan): where …``)."""


def sensitivity_parameter(row: SensitivityRow, lang: Language) -> str:
    head, _, tail = row.parameter.partition(": ")
    key = PARAMETERS.get(head)
    if key is None or lang is Language.EN or tail not in ("", MIX_CHANGES):
        return row.parameter
    return label(key, lang) + (label("param.mix_changes", lang) if tail else "")


def _side(change: float | None, last_same: float | None, fleet: str, word: str, lang: Language) -> str:
    where = mix_change(change, last_same)
    if where is None:
        return label("sens.unchanged", lang).format(side=label(word, lang))
    return label("sens.changes", lang).format(side=label(word, lang), at=where, fleet=fleet_text(fleet, lang))


def sensitivity_explanation(quote: QuoteData, row: SensitivityRow, lang: Language) -> str:
    """The row in words: today's fleet, then where each direction changes it and to what."""
    if lang is Language.EN:
        return row.explanation
    today = label("sens.today", lang).format(fleet=fleet_text(quote.fleet_summary, lang))
    down = _side(row.change_down_fraction, row.last_same_down_fraction, row.plan_below, "sens.down", lang)
    up = _side(row.change_up_fraction, row.last_same_up_fraction, row.plan_above, "sens.up", lang)
    return f"{today} {down} {up}"


def summary_text(quote: QuoteData, lang: Language, money_text: str) -> str:
    """The summary paragraph: the planner's in English; in another language worded from the
    quote's facts (``money_text``: the horizon TCO as the summary writes it)."""
    if lang is Language.EN or quote.economics is None:
        return quote.summary if lang is Language.EN else label("no_plan", lang)
    return label("summary_sentence", lang).format(
        fleet=fleet_text(quote.fleet_summary, lang), months=quote.horizon_months, tco=money_text
    )


def buy_verdict(row: BuyVsRentRow, lang: Language) -> str:
    """Buy or rent at the plan's utilisation: the planner's words in English; in another language
    from the break-even utilisations (buying pays off above the lower one)."""
    if lang is Language.EN:
        return row.verdict
    points = [p for p in (row.break_even_on_demand, row.break_even_reserved) if p is not None]
    if row.plan_utilization is None or not points:
        return DASH
    return label("verdict.buy" if row.plan_utilization >= min(points) else "verdict.rent", lang)


def api_verdict(row: ApiRow, lang: Language) -> str:
    if lang is Language.EN:
        return row.verdict
    api, own = row.api_per_million_tokens, row.self_hosted_per_million_tokens
    if api is None or own is None:
        return DASH
    return label("verdict.api" if api.amount < own.amount else "verdict.self", lang)


def not_served(row: WorkloadRow, lang: Language) -> str:
    """An unserved workload's cell: the planner's reason in English; another language says it
    is not served (the reason is in the internal annex)."""
    text = label("not_served", lang)
    return f"{text}: {row.note}" if lang is Language.EN and row.note else text


def sensitivity_subject(row: SensitivityRow, lang: Language) -> str:
    """A GPU id as it is; total demand in ``lang``."""
    return label("subject.demand", lang) if row.subject == "demand" else row.subject


BITS = re.compile(r"\d+")


def precision_text(precision: str, lang: Language) -> str:
    """``fp8`` → ``FP8`` (English) or ``FP8(8비트)`` (Korean)."""
    if not precision:
        return ""
    bits = BITS.search(precision)
    name = precision.upper()
    return label("precision_bits", lang).format(name=name, bits=bits.group() if bits else "")
