"""The workbook's 연차별 도입 계획 sheet of a multi-year plan: the schedule (per year what is added,
its capex, the monthly opex, the fleet in service, the deployments), each year's purchases with
their depreciation, and the cash by plan year with its present value as formulas of a rate cell
(factor ``=POWER(1+rate,-year)``, ``=ROUND(nominal×factor)``, running total and NPV ``=SUM``),
drawn by a native chart over those cells. Amounts are the planner's (``QuoteData.schedule``,
``economics.discounting``), each formula written with the plan's value cached."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from report.data import Discounting, QuoteData
from report.formatting import money
from report.labels import Language, label
from report.schedule import Schedule
from report.schedule_html import deployment_text, items_text

if TYPE_CHECKING:
    from report.xlsx import BomCells, _Formats

YEAR_KEYS = (
    "year",
    "months",
    "sched.added",
    "sched.capex",
    "sched.opex_monthly",
    "sched.fleet",
    "sched.deployments",
)
TRANCHE_KEYS = (
    "tranche.year",
    "gpu",
    "gpus",
    "tranche.servers",
    "tranche.hardware",
    "tranche.residual",
    "tranche.depreciation",
)
TABLE_ROW = 3
"""The row (0-based) of the schedule table's header; the years follow it."""
LINE_POINTS = 15
"""The height of a line of text in a row (points)."""
PV_KEYS = ("year", "months", "pv.nominal", "pv.factor", "pv.discounted", "pv.cumulative")


def opex_monthly_ref(lang: Language, index: int) -> str:
    """The schedule table's opex per month of its ``index``-th year (0-based), for other sheets."""
    name = label("sheet.Schedule", lang).replace("'", "''")
    return f"'{name}'!$E${TABLE_ROW + 2 + index}"


def _heads(sheet: Worksheet, row: int, keys: tuple[str, ...], f: _Formats, lang: Language) -> None:
    for col, key in enumerate(keys):
        sheet.write_string(row, col, label(key, lang), f.head)


def _years(
    sheet: Worksheet,
    r: int,
    quote: QuoteData,
    s: Schedule,
    bom: BomCells | None,
    *,
    f: _Formats,
    lang: Language,
) -> int:
    """The schedule table from row ``r``, its total row (=SUM of months and capex) last; returns it."""
    _heads(sheet, r, YEAR_KEYS, f, lang)
    sheet.set_row(r, 2 * LINE_POINTS)
    first = r + 1
    for i, y in enumerate(s.years):
        at = first + i
        sheet.write_number(at, 0, y.year)
        sheet.write_number(at, 1, y.months)
        sheet.write_string(at, 2, items_text(y.added, lang, internal=quote.internal), f.wrap)
        if bom is not None and y.year in bom.years:  # the BOM's subtotal of the year's purchases
            sheet.write_formula(at, 3, f"={bom.years[y.year]}", f.money, float(y.capex.amount))
        else:
            sheet.write_number(at, 3, float(y.capex.amount), f.money)
        sheet.write_number(at, 4, float(y.opex_monthly.amount), f.money)
        sheet.write_string(at, 5, items_text(y.fleet, lang, internal=False), f.wrap)
        sheet.write_string(at, 6, "\n".join(deployment_text(d, lang) for d in y.deployments), f.wrap)
        # a spreadsheet does not grow a row for wrapped lines by itself (LibreOffice draws them over)
        sheet.set_row(at, LINE_POINTS * max(1, len(y.deployments), len(y.fleet)))
    last = first + len(s.years) - 1
    total = last + 1
    sheet.write_string(total, 0, label("total", lang), f.bold)
    sheet.write_formula(total, 1, f"=SUM(B{first + 1}:B{last + 1})", f.bold, s.months)
    capex = float(sum(y.capex.amount for y in s.years))
    sheet.write_formula(total, 3, f"=SUM(D{first + 1}:D{last + 1})", f.total, capex)
    return total


def _tranches(sheet: Worksheet, r: int, s: Schedule, f: _Formats, lang: Language) -> int:
    """Each year's purchases from row ``r`` (a title, the table); returns the last row written."""
    sheet.write_string(r, 0, label("sched.tranches", lang), f.bold)
    _heads(sheet, r + 1, TRANCHE_KEYS, f, lang)
    for i, t in enumerate(s.tranches):
        at = r + 2 + i
        for col, value in enumerate((t.year, t.gpu_id, t.gpus, t.servers)):
            sheet.write(at, col, value)
        for col, amount in enumerate((t.hardware, t.residual_value, t.depreciation), start=4):
            sheet.write_number(at, col, float(amount.amount), f.money)
    return r + 1 + len(s.tranches)


