"""The parts of the quote page that make it a bid: the header block and the headline 제안 금액,
the budget facts, the quotation details (품명 / 규격 / 단위 / 수량 / 단가 / 금액 / 비고), and the
internal annexes (sourcing of each line; the planner's own words)."""

from __future__ import annotations

from report import bid
from report.data import QuoteData
from report.formatting import money, money_summary, number, percent
from report.html_base import e, facts, note, section, table
from report.labels import COLUMNS, Language, label
from report.row_text import cost_label


def header_block(quote: QuoteData, lang: Language) -> str:
    """견적서 heading: the quote's facts and the supplier's, side by side, then 제안 금액."""
    quote_facts = facts(((k, e(v), "") for k, v in bid.header_rows(quote, lang)), "header-facts")
    supplier = bid.supplier_rows(quote, lang)
    supplier_facts = (
        f'<div class="supplier"><h3>{e(label("supplier", lang))}</h3>'
        + facts((k, e(v), "") for k, v in supplier)
        + "</div>"
        if supplier
        else ""
    )
    head = f'<div class="header-block">{quote_facts}{supplier_facts}</div>'
    amount = bid.proposed_amount(quote)
    if amount is None:
        return head
    beside = bid.proposed_beside(quote, lang)
    other = f' <span data-field="proposed-beside">({e(beside)})</span>' if beside else ""
    return (
        head
        + f'<p class="headline"><span>{e(bid.proposed_label(quote, lang))}</span> '
        + f'<strong data-field="proposed-amount">{e(money_summary(amount, lang))}</strong>{other}</p>'
        + note(bid.proposed_note(quote, lang))
    )


def budget_facts(quote: QuoteData, lang: Language) -> list[tuple[str, str, str]]:
    """The budget, the spend against it and 잔액; power and rack units of the on-site fleet."""
    out: list[tuple[str, str, str]] = []
    use = bid.budget_use(quote)
    if use is not None:
        budget_key = "budget_vat" if quote.budget_includes_vat else "budget"
        out += [
            (label(budget_key, lang), e(money_summary(use.budget, lang)), "budget"),
            (label("spend", lang), e(money_summary(use.spend, lang)), "spend"),
            (label("remaining", lang), e(money_summary(use.remaining, lang)), "remaining"),
        ]
    if quote.power_kw is not None and quote.power_kw > 0:
        out.append((label("power_kw", lang), e(number(quote.power_kw, 1)), "power-kw"))
    if quote.rack_units is not None and quote.rack_units > 0:
        out.append((label("rack_units", lang), e(number(quote.rack_units)), "rack-units"))
    return out


def bom_section(quote: QuoteData, lang: Language) -> str:
    """견적 내역: what is bought, with supply amount, VAT (when asked) and total; rentals by month."""
    bom = quote.bom
    if bom is None:
        return section("bom", "bom", note(label("no_bom", lang)), lang)
    rows: list[list[str | tuple[str, str]]] = []
    for i, b in enumerate(bom.lines):
        rows.append(
            [
                e(bid.bom_item(b, lang)),
                e(bid.bom_spec(b, lang)),
                e(bid.bom_unit(b, lang)),
                (e(b.quantity), "bom-qty"),
                (e(money(b.unit_price, lang)), "bom-unit"),
                (e(money(b.amount, lang)), "bom-amount"),
                e(bid.bom_remarks(b, lang)),
            ]
        )
        if b.year and (i + 1 == len(bom.lines) or bom.lines[i + 1].year != b.year):
            subtotal = money(bid.year_subtotal(bom, b.year), lang)
            name = label("bom.year_subtotal", lang).format(n=b.year)
            rows.append(["", "", "", "", e(name), (e(subtotal), f"bom-year-{b.year}"), ""])
    pad = ["", "", "", ""]
    foot = [[*pad, e(label("supply_amount", lang)), (e(money(bom.supply_amount, lang)), "bom-supply"), ""]]
    if bom.vat is not None:
        vat_label = f"{label('vat', lang)} ({percent(bom.vat_rate, 0)})"
        foot += [
            [*pad, e(vat_label), (e(money(bom.vat, lang)), "bom-vat"), ""],
            [*pad, e(label("total", lang)), (e(money(bom.total, lang)), "bom-total"), ""],
        ]
    headers = [label(k, lang) for k in bid.BOM_COLUMNS]
    body = table(headers, rows, "bom-table", foot) if rows else note(label("no_purchases", lang))
    if bom.rentals:
        rental_rows = [
            [
                e(r.gpu_id),
                e(label(f"mode.{r.mode}", lang)),
                e(r.gpus),
                e(money(r.price_per_gpu_hour, lang)),
                e(number(r.busy_gpu_hours_per_month)),
                (e(money(r.monthly_amount, lang)), "rental-monthly"),
            ]
            for r in bom.rentals
        ]
        rental_headers = [label(k, lang) for k in COLUMNS.rentals if k not in ("offer", "provider")]
        body += f"<h3>{e(label('rentals', lang))}</h3>" + table(rental_headers, rental_rows, "rentals-table")
    if quote.schedule is not None:
        body += note(label("sched.rentals", lang))
    return section("bom", "bom", body, lang)


