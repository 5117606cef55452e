"""The XLSX quote re-opened with openpyxl: every sheet exists, totals (formulas with cached values)
equal the plan's capex and TCO, amounts are numbers with currency formats and the BOM's and cash
flow's totals are formulas over their lines."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import openpyxl
import pytest
from report_support import amount, example, expected_bom_lines

from report import Language
from report.xlsx import render_xlsx

SHEETS = ["Summary", "Alternatives", "BOM", "CashFlow", "Workloads", "Assumptions", "Sensitivity"]


def _books(name: str, lang: Language) -> tuple[Any, Any]:
    content = render_xlsx(example(name).quote, lang)
    values = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    formulas = openpyxl.load_workbook(io.BytesIO(content), data_only=False)
    return values, formulas


def _row_of(sheet: Any, text: str, column: int) -> int:
    for row in sheet.iter_rows():
        cell = row[column - 1]
        if cell.value == text:
            return int(cell.row)
    raise AssertionError(f"{text!r} not in column {column} of {sheet.title}")


@pytest.mark.parametrize(
    ("name", "lang"), [("500m_krw_portfolio", Language.KO), ("rtx5090_cluster", Language.EN)]
)
def test_totals_equal_the_plans_capex_and_tco(name: str, lang: Language) -> None:
    planned = example(name)
    values, formulas = _books(name, lang)
    assert values.sheetnames == SHEETS
    cost = planned.plan_json["cost"]
    tco, capex = amount(cost["horizon_tco"]), amount(cost["capex"])

    bom_v, bom_f = values["BOM"], formulas["BOM"]
    supply_label = "공급가액" if lang is Language.KO else "Supply amount"
    supply_row = _row_of(bom_v, supply_label, 7)
    assert Decimal(str(bom_v.cell(supply_row, 8).value)) == capex
    assert str(bom_f.cell(supply_row, 8).value).startswith("=SUM(H")
    lines = [
        Decimal(str(bom_v.cell(r, 8).value))
        for r in range(4, supply_row - 1)
        if bom_v.cell(r, 8).value is not None
    ]
    assert lines == expected_bom_lines(planned)
    for r in range(4, 4 + len(lines)):
        assert bom_f.cell(r, 8).value == f"=F{r}*G{r}"
        assert bom_v.cell(r, 6).value * bom_v.cell(r, 7).value == bom_v.cell(r, 8).value
        assert bom_v.cell(r, 8).number_format not in ("General", "")

    flow_v, flow_f = values["CashFlow"], formulas["CashFlow"]
    total_label = "순 현금 유출" if lang is Language.KO else "Net cash out"
    total_row = _row_of(flow_v, total_label, 1)
    last_col = max(c.column for c in flow_v[total_row] if c.value is not None)
    assert Decimal(str(flow_v.cell(total_row, last_col).value)) == tco
    assert str(flow_f.cell(total_row, last_col).value).startswith("=SUM(")
    assert str(flow_f.cell(5, 3).value) == f"=BOM!$H${supply_row}"  # year-1 purchase is the BOM's supply

    summary_v, summary_f = values["Summary"], formulas["Summary"]
    tco_label = "총소유비용(TCO)" if lang is Language.KO else "Horizon TCO"
    row = _row_of(summary_v, tco_label, 1)
    assert Decimal(str(summary_v.cell(row, 2).value)) == tco
    assert str(summary_f.cell(row, 2).value).startswith("=CashFlow!")


def test_every_sheet_has_content() -> None:
    values, _ = _books("500m_krw_portfolio", Language.EN)
    for name in SHEETS:
        sheet = values[name]
        assert sheet.max_row > 1, name
    workloads = values["Workloads"]
    names = [workloads.cell(r, 1).value for r in range(2, 5)]
    assert names == ["rag-70b", "bulk-14b", "embeddings"]