def _present_value(
    sheet: Worksheet,
    r: int,
    d: Discounting,
    nominal_cells: list[str | None],
    digits: int,
    *,
    f: _Formats,
    lang: Language,
) -> int:
    """The cash by plan year from row ``r``: the rate cell, then per year its nominal cash, the
    factor, the discounted cash and the running total as formulas; the NPV row last (returned)."""
    sheet.write_string(r, 0, label("pv", lang).format(rate=f"{d.rate:.2%}"), f.bold)
    sheet.write_string(r + 1, 0, label("discount_rate", lang))
    sheet.write_number(r + 1, 1, d.rate, f.rate)
    rate = xl_rowcol_to_cell(r + 1, 1, row_abs=True, col_abs=True)
    _heads(sheet, r + 2, PV_KEYS, f, lang)
    first = r + 3
    running = 0.0
    for i, y in enumerate(d.years):
        at = first + i
        x = at + 1  # the row's number in A1 references
        running += float(y.discounted.amount)
        sheet.write_number(at, 0, y.year)
        sheet.write_number(at, 1, y.months)
        cell = nominal_cells[i] if i < len(nominal_cells) else None
        if cell is not None:
            sheet.write_formula(at, 2, f"={cell}", f.money, float(y.nominal.amount))
        else:
            sheet.write_number(at, 2, float(y.nominal.amount), f.money)
        sheet.write_formula(at, 3, f"=POWER(1+{rate},-A{x})", f.number6, (1.0 + d.rate) ** -y.year)
        sheet.write_formula(at, 4, f"=ROUND(C{x}*D{x},{digits})", f.money, float(y.discounted.amount))
        sheet.write_formula(at, 5, f"=SUM(E${first + 1}:E{x})", f.money, running)
    last = first + len(d.years) - 1
    npv = last + 1
    nominal = float(d.nominal_total.amount) if d.nominal_total is not None else None
    sheet.write_string(npv, 0, label("npv", lang), f.bold)
    sheet.write_formula(npv, 2, f"=SUM(C{first + 1}:C{last + 1})", f.total, nominal)
    sheet.write_formula(npv, 4, f"=SUM(E{first + 1}:E{last + 1})", f.total, float(d.npv.amount))
    return npv


def _chart(
    book: Workbook,
    sheet: Worksheet,
    rows: tuple[int, int],
    d: Discounting,
    *,
    money_format: str,
    lang: Language,
) -> None:
    """Nominal and discounted cash per plan year as columns, over the cells of the block."""
    first, last = rows
    name = sheet.get_name()

    def cells(col: int) -> list[object]:
        return [name, first, col, last, col]

    chart = book.add_chart({"type": "column"})
    for col, key, colour in ((2, "pv.nominal", "#85929E"), (4, "pv.discounted", "#1F4E79")):
        chart.add_series(
            {
                "name": label(key, lang),
                "categories": cells(0),
                "values": cells(col),
                "fill": {"color": colour},
            }
        )
    chart.set_title(
        {"name": label("sched.chart", lang).format(npv=money(d.npv, lang)), "name_font": {"size": 11}}
    )
    chart.set_x_axis({"name": label("year", lang)})
    chart.set_y_axis({"num_format": money_format})
    chart.set_legend({"position": "bottom"})
    chart.set_size({"width": 720, "height": 300})
    sheet.insert_chart(last + 3, 0, chart)


def schedule_sheet(
    book: Workbook,
    sheet: Worksheet,
    quote: QuoteData,
    cells: tuple[dict[str, str | None], BomCells | None],
    *,
    digits: int,
    f: _Formats,
    lang: Language,
) -> str | None:
    """The sheet; nothing for a plan of one period. ``cells``: the cash-flow sheet's cells per row
    and year (``capex:3``, …) and the BOM's, which the capex and the nominal cash refer to.
    Returns the NPV's cell (None without a present value)."""
    s = quote.schedule
    if s is None:
        return None
    flow, bom = cells
    sheet.write_string(0, 0, label("schedule", lang), f.title)
    sheet.write_string(1, 0, label("sched.note", lang))
    end = _years(sheet, TABLE_ROW, quote, s, bom, f=f, lang=lang)
    if s.tranches:
        end = _tranches(sheet, end + 2, s, f, lang)
    d = quote.economics.discounting if quote.economics is not None else None
    npv: str | None = None
    if d is not None:
        start = end + 2
        end = _present_value(sheet, start, d, _nominal_cells(s, flow), digits, f=f, lang=lang)
        npv = "'" + sheet.get_name().replace("'", "''") + "'!" + f"$E${end + 1}"
        _chart(book, sheet, (start + 3, end - 1), d, money_format=f.money.num_format, lang=lang)
        end += 18  # the chart below the block
    sheet.set_column(0, 1, 10)
    sheet.set_column(2, 2, 28)
    sheet.set_column(3, 5, 18)
    sheet.set_column(6, 6, 48)
    sheet.print_area(0, 0, end, 6)
    sheet.set_landscape()
    sheet.fit_to_pages(1, 0)
    return npv


def _nominal_cells(s: Schedule, flow: dict[str, str | None]) -> list[str | None]:
    """Each plan year's nominal cash as a formula of the cash-flow sheet's cells (year 0 the first
    year's purchases; year y its opex and the next year's purchases, the last its residual)."""
    years = [y.year for y in s.years]
    out = [flow.get(f"capex:{years[0]}")]
    for i, year in enumerate(years):
        after = flow.get(f"capex:{years[i + 1]}") if i + 1 < len(years) else flow.get(f"residual:{year}")
        opex = flow.get(f"opex:{year}")
        out.append(f"{opex}+{after}" if opex and after else None)
    return out
