"""The workbook's derived cells are formulas of the BOM: every formula evaluates to the value
cached beside it, and editing a unit price (a vendor's quote) moves the capex, support, residual
value, VAT and TCO by what the price change implies."""

from __future__ import annotations

import io
from typing import Any

import openpyxl
import pytest
from report_support import example
from xlsx_eval import Evaluator

from report import Language
from report.xlsx import render_xlsx, sheet_names


def _books(name: str, lang: Language) -> tuple[Any, Any]:
    content = render_xlsx(example(name).quote, lang)
    return (
        openpyxl.load_workbook(io.BytesIO(content), data_only=False),
        openpyxl.load_workbook(io.BytesIO(content), data_only=True),
    )


def _find(sheet: Any, text: str, column: int = 1) -> int:
    for row in sheet.iter_rows():
        if row[column - 1].value == text:
            return int(row[column - 1].row)
    raise AssertionError(f"{text!r} not in {sheet.title}")


@pytest.mark.parametrize(
    ("name", "lang"), [("500m_krw_portfolio", Language.KO), ("100b_tp_serving", Language.EN)]
)
def test_every_formula_evaluates_to_its_cached_value(name: str, lang: Language) -> None:
    formulas, values = _books(name, lang)
    evaluator = Evaluator(formulas)
    checked = 0
    for sheet in formulas.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    cached = values[sheet.title][cell.coordinate].value
                    assert evaluator.value(sheet.title, cell.coordinate) == pytest.approx(
                        cached, abs=0.011
                    ), (
                        sheet.title,
                        cell.coordinate,
                        cell.value,
                    )
                    checked += 1
    assert checked > 20


def test_an_edited_unit_price_moves_support_residual_vat_and_tco() -> None:
    lang = Language.KO
    names = sheet_names(lang)
    formulas, _ = _books("500m_krw_portfolio", lang)  # buys GPUs and hosts, asks for VAT
    bom, flow = formulas[names["BOM"]], formulas[names["CashFlow"]]
    ev = Evaluator(formulas)
    months = example("500m_krw_portfolio").quote.horizon_months
    support_row, residual_row = _find(flow, "유지보수"), _find(flow, "잔존 가치")
    total_row = _find(flow, "순 현금 유출")
    total_col = max(c.column for c in flow[total_row] if c.value is not None)
    last_year_col = total_col - 1
    vat_row = _find(flow, "부가세")
    watched = {
        "supply": (names["BOM"], f"F{_find(bom, '공급가액', 5)}"),
        "support": (names["CashFlow"], f"B{support_row}"),
        "residual": (names["CashFlow"], flow.cell(residual_row, last_year_col).coordinate),
        "vat": (names["CashFlow"], f"B{vat_row}"),
        "tco": (names["CashFlow"], flow.cell(total_row, total_col).coordinate),
    }
    before = {k: ev.value(*where) for k, where in watched.items()}
    row = 4  # the first BOM line: a GPU line
    unit, quantity = float(bom[f"E{row}"].value), float(bom[f"D{row}"].value)
    support_rate, residual_fraction = float(bom[f"H{row}"].value), float(bom[f"I{row}"].value)
    assert support_rate > 0 and residual_fraction > 0
    ev.set(names["BOM"], f"E{row}", unit * 0.9)  # the vendor quotes 10 % less
    after = {k: ev.value(*where) for k, where in watched.items()}
    cheaper = unit * 0.1 * quantity
    assert before["supply"] - after["supply"] == pytest.approx(cheaper)
    assert before["support"] - after["support"] == pytest.approx(cheaper * support_rate / 12, abs=1)
    assert after["residual"] - before["residual"] == pytest.approx(cheaper * residual_fraction, abs=1)
    assert after["vat"] < before["vat"]
    expected = cheaper + (before["support"] - after["support"]) * months - cheaper * residual_fraction
    assert before["tco"] - after["tco"] == pytest.approx(expected, abs=2)
