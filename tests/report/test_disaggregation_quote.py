"""A disaggregated plan's quote (issue 33), from a hand-built plan (tests/solver/planner/
disagg_factories.py): the HTML page, the PDF and the workbook show the same two roles, their GPUs,
the prefill:decode ratio and the KV link, and the line saying why disaggregation won with the saving
over the best aggregated plan, in Korean and English; the page loads in Chromium and the workbook in
LibreOffice. Expected cells are derived here from the plan's fields (never by ``report``'s code)."""

from __future__ import annotations

import functools
import re
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from browser import chromium
from quote_files import html_fields, html_tables, pdf_text, xlsx_values
from selenium.webdriver.common.by import By
from test_xlsx_libreoffice import _soffice

from pricebook import load_default
from report import Language, QuoteData, ReportFormat, build_quote, render
from solver import planner
from solver.planner.results import DisaggregatedRole, DisaggregatedRoles, PlanResult
from solver.resolve import resolve
from tests.solver.planner.disagg_factories import disaggregated
from tests.solver.planner.planner_factories import BARE, small_chat_request

SAVING = {"KRW": Decimal("18000000"), "USD": Decimal("12345.67")}
NETWORK = {"KRW": Decimal("6000000"), "USD": Decimal("4321.09")}
LANG_CURRENCY = {Language.KO: "KRW", Language.EN: "USD"}
SHEET = {Language.KO: "분리 서빙", Language.EN: "Disaggregation"}
WHY = {
    Language.KO: "분리 서빙(prefill/decode) 선택 이유: 최적 통합 서빙 계획({aggregated}) 대비 {saving} 절감",
    Language.EN: "Why disaggregated serving (prefill/decode): the best aggregated plan costs {aggregated}; "
    "this plan saves {saving}",
}
LINK = {Language.KO: "서버 간 네트워크(NIC)", Language.EN: "network between servers (NICs)"}


@functools.cache
def _planned(currency: str) -> tuple[PlanResult, QuoteData]:
    request = small_chat_request(BARE)
    request = request.model_copy(
        update={"constraints": request.constraints.model_copy(update={"currency": currency})}
    )
    resolved = resolve(request, load_default())
    result = disaggregated(
        planner.plan(resolved, time_limit_s=10),
        prefill_gpu="h100-sxm",
        saving=SAVING[currency],
        network_cost=NETWORK[currency],
    )
    return result, build_quote(result, resolved, title="disaggregated")


def _money(value: Decimal, currency: str, lang: Language) -> str:
    """An amount as the quote writes it (independently of ``report``)."""
    if currency == "KRW":
        return f"{value:,.0f}원" if lang is Language.KO else f"KRW {value:,.0f}"
    return f"{value:,.2f} USD" if lang is Language.KO else f"${value:,.2f}"


def _role(r: DisaggregatedRole) -> str:
    return f"{r.gpu} TP{r.tp} {r.precision}"


def _roles(result: PlanResult) -> DisaggregatedRoles:
    roles = result.deployment_lines[0].disaggregation
    assert roles is not None
    return roles


def _expected_row(result: PlanResult, lang: Language) -> list[str]:
    roles, line = _roles(result), result.deployment_lines[0]
    p, d = roles.prefill, roles.decode
    assert roles.network_cost is not None
    return [
        ", ".join(line.workloads),
        _role(p),
        str(p.engines_per_unit),
        _role(d),
        str(d.engines_per_unit),
        f"{p.engines_per_unit}:{d.engines_per_unit}",
        str(line.replicas_peak),
        str(p.gpus_peak),
        str(d.gpus_peak),
        LINK[lang],
        f"{roles.kv_bytes_per_request / 1e6:,.1f}",
        _money(roles.network_cost.amount, result.currency, lang),
    ]


def _expected_why(result: PlanResult, lang: Language) -> str:
    tco = result.horizon_tco
    assert tco is not None
    saving = SAVING[result.currency]
    return WHY[lang].format(
        aggregated=_money(tco.amount + saving, result.currency, lang),
        saving=_money(saving, result.currency, lang),
    )


def _unit(result: PlanResult) -> str:
    roles = _roles(result)
    p, d = roles.prefill, roles.decode
    return f"(prefill {p.engines_per_unit} × {_role(p)} + decode {d.engines_per_unit} × {_role(d)})"


@functools.cache
def _files(lang: Language) -> tuple[str, str, Any]:
    _, quote = _planned(LANG_CURRENCY[lang])
    html, xlsx = (render(quote, f, lang).content for f in (ReportFormat.HTML, ReportFormat.XLSX))
    return html.decode(), pdf_text(pdf_bytes(lang)), xlsx_values(xlsx)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _squeezed(text: str) -> str:
    return re.sub(r"[\s\-]", "", text)


@functools.cache
def pdf_bytes(lang: Language) -> bytes:
    _, quote = _planned(LANG_CURRENCY[lang])
    return render(quote, ReportFormat.PDF, lang).content


def pdf_cells(content: bytes) -> str:
    """The PDF's text in reading order (``pdftotext`` without ``-layout``: a table cell by cell)."""
    done = subprocess.run(["pdftotext", "-", "-"], input=content, capture_output=True, check=True)
    return done.stdout.decode("utf-8")


