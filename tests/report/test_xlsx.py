"""The XLSX quote re-opened with openpyxl: every sheet exists, totals (formulas with cached values)
equal the plan's capex and TCO, amounts are numbers with currency formats and the BOM's and cash
flow's totals are formulas over their lines."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import openpyxl
import pytest
from report_support import amount, bid_example, example, expected_bom_lines

from report import Language
from report.xlsx import render_xlsx

SHEETS = ["Summary", "Alternatives", "BOM", "CashFlow", "Workloads", "Assumptions", "Sensitivity"]
SHEETS_KO = ["요약", "대안 비교", "견적 내역", "현금 흐름", "워크로드", "가정", "민감도"]


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
    names = dict(zip(SHEETS, SHEETS_KO if lang is Language.KO else SHEETS, strict=True))
    assert values.sheetnames == list(names.values())
    cost = planned.plan_json["cost"]
    tco, capex = amount(cost["horizon_tco"]), amount(cost["capex"])

    bom_v, bom_f = values[names["BOM"]], formulas[names["BOM"]]
    header = [c.value for c in bom_v[3]][:7]
    if lang is Language.KO:
        assert header == ["품명", "규격", "단위", "수량", "단가", "금액", "비고"]
    supply_label = "공급가액" if lang is Language.KO else "Supply amount"
    supply_row = _row_of(bom_v, supply_label, 5)
    assert Decimal(str(bom_v.cell(supply_row, 6).value)) == capex
    assert str(bom_f.cell(supply_row, 6).value).startswith("=SUM(F")
    lines = [
        Decimal(str(bom_v.cell(r, 6).value))
        for r in range(4, supply_row - 1)
        if bom_v.cell(r, 6).value is not None
    ]
    assert lines == expected_bom_lines(planned)
    for r in range(4, 4 + len(lines)):
        assert bom_f.cell(r, 6).value == f"=E{r}*D{r}"
        assert bom_v.cell(r, 5).value * bom_v.cell(r, 4).value == bom_v.cell(r, 6).value
        assert bom_v.cell(r, 6).number_format not in ("General", "")

    flow_v, flow_f = values[names["CashFlow"]], formulas[names["CashFlow"]]
    total_label = "순 현금 유출" if lang is Language.KO else "Net cash out"
    total_row = _row_of(flow_v, total_label, 1)
    last_col = max(c.column for c in flow_v[total_row] if c.value is not None)
    assert Decimal(str(flow_v.cell(total_row, last_col).value)) == tco
    assert str(flow_f.cell(total_row, last_col).value).startswith("=SUM(")
    # year-1 purchase is the BOM's supply
    assert str(flow_f.cell(5, 3).value) == f"='{names['BOM']}'!$F${supply_row}"

    summary_v, summary_f = values[names["Summary"]], formulas[names["Summary"]]
    tco_label = "총소유비용(TCO)" if lang is Language.KO else "Horizon TCO"
    row = _row_of(summary_v, tco_label, 1)
    assert Decimal(str(summary_v.cell(row, 2).value)) == tco
    assert str(summary_f.cell(row, 2).value).startswith(f"='{names['CashFlow']}'!")


def test_every_sheet_has_content() -> None:
    values, _ = _books("500m_krw_portfolio", Language.EN)
    for name in SHEETS:
        sheet = values[name]
        assert sheet.max_row > 1, name
    workloads = values["Workloads"]
    names = [workloads.cell(r, 1).value for r in range(2, 5)]
    assert names == ["rag-70b", "bulk-14b", "embeddings"]


@pytest.mark.parametrize(
    ("name", "lang"), [("500m_krw_portfolio", Language.KO), ("14b_finetune", Language.EN)]
)
def test_every_sheet_prints_on_a4_and_no_fraction_is_unformatted(name: str, lang: Language) -> None:
    values, _ = _books(name, lang)
    for sheet in values.worksheets:
        assert sheet.print_area, sheet.title  # what prints is the sheet's content, not a guess
        assert str(sheet.page_setup.paperSize) == sheet.PAPERSIZE_A4, sheet.title
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, sheet.title  # one page wide
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, float) and cell.value != int(cell.value):
                    assert cell.number_format != "General", (sheet.title, cell.coordinate, cell.value)


def _shown_as_on_the_page(cell: Any) -> bool:
    """Replicas or GPUs to two decimals when a share (0.36), as a whole number when whole (1)."""
    rounded = round(cell.value, 2)
    return bool(cell.number_format == ("#,##0" if rounded == int(rounded) else "#,##0.00"))


def test_replicas_and_gpus_show_the_decimals_the_page_shows() -> None:
    quote = bid_example("kr_public_rag_bid").quote  # pool shares (0.36, 0.64), a MIG quarter (0.25 GPU)
    sheet = openpyxl.load_workbook(io.BytesIO(render_xlsx(quote, Language.KO)))["워크로드"]
    replicas = [sheet.cell(2 + i, 3) for i in range(len(quote.workloads))]
    groups_header = _row_of(sheet, "배포", 1)
    gpus = [sheet.cell(groups_header + 1 + i, 5) for i in range(len(quote.groups))]
    assert [c.value for c in replicas] == pytest.approx([w.replicas for w in quote.workloads])
    assert [c.value for c in gpus] == pytest.approx([g.gpus_peak for g in quote.groups])
    assert any(c.value != int(c.value) for c in replicas + gpus)
    assert all(_shown_as_on_the_page(c) for c in replicas + gpus)
