"""LibreOffice (Debian's ``libreoffice-calc-nogui``, installed by ``.ci/run``) recalculates the quote
workbook headlessly, as a bidder's spreadsheet would: with the renderer's cached values taken out,
every formula computes to the value the renderer cached; and after a BOM unit price is edited,
support, residual value, VAT and TCO move as the price cut implies. Where ``soffice`` is missing the
tests skip, loudly; on CI (``CI`` set) they fail instead."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from report_support import amount, example
from xlsx_edit import PriceEdit, price_edit

from report import Language
from report.xlsx import render_xlsx

EXAMPLE = "500m_krw_portfolio"
"""Buys GPUs and hosts, credits a residual value and asks for VAT: every watched figure moves."""
RECALCULATE_ON_LOAD = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop>
</item>
</oor:items>
"""
"""A LibreOffice profile setting: recalculate every formula of an Excel 2007+ file when it loads."""


def _soffice() -> str:
    found = shutil.which("soffice")
    if found is None:
        reason = "LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui"
        if os.environ.get("CI"):
            pytest.fail(reason + " — .ci/run installs it; on CI this must run")
        warnings.warn(reason, stacklevel=1)
        pytest.skip("SKIPPED LOUDLY: " + reason)
    return found


@dataclass(frozen=True)
class Recalculated:
    cached: Any
    """The workbook as rendered, read with the renderer's cached values."""
    formulas: Any
    """The workbook as rendered, read with its formulas."""
    as_rendered: Any
    """LibreOffice's values of the rendered workbook (cached values taken out first)."""
    edited: Any
    """LibreOffice's values after the first BOM line's unit price was cut."""
    edit: PriceEdit


def _recalculate(soffice: str, folder: Path, *books: Path) -> list[Any]:
    """Each workbook opened, recalculated and saved by LibreOffice; read back with its values."""
    profile = folder / "profile"
    (profile / "user").mkdir(parents=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALCULATE_ON_LOAD, encoding="utf-8")
    out = folder / "recalculated"
    command = [soffice, "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}"]
    command += ["--convert-to", "xlsx", "--outdir", str(out), *map(str, books)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return [openpyxl.load_workbook(out / book.name, data_only=True) for book in books]


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory: pytest.TempPathFactory) -> Recalculated:
    soffice = _soffice()
    folder = tmp_path_factory.mktemp("libreoffice")
    content = render_xlsx(example(EXAMPLE).quote, Language.KO)
    book = openpyxl.load_workbook(io.BytesIO(content))
    as_rendered, edited = folder / "as_rendered.xlsx", folder / "edited.xlsx"
    book.save(as_rendered)  # openpyxl writes the formulas without their cached values
    edit = price_edit(book)
    sheet, cell = edit.price_cell
    book[sheet][cell] = edit.new_price  # a bidder pastes the vendor's price
    book.save(edited)
    stripped = openpyxl.load_workbook(as_rendered, data_only=True)
    assert all(stripped[s][c].value is None for s, c in edit.watched.values())  # nothing left to reuse
    values = _recalculate(soffice, folder, as_rendered, edited)
    cached = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    formulas = openpyxl.load_workbook(io.BytesIO(content))
    return Recalculated(cached, formulas, values[0], values[1], edit)


def test_libreoffice_computes_every_formula_to_the_renderers_value(recalculated: Recalculated) -> None:
    checked = 0
    for sheet in recalculated.formulas.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    expected = recalculated.cached[sheet.title][cell.coordinate].value
                    computed = recalculated.as_rendered[sheet.title][cell.coordinate].value
                    assert computed == pytest.approx(expected, abs=0.011), (sheet.title, cell.coordinate)
                    checked += 1
    assert checked > 20


def test_an_edited_unit_price_moves_support_residual_vat_and_tco_in_libreoffice(
    recalculated: Recalculated,
) -> None:
    edit = recalculated.edit
    before = {k: float(recalculated.as_rendered[s][c].value) for k, (s, c) in edit.watched.items()}
    after = {k: float(recalculated.edited[s][c].value) for k, (s, c) in edit.watched.items()}
    edit.check(before, after, example(EXAMPLE).quote.horizon_months)


STAGED = "korean_public_rollout_5yr"
"""A five-year plan with a discount rate: its schedule sheet discounts the yearly cash by formula."""
SCHEDULE_SHEET = "연차별 도입 계획"


def test_libreoffice_discounts_the_five_year_schedule_as_the_plan_and_the_formula_do(
    tmp_path: Path,
) -> None:
    """The schedule sheet recalculated by LibreOffice (cached values taken out) gives the plan's
    discounted cash and NPV; with the rate cell set to 20 % its NPV is Σ nominal ÷ 1.2^year, each
    year rounded to the won (Excel's ROUND), computed here."""
    soffice = _soffice()
    planned = example(STAGED)
    content = render_xlsx(planned.quote, Language.KO)
    book = openpyxl.load_workbook(io.BytesIO(content))
    sheet = book[SCHEDULE_SHEET]
    rate_row = next(c.row for c in sheet["A"] if c.value == "할인율 (연)")
    as_rendered, dearer = tmp_path / "staged.xlsx", tmp_path / "staged-20.xlsx"
    book.save(as_rendered)
    sheet[f"B{rate_row}"] = 0.2
    book.save(dearer)
    values, values_dearer = _recalculate(soffice, tmp_path, as_rendered, dearer)
    cached_book = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    formulas_book = openpyxl.load_workbook(io.BytesIO(content))
    formulas = formulas_book[SCHEDULE_SHEET]
    checked = 0
    for sheet in formulas_book.worksheets:  # the summary, BOM and cash flow refer to one another
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    computed = values[sheet.title][cell.coordinate].value
                    expected = cached_book[sheet.title][cell.coordinate].value
                    assert computed == pytest.approx(expected, abs=0.011), (sheet.title, cell.coordinate)
                    checked += 1
    assert checked >= 3 * 6
    summary = {r[0]: r[1] for r in values["요약"].iter_rows(values_only=True) if r[0]}
    flows_nominal = sum(
        (amount(y["nominal"]) for y in planned.plan_json["cost"]["cash_flows_by_year"]), Decimal(0)
    )
    assert summary["제안 금액 (5개년 순현재가치)"] == pytest.approx(
        float(amount(planned.plan_json["cost"]["npv"]))
    )
    assert summary["총소유비용(TCO)"] == pytest.approx(float(flows_nominal))
    flows = planned.plan_json["cost"]["cash_flows_by_year"]
    npv_row = next(c.row for c in formulas["A"] if c.value == "순현재가치 (NPV)")
    assert values[SCHEDULE_SHEET][f"E{npv_row}"].value == pytest.approx(
        float(amount(planned.plan_json["cost"]["npv"]))
    )
    nominal = [(int(y.get("year", 0)), amount(y["nominal"])) for y in flows]
    expected = sum(
        ((n / Decimal("1.2") ** y).quantize(Decimal(1), rounding=ROUND_HALF_UP) for y, n in nominal),
        Decimal(0),
    )
    assert values_dearer[SCHEDULE_SHEET][f"E{npv_row}"].value == pytest.approx(float(expected))