@pytest.mark.parametrize("lang", list(Language))
def test_the_page_the_pdf_and_the_workbook_show_the_same_roles(lang: Language) -> None:
    result, _ = _planned(LANG_CURRENCY[lang])
    html, _, book = _files(lang)
    expected = _expected_row(result, lang)
    assert html_tables(html)["disaggregation-table"] == [expected]
    sheet = next(list(r) for r in book[SHEET[lang]].iter_rows(min_row=3, max_row=3, values_only=True))
    roles = _roles(result)
    assert sheet[1:6] == [
        expected[1],
        roles.prefill.engines_per_unit,
        expected[3],
        roles.decode.engines_per_unit,
        expected[5],
    ]
    assert sheet[6:9] == [
        result.deployment_lines[0].replicas_peak,
        roles.prefill.gpus_peak,
        roles.decode.gpus_peak,
    ]
    assert sheet[9] == LINK[lang] and sheet[10] == pytest.approx(roles.kv_bytes_per_request / 1e6)
    assert roles.network_cost is not None and Decimal(str(sheet[11])) == roles.network_cost.amount
    # The PDF's text in reading order (cells one after another; a wrapped cell loses its hyphen).
    assert _squeezed("".join(expected)) in _squeezed(pdf_cells(pdf_bytes(lang)))


@pytest.mark.parametrize("lang", list(Language))
def test_why_disaggregation_won_is_the_same_line_everywhere(lang: Language) -> None:
    result, _ = _planned(LANG_CURRENCY[lang])
    html, pdf, book = _files(lang)
    why = _expected_why(result, lang)
    assert html_fields(html)["disaggregation-why"] == [why]
    assert why in _flat(pdf)
    texts = [v for row in book[SHEET[lang]].iter_rows(values_only=True) for v in row if isinstance(v, str)]
    assert why in texts


@pytest.mark.parametrize("lang", list(Language))
def test_the_groups_and_workloads_tables_name_the_unit(lang: Language) -> None:
    result, _ = _planned(LANG_CURRENCY[lang])
    html, _, book = _files(lang)
    tables = html_tables(html)
    kind = "분리 서빙(prefill/decode)" if lang is Language.KO else "disaggregated (prefill/decode)"
    assert tables["groups-table"][0][:2] == [_unit(result), kind]
    line = result.deployment_lines[0]
    assert tables["workloads-table"][0][1] == f"{line.replicas_peak} × {_unit(result)}"
    # The workbook's Workloads sheet shows the same cells.
    workloads = [list(r) for r in book.worksheets[4].iter_rows(values_only=True)]
    assert [tables["workloads-table"][0][0], tables["workloads-table"][0][1]] in [r[:2] for r in workloads]
    assert [_unit(result), kind] in [r[:2] for r in workloads]


def test_without_an_aggregated_plan_the_quote_says_why() -> None:
    result, _ = _planned("KRW")
    reason = "no aggregated deployment meets TTFT 300 ms"
    none = disaggregated(result, saving=None, reason=reason)
    resolved = resolve(small_chat_request(BARE), load_default())
    quote = build_quote(none, resolved, title="none")
    html = render(quote, ReportFormat.HTML, Language.KO).content.decode()
    assert html_fields(html)["disaggregation-why"] == [
        f"분리 서빙(prefill/decode) 선택 이유: SLA를 충족하는 통합 서빙 계획이 없음({reason})"
    ]


def test_an_aggregated_quote_has_no_disaggregation_part() -> None:
    _, quote = _planned("USD")
    aggregated = QuoteData.model_validate_json(
        quote.model_copy(
            update={
                "disaggregation": None,
                "groups": tuple(g.model_copy(update={"disaggregation": None}) for g in quote.groups),
            }
        ).model_dump_json()
    )
    html = render(aggregated, ReportFormat.HTML, Language.EN).content.decode()
    assert "disaggregation-table" not in html and "disaggregation-why" not in html
    book = xlsx_values(render(aggregated, ReportFormat.XLSX, Language.EN).content)
    assert "Disaggregation" not in book.sheetnames
    # A stored quote keeps the roles and the comparison exactly.
    assert QuoteData.model_validate_json(quote.model_dump_json()) == quote
    assert quote.disaggregation is not None and quote.groups[0].disaggregation is not None


def test_the_page_loads_in_chromium_with_the_table_and_the_line(tmp_path: Path) -> None:
    result, _ = _planned("KRW")
    html, _, _ = _files(Language.KO)
    for driver in chromium():
        path = tmp_path / "quote-ko.html"
        path.write_text(html, encoding="utf-8")
        driver.get(path.as_uri())
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
        rows = driver.find_elements(By.CSS_SELECTOR, "#disaggregation-table tbody tr")
        assert [[c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in rows] == [
            _expected_row(result, Language.KO)
        ]
        why = driver.find_element(By.CSS_SELECTOR, '[data-field="disaggregation-why"]').text
        assert why == _expected_why(result, Language.KO)


def test_libreoffice_reads_the_sheet_as_written(tmp_path: Path) -> None:
    soffice = _soffice()  # skips loudly where LibreOffice is missing (fails on CI)
    _, quote = _planned("KRW")
    written = tmp_path / "quote.xlsx"
    written.write_bytes(render(quote, ReportFormat.XLSX, Language.KO).content)
    out = tmp_path / "out"
    command = [
        soffice,
        "--headless",
        "--norestore",
        f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
    ]
    subprocess.run(
        [*command, "--convert-to", "xlsx", "--outdir", str(out), str(written)], check=True, timeout=300
    )
    again = openpyxl.load_workbook(out / "quote.xlsx", data_only=True)[SHEET[Language.KO]]
    before = xlsx_values(written.read_bytes())[SHEET[Language.KO]]
    assert [list(r) for r in again.iter_rows(values_only=True)] == [
        list(r) for r in before.iter_rows(values_only=True)
    ]
    assert re.search(r"\d", str(again["L3"].value))
