"""The workbook's derived cells are formulas of the BOM: every formula evaluates to the value
cached beside it, and editing a unit price (a vendor's quote) moves the capex, support, residual
value, VAT and TCO by what the price change implies."""

from __future__ import annotations

import io
from typing import Any

import openpyxl
import pytest
from report_support import example
from xlsx_edit import price_edit
from xlsx_eval import Evaluator

from report import Language
from report.xlsx import render_xlsx


def _books(name: str, lang: Language) -> tuple[Any, Any]:
    content = render_xlsx(example(name).quote, lang)
    return (
        openpyxl.load_workbook(io.BytesIO(content), data_only=False),
        openpyxl.load_workbook(io.BytesIO(content), data_only=True),
    )


@pytest.mark.parametrize(
    ("name", "lang"),
    [
        ("500m_krw_portfolio", Language.KO),
        ("100b_tp_serving", Language.EN),
        ("korean_public_rollout_5yr", Language.KO),  # the BOM by year, the cash by year, the NPV
    ],
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
    formulas, _ = _books("500m_krw_portfolio", Language.KO)  # buys GPUs and hosts, asks for VAT
    edit = price_edit(formulas)
    ev = Evaluator(formulas)
    before = {k: ev.value(*where) for k, where in edit.watched.items()}
    ev.set(*edit.price_cell, edit.new_price)
    after = {k: ev.value(*where) for k, where in edit.watched.items()}
    edit.check(before, after, example("500m_krw_portfolio").quote.horizon_months)
