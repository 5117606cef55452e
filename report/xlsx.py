"""The quote as an XLSX workbook (XlsxWriter): sheets Summary, Alternatives, BOM, CashFlow, Workloads,
Assumptions, Sensitivity. Numbers are numbers with currency formats; the BOM's amounts, supply
amount, VAT and total, and the cash flow's rows and totals, are formulas (each written with its
value cached, so a reader without a calculation engine — openpyxl — sees the same numbers), and
the summary's TCO and capex refer to them: change a quantity and the totals move."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Sequence
from typing import Any

import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from pricebook.schema import Money
from report.cashflow import cash_flow, money_sum
from report.data import QuoteData
from report.formatting import mix_change, money_summary, signed_percent
from report.html import outside_requirement, why_it_loses
from report.labels import COLUMNS, Language, label

SHEETS = ("Summary", "Alternatives", "BOM", "CashFlow", "Workloads", "Assumptions", "Sensitivity")
MINOR_DIGITS = {"KRW": 0, "USD": 2}


class _Formats:
    def __init__(self, book: Workbook, currency: str, lang: Language) -> None:
        if currency == "KRW":
            amount = '#,##0"원"' if lang is Language.KO else '"KRW "#,##0'
            unit = '#,##0.00"원"' if lang is Language.KO else '"KRW "#,##0.00'
        else:
            amount = '#,##0.00" USD"' if lang is Language.KO else '"$"#,##0.00'
            unit = '#,##0.0000" USD"' if lang is Language.KO else '"$"#,##0.0000'
        self.money = book.add_format({"num_format": amount})
        self.unit = book.add_format({"num_format": unit})
        self.total = book.add_format({"num_format": amount, "bold": True, "top": 1})
        self.head = book.add_format({"bold": True, "bg_color": "#E8EEF4", "border": 1, "text_wrap": True})
        self.title = book.add_format({"bold": True, "font_size": 14, "font_color": "#1F4E79"})
        self.percent = book.add_format({"num_format": "0.0%"})
        self.number = book.add_format({"num_format": "#,##0.0"})
        self.bold = book.add_format({"bold": True})
        self.wrap = book.add_format({"text_wrap": True, "valign": "top"})


def _amount(value: Money | None) -> float | None:
    return float(value.amount) if value is not None else None


def _row(sheet: Worksheet, row: int, values: Sequence[Any], fmt: Format | None = None) -> None:
    for col, value in enumerate(values):
        if value is None:
            sheet.write_blank(row, col, None, fmt)
        elif isinstance(value, bool):
            sheet.write_boolean(row, col, value, fmt)
        elif isinstance(value, int | float):
            sheet.write_number(row, col, value, fmt)
        else:
            sheet.write_string(row, col, str(value), fmt)


def _header(sheet: Worksheet, row: int, keys: Sequence[str], f: _Formats, lang: Language) -> None:
    _row(sheet, row, [label(k, lang) if k else "" for k in keys], f.head)


def _bom(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> str | None:
    """The BOM; returns the cell of the supply amount (the capex) or None without purchases."""
    sheet.write_string(0, 0, label("bom", lang), f.title)
    bom = quote.bom
    if bom is None:
        sheet.write_string(2, 0, label("no_bom", lang))
        return None
    _header(
        sheet,
        2,
        COLUMNS.bom,
        f,
        lang,
    )
    first = 3
    for i, b in enumerate(bom.lines):
        r = first + i
        kind = label(f"kind.{b.kind.value}", lang) + (f" ({label('owned', lang)})" if b.owned else "")
        _row(sheet, r, [kind, b.item_name, b.offer_id, b.provider, b.price_label])
        sheet.write_number(r, 5, float(b.unit_price.amount), f.money)
        sheet.write_number(r, 6, b.quantity)
        sheet.write_formula(r, 7, f"=F{r + 1}*G{r + 1}", f.money, float(b.amount.amount))
    last = first + len(bom.lines) - 1
    supply_row, vat_row, total_row, rate_row = last + 2, last + 3, last + 4, last + 5
    digits = MINOR_DIGITS[quote.currency]
    lines_sum = f"SUM(H{first + 1}:H{last + 1})" if bom.lines else "0"
    rate = f"$H${rate_row + 1}"
    supply = f"={lines_sum}"
    vat = f"=ROUND(H{supply_row + 1}*{rate},{digits})"
    total = f"=H{supply_row + 1}+H{vat_row + 1}"
    rows = [(supply_row, "supply_amount", supply, bom.supply_amount)]
    if bom.vat is not None:  # VAT only when the request asked for it
        rows += [(vat_row, "vat", vat, bom.vat), (total_row, "total", total, bom.total)]
        sheet.write_string(rate_row, 6, label("vat_rate", lang))
        sheet.write_number(rate_row, 7, bom.vat_rate, f.percent)
    for r, key, formula, value in rows:
        sheet.write_string(r, 6, label(key, lang), f.bold)
        sheet.write_formula(r, 7, formula, f.total, float(value.amount))
    _rentals(sheet, rate_row + 2, quote, f, lang)
    sheet.set_column(0, 0, 16)
    sheet.set_column(1, 4, 22)
    sheet.set_column(5, 7, 18)
    return f"BOM!$H${supply_row + 1}"


def _rentals(sheet: Worksheet, row: int, quote: QuoteData, f: _Formats, lang: Language) -> None:
    if quote.bom is None or not quote.bom.rentals:
        return
    sheet.write_string(row, 0, label("rentals", lang), f.bold)
    keys = COLUMNS.rentals
    _header(sheet, row + 1, keys, f, lang)
    for i, r in enumerate(quote.bom.rentals):
        _row(sheet, row + 2 + i, [r.gpu_id, r.mode, r.offer_id, r.provider, r.gpus])
        sheet.write(row + 2 + i, 5, _amount(r.price_per_gpu_hour), f.unit)
        sheet.write_number(row + 2 + i, 6, r.busy_gpu_hours_per_month, f.number)
        sheet.write_number(row + 2 + i, 7, float(r.monthly_amount.amount), f.money)


def _cash_flow(
    sheet: Worksheet, quote: QuoteData, capex_cell: str | None, f: _Formats, lang: Language
) -> str | None:
    """Rows × years with formulas; returns the grand-total cell (the horizon TCO)."""
    sheet.write_string(0, 0, label("cashflow", lang), f.title)
    econ = quote.economics
    if econ is None:
        sheet.write_string(2, 0, label("no_bom", lang))
        return None
    flow = cash_flow(econ, quote.horizon_months)
    years = len(flow.years)
    _row(
        sheet,
        2,
        [
            "",
            label("monthly", lang),
            *(f"{label('year', lang)} {y}" for y in flow.years),
            label("total", lang),
        ],
        f.head,
    )
    _row(sheet, 3, [label("months", lang), None, *flow.months])
    monthly = econ.opex.by_row()
    first = 4
    for i, (row, amounts) in enumerate(flow.rows):
        r = first + i
        sheet.write_string(r, 0, label(f"cf.{row}", lang))
        for y, amount in enumerate(amounts):
            col = 2 + y
            value = float(amount.amount)
            if row in monthly:
                sheet.write_formula(r, col, f"=$B{r + 1}*{xl_rowcol_to_cell(3, col)}", f.money, value)
            elif row == "capex" and y == 0 and capex_cell is not None:
                sheet.write_formula(r, col, f"={capex_cell}", f.money, value)
            else:
                sheet.write_number(r, col, value, f.money)
        if row in monthly:
            sheet.write_number(r, 1, float(monthly[row].amount), f.money)
        span = f"{xl_rowcol_to_cell(r, 2)}:{xl_rowcol_to_cell(r, 1 + years)}"
        sheet.write_formula(r, 2 + years, f"=SUM({span})", f.money, float(money_sum(amounts).amount))
    last = first + len(flow.rows) - 1
    total_row = last + 1
    sheet.write_string(total_row, 0, label("cf.total", lang), f.bold)
    for y, year_total in enumerate((*flow.totals, flow.total)):
        col = 2 + y
        span = f"{xl_rowcol_to_cell(first, col)}:{xl_rowcol_to_cell(last, col)}"
        sheet.write_formula(total_row, col, f"=SUM({span})", f.total, float(year_total.amount))
    sheet.set_column(0, 0, 22)
    sheet.set_column(1, 2 + years, 16)
    return f"CashFlow!{xl_rowcol_to_cell(total_row, 2 + years, row_abs=True, col_abs=True)}"


def _summary(
    sheet: Worksheet, quote: QuoteData, cells: dict[str, str | None], f: _Formats, lang: Language
) -> None:
    sheet.write_string(0, 0, label("title", lang), f.title)
    sheet.write_string(1, 0, f"{quote.title} · {quote.quoted_on.isoformat()}")
    rows: list[tuple[str, Any, Format | None]] = [
        ("status", label(f"status.{quote.status}", lang), None),
        ("quoted_on", quote.quoted_on.isoformat(), None),
        ("recommended_fleet", quote.fleet_summary, None),
    ]
    econ = quote.economics
    if econ is not None:
        rows += [
            ("horizon_tco", (cells["tco"], econ.horizon_tco), f.total),
            ("capex", (cells["capex"], econ.capex), f.total),
            ("opex_monthly", float(econ.opex.total.amount), f.money),
            *(
                [("tco_with_vat", float(econ.vat.horizon_tco_with_vat.amount), f.money)]
                if econ.vat is not None
                else []
            ),
            ("horizon", quote.horizon_months, None),
        ]
        if quote.saving is not None:
            rows.append(("saving", float(quote.saving.amount), f.money))
    else:
        rows.append(("diagnosis", " ".join(quote.diagnosis) or quote.summary, f.wrap))
    for i, (key, value, fmt) in enumerate(rows):
        r = 3 + i
        sheet.write_string(r, 0, label(key, lang), f.bold)
        if isinstance(value, tuple):
            cell, amount = value
            if cell is not None:
                sheet.write_formula(r, 1, f"={cell}", fmt, float(amount.amount))
            else:
                sheet.write_number(r, 1, float(amount.amount), fmt)
            sheet.write_string(r, 2, money_summary(amount, lang))
        else:
            _row(sheet, r, [None, value], fmt)
            sheet.write_string(r, 0, label(key, lang), f.bold)
    r = 4 + len(rows)
    sheet.write_string(r, 0, label("vat_included" if quote.includes_vat else "vat_excluded", lang))
    sheet.write_string(r + 1, 0, quote.summary, f.wrap)
    sheet.set_column(0, 0, 34)
    sheet.set_column(1, 1, 22)
    sheet.set_column(2, 2, 40)


def _alternatives(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    _header(sheet, 0, COLUMNS.alternatives, f, lang)
    for i, a in enumerate(quote.shown_alternatives()):
        name = label(f"kind.{a.kind.value}", lang) + (f" ({a.name})" if a.name else "")
        _row(sheet, 1 + i, [name, label("yes" if a.feasible else "no", lang)])
        sheet.write(1 + i, 2, _amount(a.horizon_tco), f.money)
        sheet.write(1 + i, 3, _amount(a.capex), f.money)
        why = outside_requirement(quote, a, lang) + why_it_loses(a, lang)
        _row(sheet, 1 + i, [None, None, None, None, a.gpus, a.fleet_summary, why])
    sheet.set_column(0, 0, 28)
    sheet.set_column(2, 3, 18)
    sheet.set_column(5, 6, 50)


def _workloads(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    keys = [
        "workload",
        "gpu",
        "tp_slice",
        "precision",
        "replicas",
        "ttft",
        "",
        "tpot",
        "",
        "per_user",
        "aggregate",
        "utilization",
    ]
    _header(sheet, 0, keys, f, lang)
    for i, w in enumerate(quote.workloads):
        gpu = w.gpu_id if w.served else f"{label('not_served', lang)}: {w.note}"
        tp = f"{w.tp}/{w.mig_slice}" if w.mig_slice else (w.tp or None)
        values = [w.name, gpu, tp, w.precision, w.replicas, w.ttft_p95_ms, w.ttft_target_ms, w.tpot_p95_ms]
        values += [w.tpot_target_ms, w.per_user_tok_s, w.aggregate_tok_s]
        _row(sheet, 1 + i, values)
        sheet.write(1 + i, 11, w.utilization, f.percent)
    r = len(quote.workloads) + 3
    sheet.write_string(r, 0, label("training", lang), f.bold)
    if not quote.training:
        sheet.write_string(r + 1, 0, label("no_training", lang))
    else:
        _header(
            sheet,
            r + 1,
            COLUMNS.training,
            f,
            lang,
        )
        for i, t in enumerate(quote.training):
            _row(
                sheet,
                r + 2 + i,
                [t.name, t.gpu_id, t.gpus, t.hours_per_run, t.runs_per_month, t.deadline_hours],
            )
            sheet.write(r + 2 + i, 6, _amount(t.cost_per_run), f.money)
    sheet.set_column(0, 1, 20)
    sheet.set_column(2, 11, 12)


def _assumptions(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    _header(sheet, 0, COLUMNS.assumptions, f, lang)
    for i, a in enumerate(quote.assumptions):
        _row(
            sheet,
            1 + i,
            [a.kind.value, a.key, a.value, a.source, a.as_of.isoformat() if a.as_of else None, a.label],
        )
    r = len(quote.assumptions) + 2
    facts = [
        ("fx_rate", quote.fx_note),
        ("vat_rate", quote.vat_rate),
        ("depreciation", quote.depreciation_note),
        (
            "uncertainty",
            f"×{quote.uncertainty_low:.2f} – ×{quote.uncertainty_high:.2f}: {quote.uncertainty_note}",
        ),
        ("fleetplan_version", quote.provenance.fleetplan_version),
        ("pricebook_version", quote.provenance.pricebook_version),
        ("pricebook_hash", quote.provenance.pricebook_hash),
        ("calibration_date", quote.provenance.calibration_date),
        ("solver_status", quote.solver.status),
        ("solver_gap", quote.solver.gap),
        ("request", quote.provenance.request_json),
    ]
    for i, (key, value) in enumerate(facts):
        sheet.write_string(r + i, 0, label(key, lang), f.bold)
        _row(sheet, r + i, [None, value], f.percent if key == "vat_rate" else None)
        sheet.write_string(r + i, 0, label(key, lang), f.bold)
    sheet.set_column(0, 1, 26)
    sheet.set_column(2, 3, 48)


def _mix_change(
    sheet: Worksheet, cell: tuple[int, int], change: float | None, last_same: float | None, f: _Formats
) -> None:
    """A resolved change as a percentage; a bracket (the search stopped before narrowing it) as
    its text, as the page shows it."""
    text = mix_change(change, last_same)
    if text is None or text == signed_percent(change):
        sheet.write(*cell, change, f.percent)
    else:
        sheet.write_string(*cell, text)


def _sensitivity(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    _header(sheet, 0, COLUMNS.sensitivity, f, lang)
    if not quote.sensitivity:
        sheet.write_string(1, 0, label("no_sensitivity", lang))
    for i, s in enumerate(quote.sensitivity):
        _row(sheet, 1 + i, [s.subject, s.parameter])
        _mix_change(sheet, (1 + i, 2), s.change_down_fraction, s.last_same_down_fraction, f)
        _mix_change(sheet, (1 + i, 3), s.change_up_fraction, s.last_same_up_fraction, f)
        sheet.write_string(1 + i, 4, s.explanation)
    if quote.frontier is not None:
        r = len(quote.sensitivity) + 3
        sheet.write_string(r, 0, label("frontier", lang), f.bold)
        _header(sheet, r + 1, COLUMNS.frontier, f, lang)
        for i, p in enumerate(quote.frontier.points):
            _row(sheet, r + 2 + i, [p.value, p.status])
            sheet.write(r + 2 + i, 2, _amount(p.horizon_tco), f.money)
            _row(sheet, r + 2 + i, [None, None, None, p.fleet_summary, p.pareto_optimal])
    sheet.set_column(0, 3, 20)
    sheet.set_column(4, 4, 80)


def render_xlsx(quote: QuoteData, lang: Language) -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    created = dt.datetime.combine(quote.quoted_on, dt.time(0, 0), tzinfo=dt.UTC)
    book.set_properties({"title": quote.title or label("title", lang), "created": created})
    f = _Formats(book, quote.currency, lang)
    sheets = {name: book.add_worksheet(name) for name in SHEETS}
    capex = _bom(sheets["BOM"], quote, f, lang)
    tco = _cash_flow(sheets["CashFlow"], quote, capex, f, lang)
    _summary(sheets["Summary"], quote, {"capex": capex, "tco": tco}, f, lang)
    _alternatives(sheets["Alternatives"], quote, f, lang)
    _workloads(sheets["Workloads"], quote, f, lang)
    _assumptions(sheets["Assumptions"], quote, f, lang)
    _sensitivity(sheets["Sensitivity"], quote, f, lang)
    book.close()
    return buffer.getvalue()
