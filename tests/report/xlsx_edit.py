"""A bidder's edit of the quote workbook, shared by the formula tests (``test_xlsx_formulas``: the
tests' own evaluator; ``test_xlsx_libreoffice``: LibreOffice recalculating): the first BOM line's
unit price cut by 10 % (a vendor's quote), and what that must move — the supply amount by the price
cut, support by its yearly rate, the residual value by its fraction, the VAT, and the TCO by all of
them over the horizon; on the summary sheet the monthly opex, the TCO incl. VAT, the 제안 금액, the
spend against the budget and the 잔액 follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from report import Language
from report.xlsx import sheet_names

PRICE_CUT = 0.1
"""The vendor quotes 10 % less than the pricebook."""
FIRST_BOM_LINE = 4
"""The BOM sheet's first line (a GPU line): unit price in E, quantity in D, support rate in H,
residual fraction in I."""


def find_row(sheet: Any, text: str, column: int = 1) -> int:
    for row in sheet.iter_rows():
        if row[column - 1].value == text:
            return int(row[column - 1].row)
    raise AssertionError(f"{text!r} not in {sheet.title}")


@dataclass(frozen=True)
class PriceEdit:
    """Where the edited price and the watched figures are in a Korean workbook (loaded with its
    formulas), and the line's price, quantity, support rate and residual fraction."""

    price_cell: tuple[str, str]
    watched: dict[str, tuple[str, str]]
    unit: float
    quantity: float
    support_rate: float
    residual_fraction: float
    vat_rate: float
    budget_includes_vat: bool

    @property
    def new_price(self) -> float:
        return self.unit * (1 - PRICE_CUT)

    def check(self, before: dict[str, float], after: dict[str, float], months: int) -> None:
        """The watched figures moved as the price cut implies (``before``/``after``: by name)."""
        cheaper = self.unit * PRICE_CUT * self.quantity
        assert before["supply"] - after["supply"] == pytest.approx(cheaper)
        support_cut = before["support"] - after["support"]
        assert support_cut == pytest.approx(cheaper * self.support_rate / 12, abs=1)
        residual_gain = after["residual"] - before["residual"]
        assert residual_gain == pytest.approx(cheaper * self.residual_fraction, abs=1)
        assert after["vat"] < before["vat"]
        expected = cheaper + support_cut * months - cheaper * self.residual_fraction
        tco_cut = before["tco"] - after["tco"]
        assert tco_cut == pytest.approx(expected, abs=2)
        # the summary sheet follows: monthly opex, TCO incl. VAT, 제안 금액, spend and 잔액
        assert before["summary_opex"] - after["summary_opex"] == pytest.approx(support_cut)
        vat_cut = before["vat"] - after["vat"]
        assert before["summary_tco_vat"] - after["summary_tco_vat"] == pytest.approx(tco_cut + vat_cut)
        proposed_cut = before["proposed"] - after["proposed"]
        assert proposed_cut == pytest.approx(cheaper * (1 + self.vat_rate), abs=1)
        spend_cut = before["spend"] - after["spend"]
        assert spend_cut == pytest.approx(proposed_cut if self.budget_includes_vat else cheaper)
        assert after["remaining"] - before["remaining"] == pytest.approx(spend_cut)


def price_edit(formulas: Any) -> PriceEdit:
    """The edit of a Korean workbook (``Language.KO`` sheet and row names) loaded with formulas."""
    names = sheet_names(Language.KO)
    bom, flow, summary = formulas[names["BOM"]], formulas[names["CashFlow"]], formulas[names["Summary"]]
    support_row, residual_row = find_row(flow, "유지보수"), find_row(flow, "잔존 가치")
    total_row = find_row(flow, "순 현금 유출")
    total_col = max(c.column for c in flow[total_row] if c.value is not None)
    watched = {
        "supply": (names["BOM"], f"F{find_row(bom, '공급가액', 5)}"),
        "support": (names["CashFlow"], f"B{support_row}"),
        "residual": (names["CashFlow"], flow.cell(residual_row, total_col - 1).coordinate),
        "vat": (names["CashFlow"], f"B{find_row(flow, '부가세')}"),
        "tco": (names["CashFlow"], flow.cell(total_row, total_col).coordinate),
        **{
            key: (names["Summary"], f"B{find_row(summary, text)}")
            for key, text in (
                ("summary_opex", "월 운영비(OPEX)"),
                ("summary_tco_vat", "부가세 포함 총소유비용"),
                ("proposed", "제안 금액 (부가세 포함)"),
                ("spend", "예산 집행액"),
                ("remaining", "잔액"),
            )
        },
    }
    budget_vat = any(row[0].value == "사업 예산 (부가세 포함)" for row in summary.iter_rows())
    row = FIRST_BOM_LINE
    edit = PriceEdit(
        price_cell=(names["BOM"], f"E{row}"),
        watched=watched,
        unit=float(bom[f"E{row}"].value),
        quantity=float(bom[f"D{row}"].value),
        support_rate=float(bom[f"H{row}"].value),
        residual_fraction=float(bom[f"I{row}"].value),
        vat_rate=float(bom[f"F{find_row(bom, '부가세율', 5)}"].value),
        budget_includes_vat=budget_vat,
    )
    assert edit.support_rate > 0 and edit.residual_fraction > 0
    return edit
