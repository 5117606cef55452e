"""The quote as an XLSX workbook (XlsxWriter): sheets Summary, Alternatives, BOM, CashFlow, Workloads,
Assumptions, Sensitivity. Numbers are numbers with currency formats; the BOM's amounts, supply
amount, VAT and total, and the cash flow's rows and totals, are formulas (each written with its
value cached, so a reader without a calculation engine — openpyxl — sees the same numbers), and
the summary's TCO and capex refer to them: change a quantity and the totals move."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import xlsxwriter
from xlsxwriter.format import Format
from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from pricebook.schema import Money
from report import bid
from report.cashflow import ROWS, money_sum, quote_cash_flow
from report.data import Discounting, QuoteData
from report.disaggregation import has_disaggregation, write_disaggregation
from report.formatting import mix_change, money_summary, signed_percent
from report.html import outside_requirement, why_it_loses
from report.labels import COLUMNS, Language, label
from report.row_text import cost_label, group_cells, workload_deployments
from report.schedule_html import alternatives_note
from report.schedule_xlsx import opex_monthly_ref, schedule_sheet

SHEETS = ("Summary", "Alternatives", "BOM", "CashFlow", "Workloads", "Assumptions", "Sensitivity")
"""The sheets in order (English names; ``sheet_names`` gives them in the quote's language)."""


def sheet_names(lang: Language, *, internal: bool = False) -> dict[str, str]:
    """Sheet key → its name in ``lang``; the internal quote adds the sourcing sheet."""
    keys = (*SHEETS, "Sourcing") if internal else SHEETS
    return {key: label(f"sheet.{key}", lang) for key in keys}


def _with_schedule(names: dict[str, str], quote: QuoteData, lang: Language) -> dict[str, str]:
    """A multi-year plan's workbook adds its schedule sheet after the cash flow."""
    if quote.schedule is None:
        return names
    keys = list(names)
    keys.insert(keys.index("CashFlow") + 1, "Schedule")
    return {key: names.get(key) or label(f"sheet.{key}", lang) for key in keys}


MINOR_DIGITS = {"KRW": 0, "USD": 2}
A4 = 9
"""XlsxWriter's paper index of A4."""


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
        self.rate = book.add_format({"num_format": "0.000%"})
        self.number = book.add_format({"num_format": "#,##0.0"})
        self.whole = book.add_format({"num_format": "#,##0"})
        self.hundredths = book.add_format({"num_format": "#,##0.00"})
        self.number6 = book.add_format({"num_format": "0.000000"})
        self.bold = book.add_format({"bold": True})
        self.wrap = book.add_format({"text_wrap": True, "valign": "top"})

    def share(self, value: float) -> Format:
        """Replicas or GPUs as the page writes them (``report.text.replicas``): whole numbers as
        such, a share of a pool to two decimals."""
        rounded = round(value, 2)
        return self.whole if rounded == int(rounded) else self.hundredths


def _amount(value: Money | None) -> float | None:
    return float(value.amount) if value is not None else None


def _row(sheet: Worksheet, row: int, values: Sequence[Any], fmt: Format | None = None) -> None:
    """``values`` from column A on; None leaves a cell as it is (XlsxWriter skips an unformatted
    blank), so a row can be written in parts."""
    for col, value in enumerate(values):
        _cell(sheet, (row, col), value, fmt)


def _cell(sheet: Worksheet, at: tuple[int, int], value: Any, fmt: Format | None = None) -> None:
    row, col = at
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


@dataclass(frozen=True, slots=True)
class BomCells:
    """Where the BOM sheet keeps its totals (absolute references for other sheets' formulas)."""

    supply: str
    vat: str | None
    total: str
    support_per_year: str
    """An expression: Σ line amount × its support rate (no leading ``=``)."""
    residual: str
    """An expression: Σ line amount × its residual fraction."""
    years: dict[int, str] = field(default_factory=dict)
    """A multi-year plan's purchases per year: year → its subtotal cell."""


def _bom(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> BomCells | None:
    """견적 내역: 품명, 규격, 단위, 수량, 단가, 금액 (=단가×수량), 비고; supply amount, VAT (when the
    request asked for it; the rate is a cell) and total as formulas. Returns where they are."""
    sheet.write_string(0, 0, label("bom", lang), f.title)
    bom = quote.bom
    if bom is None:
        sheet.write_string(2, 0, label("no_bom", lang))
        return None
    _header(sheet, 2, bid.BOM_COLUMNS, f, lang)
    first = 3
    r = first
    subtotals: dict[int, int] = {}
    """A multi-year plan's year → the row of its purchases' subtotal."""
    year_first = first
    for i, b in enumerate(bom.lines):
        _row(sheet, r, [bid.bom_item(b, lang), bid.bom_spec(b, lang), bid.bom_unit(b, lang), b.quantity])
        sheet.write_number(r, 4, float(b.unit_price.amount), f.money)
        sheet.write_formula(r, 5, f"=E{r + 1}*D{r + 1}", f.money, float(b.amount.amount))
        sheet.write_string(r, 6, bid.bom_remarks(b, lang))
        if quote.schedule is None:  # a multi-year plan's support and value follow its tranches' years
            sheet.write_number(r, 7, b.support_rate, f.rate)
            sheet.write_number(r, 8, b.residual_fraction, f.rate)
        r += 1
        if b.year and (i + 1 == len(bom.lines) or bom.lines[i + 1].year != b.year):
            sheet.write_string(r, 4, label("bom.year_subtotal", lang).format(n=b.year), f.bold)
            amount = float(bid.year_subtotal(bom, b.year).amount)
            sheet.write_formula(r, 5, f"=SUM(F{year_first + 1}:F{r})", f.total, amount)
            subtotals[b.year] = r
            year_first = r + 1
            r += 1
    if quote.schedule is None:
        sheet.write_string(2, 7, label("support_rate", lang), f.head)
        sheet.write_string(2, 8, label("residual_fraction", lang), f.head)
    last = r - 1
    supply_row, vat_row, total_row, rate_row = last + 2, last + 3, last + 4, last + 5
    digits = MINOR_DIGITS[quote.currency]
    lines_sum = f"SUM(F{first + 1}:F{last + 1})" if bom.lines else "0"
    if subtotals:  # the years' subtotals, not their lines twice
        lines_sum = "+".join(f"F{row + 1}" for row in subtotals.values())
    rows = [(supply_row, "supply_amount", f"={lines_sum}", bom.supply_amount)]
    if bom.vat is not None:  # VAT only when the request asked for it
        vat = f"=ROUND(F{supply_row + 1}*$F${rate_row + 1},{digits})"
        rows += [
            (vat_row, "vat", vat, bom.vat),
            (total_row, "total", f"=F{supply_row + 1}+F{vat_row + 1}", bom.total),
        ]
        sheet.write_string(rate_row, 4, label("vat_rate", lang))
        sheet.write_number(rate_row, 5, bom.vat_rate, f.percent)
    for r, key, formula, value in rows:
        sheet.write_string(r, 4, label(key, lang), f.bold)
        sheet.write_formula(r, 5, formula, f.total, float(value.amount))
    _rentals(sheet, rate_row + 2, quote, f, lang)
    sheet.set_column(0, 0, 18)
    sheet.set_column(1, 1, 44)
    sheet.set_column(2, 3, 8)
    sheet.set_column(4, 5, 18)
    sheet.set_column(6, 6, 24)
    sheet.print_area(0, 0, rate_row, 6)
    sheet.fit_to_pages(1, 0)
    ref = _sheet_ref(sheet)
    amounts = f"{ref}$F${first + 1}:$F${last + 1}"
    per_line = {
        col: f"SUMPRODUCT({amounts},{ref}${col}${first + 1}:${col}${last + 1})" if bom.lines else "0"
        for col in ("H", "I")
    }
    return BomCells(
        supply=f"{ref}$F${supply_row + 1}",
        vat=f"{ref}$F${vat_row + 1}" if bom.vat is not None else None,
        total=f"{ref}$F${(total_row if bom.vat is not None else supply_row) + 1}",
        support_per_year=per_line["H"],
        residual=per_line["I"],
        years={year: f"{ref}$F${row + 1}" for year, row in subtotals.items()},
    )


def _sheet_ref(sheet: Worksheet) -> str:
    """``'견적 내역'!`` — a sheet's name as formulas on other sheets refer to it."""
    name: str = sheet.get_name()
    return "'" + name.replace("'", "''") + "'!"


def _rentals(sheet: Worksheet, row: int, quote: QuoteData, f: _Formats, lang: Language) -> None:
    if quote.bom is None or not quote.bom.rentals:
        return
    sheet.write_string(row, 0, label("rentals", lang), f.bold)
    keys = [k for k in COLUMNS.rentals if k not in ("offer", "provider")]
    _header(sheet, row + 1, keys, f, lang)
    for i, r in enumerate(quote.bom.rentals):
        _row(sheet, row + 2 + i, [r.gpu_id, label(f"mode.{r.mode}", lang), r.gpus])
        sheet.write(row + 2 + i, 3, _amount(r.price_per_gpu_hour), f.unit)
        sheet.write_number(row + 2 + i, 4, r.busy_gpu_hours_per_month, f.number)
        sheet.write_number(row + 2 + i, 5, float(r.monthly_amount.amount), f.money)


def _sourcing(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    """Internal: the offer, provider and price label behind each line."""
    _header(sheet, 0, bid.SOURCING_COLUMNS, f, lang)
    bom = quote.bom
    for i, b in enumerate(bom.lines if bom is not None else ()):
        _row(
            sheet,
            1 + i,
            [bid.bom_item(b, lang), bid.bom_spec(b, lang), b.offer_id, b.provider, b.price_label],
        )
        sheet.write_number(1 + i, 5, float(b.unit_price.amount), f.money)
        sheet.write_number(1 + i, 6, b.quantity)
    sheet.set_column(0, 6, 22)


def _cash_flow(
    sheet: Worksheet, quote: QuoteData, bom: BomCells | None, f: _Formats, lang: Language
) -> dict[str, str | None]:
    """Rows × years with formulas: the purchase is the BOM's supply amount, support per month
    and the residual value follow the BOM's lines (their rates), each monthly line × the months
    of each year; then the VAT over the horizon when asked. Returns where the summary's figures
    are (absolute references): ``tco`` (the grand total), ``opex`` (Σ the monthly column) and
    ``tco_with_vat`` (None without VAT)."""
    # a multi-year plan's purchases fall in several years: its capex row is the schedule's
    capex_cell = bom.supply if bom is not None and quote.schedule is None else None
    digits = MINOR_DIGITS[quote.currency]
    sheet.write_string(0, 0, label("cashflow", lang), f.title)
    econ = quote.economics
    if econ is None:
        sheet.write_string(2, 0, label("no_bom", lang))
        return {"tco": None, "opex": None, "tco_with_vat": None}
    flow = quote_cash_flow(quote)
    years = len(flow.years)
    # Leased hardware's support and market value are on no BOM line: those rows are then amounts
    # (and a multi-year plan's, whose lines are its tranches at their years' prices).
    rates_bom = bom if not econ.lease_by_year and quote.schedule is None else None
    _row(
        sheet,
        2,
        [
            "",
            label("monthly", lang),
            *(label("year_n", lang).format(n=y) for y in flow.years),
            label("total", lang),
        ],
        f.head,
    )
    _row(sheet, 3, [label("months", lang), None, *flow.months])
    monthly = econ.opex.by_row()
    first = 4
    for i, (row, amounts) in enumerate(flow.rows):
        r = first + i
        sheet.write_string(r, 0, cost_label("cf", row, quote.site, lang))
        for y, amount in enumerate(amounts):
            col = 2 + y
            value = float(amount.amount)
            if row in monthly:
                sheet.write_formula(r, col, f"=$B{r + 1}*{xl_rowcol_to_cell(3, col)}", f.money, value)
            elif (linked := _linked(row, y, (capex_cell, bom), flow.years, lang)) is not None:
                sheet.write_formula(r, col, linked, f.money, value)
            elif row == "residual" and y == years - 1 and rates_bom is not None and value:
                sheet.write_formula(r, col, f"=-ROUND({rates_bom.residual},{digits})", f.money, value)
            else:
                sheet.write_number(r, col, value, f.money)
        if row == "support" and rates_bom is not None and monthly[row].amount:
            support = f"=ROUND({rates_bom.support_per_year}/12,{digits})"
            sheet.write_formula(r, 1, support, f.money, float(monthly[row].amount))
        elif row in monthly:
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
    grand = xl_rowcol_to_cell(total_row, 2 + years)
    row_keys = [row for row, _ in flow.rows]
    residual_total = xl_rowcol_to_cell(first + row_keys.index("residual"), 2 + years)
    end = vat_end = _vat_block(sheet, total_row + 2, quote, (grand, residual_total), f=f, lang=lang)
    if econ.discounting is not None and quote.schedule is None:  # a multi-year plan's: its own sheet
        capex_row = first + ROWS.index("capex")
        end = _present_value_block(sheet, end + 2, econ.discounting, (capex_row, total_row), f=f, lang=lang)
    sheet.print_area(0, 0, end, 2 + years)
    sheet.set_landscape()
    sheet.fit_to_pages(1, 0)

    def ref(row: int, col: int) -> str:
        cell: str = xl_rowcol_to_cell(row, col, row_abs=True, col_abs=True)
        return _sheet_ref(sheet) + cell

    monthly_column = f"{ref(first, 1)}:{xl_rowcol_to_cell(last, 1, row_abs=True, col_abs=True)}"
    by_year = {  # a multi-year plan's rows per year, for its present value (the schedule sheet)
        f"{row}:{year}": ref(first + i, 2 + y)
        for i, (row, _) in enumerate(flow.rows)
        for y, year in enumerate(flow.years)
        if quote.schedule is not None
    }
    return {
        **by_year,
        "tco": ref(total_row, 2 + years),
        "opex": f"SUM({monthly_column})",
        "tco_with_vat": ref(vat_end - 1, 1) if econ.vat is not None else None,
    }


def _linked(
    row: str, y: int, purchase: tuple[str | None, BomCells | None], years: tuple[int, ...], lang: Language
) -> str | None:
    """The formula of a year's purchase or (a multi-year plan's) opex, None for a plain amount:
    one period's purchase is the BOM supply in year 1; a multi-year plan's is the BOM subtotal of
    that year's purchases, its opex the schedule's opex per month × the year's months."""
    single, bom = purchase
    if row == "opex":
        return f"={opex_monthly_ref(lang, y)}*{xl_rowcol_to_cell(3, 2 + y)}"
    if row != "capex":
        return None
    if single is not None:
        return f"={single}" if y == 0 else None
    cell = bom.years.get(years[y]) if bom is not None else None
    return f"={cell}" if cell is not None else None


def _present_value_block(
    sheet: Worksheet, r: int, d: Discounting, rows: tuple[int, int], *, f: _Formats, lang: Language
) -> int:
    """Year 0 (the purchase) … year Y of the rows above as formulas (year 1 less the purchase),
    each × (1 + rate)^−year from the rate cell, rounded to the minor unit; the NPV is their sum.
    Returns the last row written."""
    capex_row, total_row = rows
    digits = MINOR_DIGITS[d.npv.currency]
    sheet.write_string(r, 0, label("pv", lang).format(rate=f"{d.rate:.2%}"), f.bold)
    sheet.write_string(r + 1, 0, label("discount_rate", lang))
    sheet.write_number(r + 1, 1, d.rate, f.rate)
    rate = xl_rowcol_to_cell(r + 1, 1, row_abs=True, col_abs=True)
    heads = [
        label("year", lang),
        label("pv.nominal", lang),
        label("pv.factor", lang),
        label("pv.discounted", lang),
    ]
    _row(sheet, r + 2, heads, f.head)
    first = r + 3
    for i, y in enumerate(d.years):
        at = first + i
        column = 2 + max(0, y.year - 1)  # the cash-flow table's year columns start at C (year 1)
        if y.year == 0:
            nominal = f"={xl_rowcol_to_cell(capex_row, 2)}"
        elif y.year == 1:
            nominal = f"={xl_rowcol_to_cell(total_row, column)}-{xl_rowcol_to_cell(capex_row, column)}"
        else:
            nominal = f"={xl_rowcol_to_cell(total_row, column)}"
        sheet.write_number(at, 0, y.year)
        sheet.write_formula(at, 1, nominal, f.money, float(y.nominal.amount))
        sheet.write_formula(at, 2, f"=POWER(1+{rate},-A{at + 1})", f.number6, (1.0 + d.rate) ** -y.year)
        sheet.write_formula(
            at, 3, f"=ROUND(B{at + 1}*C{at + 1},{digits})", f.money, float(y.discounted.amount)
        )
    last = first + len(d.years) - 1
    npv_row = last + 1
    sheet.write_string(npv_row, 0, label("npv", lang), f.bold)
    sheet.write_formula(npv_row, 3, f"=SUM(D{first + 1}:D{last + 1})", f.total, float(d.npv.amount))
    return npv_row


def _vat_block(
    sheet: Worksheet, r: int, quote: QuoteData, totals: tuple[str, str], *, f: _Formats, lang: Language
) -> int:
    """When the request asks for VAT: supply (capex + opex × months = the horizon total without
    the residual credit), VAT at the rate (a cell), total, TCO incl. VAT — formulas of the rows
    above. Returns the last row written."""
    econ = quote.economics
    if econ is None or econ.vat is None:
        return r - 2
    grand, residual = totals
    v = econ.vat
    digits = MINOR_DIGITS[quote.currency]
    sheet.write_string(r, 0, label("vat_line", lang), f.bold)
    rows = [
        ("vat_supply", f"={grand}-{residual}", v.supply),
        ("vat", f"=ROUND(B{r + 2}*B{r + 6},{digits})", v.vat),
        ("total", f"=B{r + 2}+B{r + 3}", v.total),
        ("tco_with_vat", f"={grand}+B{r + 3}", v.horizon_tco_with_vat),
    ]
    for i, (key, formula, value) in enumerate(rows):
        sheet.write_string(r + 1 + i, 0, label(key, lang))
        sheet.write_formula(
            r + 1 + i, 1, formula, f.total if key == "tco_with_vat" else f.money, float(value.amount)
        )
    sheet.write_string(r + 5, 0, label("vat_rate", lang))
    sheet.write_number(r + 5, 1, v.rate, f.percent)
    return r + 5


def _summary(
    sheet: Worksheet, quote: QuoteData, cells: dict[str, str | None], f: _Formats, lang: Language
) -> None:
    """The header block, 제안 금액, the plan's totals and the budget; amounts that other sheets
    hold are formulas referring to them."""
    sheet.write_string(0, 0, label("title", lang), f.title)
    sheet.write_string(1, 0, quote.title)
    rows: list[tuple[str, Any, Format | None]] = [(k, v, None) for k, v in bid.header_rows(quote, lang)]
    rows += [(k, v, None) for k, v in bid.supplier_rows(quote, lang)]
    amount = bid.proposed_amount(quote)
    if amount is not None:
        rows.append((bid.proposed_label(quote, lang), (cells["proposed"], amount), f.total))
        if beside := bid.proposed_beside(quote, lang):
            rows.append(("", beside, None))
    rows += [
        (label("status", lang), label(f"status.{quote.status}", lang), None),
        (label("recommended_fleet", lang), bid.recommended_fleet(quote, lang), None),
    ]
    econ = quote.economics
    if econ is not None:
        rows += [
            (label("horizon_tco", lang), (cells["tco"], econ.horizon_tco), f.total),
            (label("capex", lang), (cells["capex"], econ.capex), f.total),
            *(
                [(label("opex_monthly", lang), (cells["opex"], econ.opex.total), f.money)]
                if quote.schedule is None  # a multi-year plan's changes by year: see its schedule
                else []
            ),
            *(
                [
                    (
                        label("tco_with_vat", lang),
                        (cells["tco_with_vat"], econ.vat.horizon_tco_with_vat),
                        f.money,
                    )
                ]
                if econ.vat is not None
                else []
            ),
            (label("horizon", lang), quote.horizon_months, None),
        ]
        if quote.saving is not None:
            rows.append((label("saving", lang), float(quote.saving.amount), f.money))
    else:
        rows.append((label("diagnosis", lang), " ".join(quote.diagnosis) or quote.summary, f.wrap))
    first = 3
    _summary_rows(sheet, first, rows, f, lang)
    r = first + len(rows)
    r = _budget_rows(sheet, r, quote, cells, f=f, lang=lang)
    sheet.write_string(r + 1, 0, label("vat_included" if quote.includes_vat else "vat_excluded", lang))
    tco = money_summary(econ.horizon_tco, lang) if econ is not None else ""
    sheet.write_string(r + 2, 0, bid.summary_text(quote, lang, tco), f.wrap)
    sheet.set_column(0, 0, 34)
    sheet.set_column(1, 1, 22)
    sheet.set_column(2, 2, 40)
    sheet.print_area(0, 0, r + 2, 2)
    sheet.fit_to_pages(1, 0)


def _summary_rows(
    sheet: Worksheet, first: int, rows: list[tuple[str, Any, Format | None]], f: _Formats, lang: Language
) -> None:
    for i, (name, value, fmt) in enumerate(rows):
        r = first + i
        if isinstance(value, tuple):
            cell, amount = value
            if cell is not None:
                sheet.write_formula(r, 1, f"={cell}", fmt, float(amount.amount))
            else:
                sheet.write_number(r, 1, float(amount.amount), fmt)
            sheet.write_string(r, 2, money_summary(amount, lang))
        else:
            _row(sheet, r, [None, value], fmt)
        sheet.write_string(r, 0, name, f.bold)


def _budget_rows(
    sheet: Worksheet, r: int, quote: QuoteData, cells: dict[str, str | None], *, f: _Formats, lang: Language
) -> int:
    """Budget, spend (=the BOM's supply amount, or its total when the budget includes VAT) and
    잔액 (=budget − spend); power and rack units. Returns the next free row."""
    use = bid.budget_use(quote)
    spend_cell = cells["total"] if quote.budget_includes_vat else cells["capex"]
    if use is not None and spend_cell is not None:
        budget_key = "budget_vat" if quote.budget_includes_vat else "budget"
        sheet.write_string(r, 0, label(budget_key, lang), f.bold)
        sheet.write_number(r, 1, float(use.budget.amount), f.money)
        sheet.write_string(r + 1, 0, label("spend", lang), f.bold)
        sheet.write_formula(r + 1, 1, f"={spend_cell}", f.money, float(use.spend.amount))
        sheet.write_string(r + 2, 0, label("remaining", lang), f.bold)
        sheet.write_formula(r + 2, 1, f"=B{r + 1}-B{r + 2}", f.total, float(use.remaining.amount))
        r += 3
    for key, value in (("power_kw", quote.power_kw), ("rack_units", quote.rack_units)):
        if value:
            sheet.write_string(r, 0, label(key, lang), f.bold)
            sheet.write_number(r, 1, value, f.number)
            r += 1
    return r


def _alternatives(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    _header(sheet, 0, COLUMNS.alternatives, f, lang)
    for i, a in enumerate(quote.shown_alternatives()):
        name = label(f"kind.{a.kind.value}", lang) + (f" ({a.name})" if a.name else "")
        _row(sheet, 1 + i, [name, label("feasible.yes" if a.feasible else "feasible.no", lang)])
        sheet.write(1 + i, 2, _amount(a.horizon_tco), f.money)
        sheet.write(1 + i, 3, _amount(a.capex), f.money)
        why = outside_requirement(quote, a, lang) + why_it_loses(a, quote.currency, lang)
        _row(sheet, 1 + i, [None, None, None, None, a.gpus, bid.fleet_text(a.fleet_summary, lang), why])
    if staged := alternatives_note(quote, lang):
        sheet.write_string(2 + len(quote.shown_alternatives()), 0, staged)
    sheet.set_column(0, 0, 28)
    sheet.set_column(2, 3, 18)
    sheet.set_column(5, 6, 50)


def _workloads(sheet: Worksheet, quote: QuoteData, f: _Formats, lang: Language) -> None:
    keys = [
        "workload",
        "deployments",
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
        uses = workload_deployments(w, lang) if w.served else bid.not_served(w, lang)
        values = [w.name, uses, w.replicas, w.ttft_p95_ms, w.ttft_target_ms]
        if w.name in {e.name for e in quote.embeddings}:  # no output speed: see the embeddings below
            values += [None, None, None, None]
        else:
            values += [w.tpot_p95_ms, w.tpot_target_ms, w.per_user_tok_s, w.aggregate_tok_s]
        formats = [None, None, f.share(w.replicas), f.whole, f.whole, f.whole, f.whole, f.number, f.whole]
        for col, (value, fmt) in enumerate(zip(values, formats, strict=True)):
            _cell(sheet, (1 + i, col), value, fmt if value is not None else None)
        sheet.write(1 + i, 9, w.utilization, f.percent)
    _groups(sheet, len(quote.workloads) + 3 + len(quote.training) + 4, quote, f, lang)
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
            _row(sheet, r + 2 + i, [t.name, t.gpu_id, t.gpus])
            for col, value in ((3, t.hours_per_run), (4, t.runs_per_month), (5, t.deadline_hours)):
                _cell(sheet, (r + 2 + i, col), value, f.number if value is not None else None)
            sheet.write(r + 2 + i, 6, _amount(t.cost_per_run), f.money)
    groups_rows = len(quote.groups) + 3 if quote.groups else 0  # the deployment groups come first
    _embeddings(sheet, r + 4 + len(quote.training) + groups_rows, quote, f, lang)
    sheet.set_column(0, 1, 20)
    sheet.set_column(2, 11, 12)


def _groups(sheet: Worksheet, r: int, quote: QuoteData, f: _Formats, lang: Language) -> None:
    """The deployment groups, below the training runs."""
    if not quote.groups:
        return
    sheet.write_string(r, 0, label("deployment_groups", lang), f.bold)
    _header(sheet, r + 1, COLUMNS.groups, f, lang)
    for i, g in enumerate(quote.groups):
        cells = group_cells(g, lang)
        _row(
            sheet,
            r + 2 + i,
            [*cells[:2], g.replicas_peak, g.replicas_off_peak, None, cells[5], cells[6]],
        )
        sheet.write(r + 2 + i, 4, g.gpus_peak, f.share(g.gpus_peak))
        sheet.write(r + 2 + i, 7, g.output_tok_s, f.number)
        sheet.write(r + 2 + i, 8, g.utilization, f.percent)


def _embeddings(sheet: Worksheet, r: int, quote: QuoteData, f: _Formats, lang: Language) -> None:
    if not quote.embeddings:
        return
    sheet.write_string(r, 0, label("embeddings", lang), f.bold)
    _header(
        sheet,
        r + 1,
        ("workload", "embeddings_per_s", "input_tok_s", "input_tokens", "per_million_input"),
        f,
        lang,
    )
    for i, e in enumerate(quote.embeddings):
        _row(sheet, r + 2 + i, [e.name])
        sheet.write_number(r + 2 + i, 1, e.embeddings_per_s, f.number)
        sheet.write_number(r + 2 + i, 2, e.input_tok_s, f.whole)
        sheet.write_number(r + 2 + i, 3, e.input_tokens, f.whole)
        sheet.write(r + 2 + i, 4, _amount(e.per_million_input_tokens), f.unit)


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
        _row(sheet, 1 + i, [bid.sensitivity_subject(s, lang), bid.sensitivity_parameter(s, lang)])
        _mix_change(sheet, (1 + i, 2), s.change_down_fraction, s.last_same_down_fraction, f)
        _mix_change(sheet, (1 + i, 3), s.change_up_fraction, s.last_same_up_fraction, f)
        sheet.write_string(1 + i, 4, bid.sensitivity_explanation(quote, s, lang))
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


def _print_wide(sheet: Worksheet) -> None:
    """A table sheet prints what it holds, landscape, one page wide, its header row on every page."""
    sheet.print_area(0, 0, sheet.dim_rowmax or 0, sheet.dim_colmax or 0)
    sheet.set_landscape()
    sheet.fit_to_pages(1, 0)
    sheet.repeat_rows(0)


def _nominal_headline(quote: QuoteData) -> bool:
    """A multi-year plan's 제안 금액 is its nominal total (the cash flow's), not the NPV."""
    d = quote.economics.discounting if quote.economics is not None else None
    return d is None or d.objective != "npv"


def render_xlsx(quote: QuoteData, lang: Language) -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True})
    created = dt.datetime.combine(quote.quoted_on, dt.time(0, 0), tzinfo=dt.UTC)
    book.set_properties({"title": quote.title or label("title", lang), "created": created})
    f = _Formats(book, quote.currency, lang)
    names = _with_schedule(sheet_names(lang, internal=quote.internal), quote, lang)
    sheets = {key: book.add_worksheet(name) for key, name in names.items()}
    bom = _bom(sheets["BOM"], quote, f, lang)
    capex = bom.supply if bom is not None else None
    flow = _cash_flow(sheets["CashFlow"], quote, bom, f, lang)
    cells = {
        "capex": capex,
        **flow,
        "total": bom.total if bom is not None else None,
        "proposed": bom.total
        if bom is not None and quote.bom is not None and quote.bom.lines and quote.schedule is None
        else flow["tco"]
        if quote.schedule is not None and _nominal_headline(quote)
        else None,
    }
    if "Schedule" in sheets:
        npv = schedule_sheet(
            book, sheets["Schedule"], quote, (flow, bom), digits=MINOR_DIGITS[quote.currency], f=f, lang=lang
        )
        cells["proposed"] = npv if npv is not None and not _nominal_headline(quote) else cells["proposed"]
    _summary(sheets["Summary"], quote, cells, f, lang)
    _alternatives(sheets["Alternatives"], quote, f, lang)
    _workloads(sheets["Workloads"], quote, f, lang)
    _assumptions(sheets["Assumptions"], quote, f, lang)
    _sensitivity(sheets["Sensitivity"], quote, f, lang)
    if "Sourcing" in sheets:
        _sourcing(sheets["Sourcing"], quote, f, lang)
    if has_disaggregation(quote):  # its own sheet, last: the others keep their places
        formats = {"bold": f.bold, "head": f.head, "money": f.money, "number": f.number}
        sheets["Disaggregation"] = book.add_worksheet(label("sheet.Disaggregation", lang))
        write_disaggregation(sheets["Disaggregation"], quote, lang, formats)
    for key, sheet in sheets.items():
        sheet.set_paper(A4)
        if key not in ("Summary", "BOM", "CashFlow", "Schedule"):  # those set their own print areas
            _print_wide(sheet)
    book.close()
    return buffer.getvalue()