def sourcing_annex(quote: QuoteData, lang: Language) -> str:
    """Internal: the offer, provider and price label behind each line (never shown to the customer)."""
    bom = quote.bom
    rows = [
        [
            e(bid.bom_item(b, lang)),
            e(bid.bom_spec(b, lang)),
            e(b.offer_id),
            e(b.provider),
            e(b.price_label),
            e(money(b.unit_price, lang)),
            e(b.quantity),
        ]
        for b in (bom.lines if bom is not None else ())
    ]
    rows += [
        [
            e(label("rentals", lang)),
            e(r.gpu_id),
            e(r.offer_id),
            e(r.provider),
            e(r.price_label),
            "",
            e(r.gpus),
        ]
        for r in (bom.rentals if bom is not None else ())
    ]
    headers = [label(k, lang) for k in bid.SOURCING_COLUMNS]
    return section("sourcing", "sourcing", table(headers, rows, "sourcing-table"), lang)


def planner_notes_annex(quote: QuoteData, lang: Language) -> str:
    """Internal, in a language other than the planner's: what it wrote, as it wrote it."""
    notes: list[tuple[str, str]] = [(label("summary", lang), quote.summary)]
    notes += [(label(f"kind.{a.kind.value}", lang) + f" {a.name}", a.reason) for a in quote.alternatives]
    if quote.economics is not None:
        notes += [
            (cost_label("comp", c.name, quote.site, lang), c.explanation) for c in quote.economics.components
        ]
    notes += [(b.gpu_id, b.verdict) for b in quote.buy_vs_rent]
    notes += [(a.workload, a.verdict) for a in quote.api]
    notes += [(w.name, w.note) for w in quote.workloads]
    notes += [(f"{s.subject}: {s.parameter}", s.explanation) for s in quote.sensitivity]
    notes += [(label("warnings", lang), w) for w in quote.warnings]
    items = "".join(f"<li><b>{e(k)}</b> {e(v)}</li>" for k, v in notes if v)
    body = note(label("planner_notes_intro", lang)) + f'<ul lang="en">{items}</ul>'
    return section("planner_notes", "planner-notes", body, lang)


def embeddings_table(quote: QuoteData, lang: Language) -> str:
    """Embedding workloads in embeddings/s, input tok/s and cost per 1M input tokens."""
    if not quote.embeddings:
        return ""
    rows = [
        [
            e(r.name),
            (e(number(r.embeddings_per_s, 1)), "embeddings-per-s"),
            (e(number(r.input_tok_s)), "embeddings-input-tok-s"),
            e(number(r.input_tokens)),
            (e(money(r.per_million_input_tokens, lang)), "embeddings-per-million-input"),
        ]
        for r in quote.embeddings
    ]
    keys = ("workload", "embeddings_per_s", "input_tok_s", "input_tokens", "per_million_input")
    return f"<h3>{e(label('embeddings', lang))}</h3>" + table(
        [label(k, lang) for k in keys], rows, "embeddings-table"
    )
