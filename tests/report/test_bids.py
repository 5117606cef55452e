"""The two bids of ``examples/bids/`` through the documented workflow — ``fleetplan plan … --save
--json``, ``fleetplan plans show ID`` (the CLI table), then ONE ``fleetplan report --plan-id ID``
writing PDF, HTML and XLSX — and every number the quote shows checked equal across the three
files, the CLI table and the JSON answer (issue 30). Slow: two plans and a PDF each."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from html import escape
from pathlib import Path
from typing import Any

import pytest
import yaml
from quote_files import html_fields, html_tables, pdf_text, xlsx_values
from report_support import BIDS, amount, exact_amount

from clients.cli.app import main

pytestmark = pytest.mark.slow

CUSTOMER = "경기도 정보화정책관"
QUOTE_NUMBER = "제2026-1206호"


@dataclass(frozen=True)
class Bid:
    name: str
    lang: str
    currency: str
    plan: dict[str, Any]
    """The saved plan as ``plan --save --json`` answered it."""
    table: str
    """``plans show ID``: the CLI's tables of the saved plan."""
    html: str
    pdf: str
    xlsx: Any
    scenario: dict[str, Any]
    """The scenario file as written."""
    quoted_on: str
    """The day the report was run (the quote's date)."""

    def money(self, value: Decimal) -> str:
        """An amount as the quote writes it in a table (independently of ``report``)."""
        if self.currency == "KRW":
            return f"{value:,.0f}원" if self.lang == "ko" else f"KRW {value:,.0f}"
        return f"${value:,.2f}" if self.lang == "en" else f"{value:,.2f} USD"


def _run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0, argv
    return out.getvalue()


def _bid(tmp_path: Path, name: str, lang: str) -> Bid:
    store = str(tmp_path / "plans.db")
    scenario = str(BIDS / f"{name}.yaml")
    answer = json.loads(_run("plan", scenario, "--save", "--json", "--store", store))
    table = _run("plans", "show", answer["plan_id"], "--store", store)
    outputs = [tmp_path / f"quote.{suffix}" for suffix in ("pdf", "html", "xlsx")]
    argv = ["report", "--plan-id", answer["plan_id"], "--lang", lang, "--store", store, "--timeout-s", "300"]
    argv += [
        "--supplier-profile",
        str(BIDS / "supplier_profile.yaml"),
        "--customer",
        CUSTOMER,
        "--quote-number",
        QUOTE_NUMBER,
        "--title",
        "bid",
    ]
    for output in outputs:
        argv += ["--output", str(output)]
    written = _run(*argv)
    quoted_on = dt.date.today().isoformat()
    assert all(f"wrote {o}" in written for o in outputs)
    pdf, html, xlsx = (o.read_bytes() for o in outputs)
    currency = answer["plan"]["cost"]["horizon_tco"]["currency_code"]
    written_scenario = yaml.safe_load((BIDS / f"{name}.yaml").read_text(encoding="utf-8"))
    plan, text = answer["plan"], html.decode()
    return Bid(
        name, lang, currency, plan, table, text, pdf_text(pdf), xlsx_values(xlsx), written_scenario, quoted_on
    )


@pytest.fixture(scope="module", params=[("kr_public_rag_bid", "ko"), ("usd_startup_rent_or_buy", "en")])
def bid(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bid:
    name, lang = request.param
    return _bid(tmp_path_factory.mktemp(name), name, lang)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _sheet_numbers(bid: Bid, sheet_index: int) -> set[Decimal]:
    sheet = bid.xlsx.worksheets[sheet_index]
    return {
        Decimal(str(v)).quantize(Decimal("0.01"))
        for row in sheet.iter_rows(values_only=True)
        for v in row
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def _shown_everywhere(bid: Bid, field: str, expected: Decimal, sheet_index: int) -> None:
    """``field`` on the page is ``expected``; the PDF shows it as the page does; the workbook's
    sheet holds it as a number."""
    shown = html_fields(bid.html)[field][0]
    assert exact_amount(shown) == expected, (field, shown)
    assert bid.money(expected) in _flat(bid.pdf), (field, bid.money(expected))
    assert expected.quantize(Decimal("0.01")) in _sheet_numbers(bid, sheet_index), field


def test_the_header_block_is_the_profiles_and_the_flags_in_every_file(bid: Bid) -> None:
    """수신, 견적번호, 견적일 (the day it was run), 유효기간, 납기, 결제조건 and the supplier's 상호,
    사업자등록번호, 대표자, 주소, 담당자: from ``--customer``, ``--quote-number`` and the supplier
    profile, in the page, the PDF and the workbook's first sheet."""
    profile = yaml.safe_load((BIDS / "supplier_profile.yaml").read_text(encoding="utf-8"))
    expected = [CUSTOMER, QUOTE_NUMBER, bid.quoted_on, *profile.values()]
    assert len(expected) == 11
    pdf = _flat(bid.pdf)
    summary = {row[1] for row in bid.xlsx.worksheets[0].iter_rows(max_col=2, values_only=True)}
    for value in expected:
        assert f"<dd>{escape(value)}</dd>" in bid.html, value
        assert _flat(value) in pdf and value in summary, value


def test_totals_are_the_same_in_every_file_the_table_and_the_json(bid: Bid) -> None:
    cost = bid.plan["cost"]
    tco, capex = amount(cost["horizon_tco"]), amount(cost["capex"])
    _shown_everywhere(bid, "horizon-tco", tco, 0)
    _shown_everywhere(bid, "capex", capex, 0)
    _shown_everywhere(bid, "bom-supply", capex, 2)
    unit = "KRW" if bid.currency == "KRW" else "USD"
    places = 0 if bid.currency == "KRW" else 2
    assert f"{tco:,.{places}f} {unit} over" in bid.table and f"capex {capex:,.{places}f} {unit}" in bid.table
    vat = cost.get("vat")
    if vat is None:
        assert "bom-vat" not in html_fields(bid.html)  # no VAT nobody asked for
        proposed = capex
    else:
        capex_vat = amount(vat["capex_vat"])
        _shown_everywhere(bid, "bom-vat", capex_vat, 2)
        assert f"{capex_vat:,} KRW" in bid.table
        proposed = capex + capex_vat
    _shown_everywhere(bid, "proposed-amount", proposed, 0)


def test_budget_spend_and_remaining_are_the_same_everywhere(bid: Bid) -> None:
    budget = Decimal(bid.scenario["constraints"]["capex_budget"].split()[0])
    capex = amount(bid.plan["cost"]["capex"])
    _shown_everywhere(bid, "budget", budget, 0)
    _shown_everywhere(bid, "spend", capex, 0)
    _shown_everywhere(bid, "remaining", budget - capex, 0)


def test_power_and_rack_units_are_the_plans(bid: Bid) -> None:
    bought = [line for line in bid.plan["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"]
    fields = html_fields(bid.html)
    kw = sum((Decimal(str(line["power_kw"])) for line in bought), Decimal(0))
    ru = sum((Decimal(str(line["rack_units"])) for line in bought), Decimal(0))
    assert Decimal(fields["power-kw"][0].replace(",", "")) == kw.quantize(Decimal("0.1"))
    assert Decimal(fields["rack-units"][0].replace(",", "")) == ru.quantize(Decimal(1))
    numbers = _sheet_numbers(bid, 0)
    assert kw.quantize(Decimal("0.01")) in numbers and ru.quantize(Decimal("0.01")) in numbers
    pdf = _flat(bid.pdf)  # the labels: 최대 소비전력(kW…) / Power at full load (kW…), 랙 공간(U) / Rack units
    assert re.search(rf"\(kW[^0-9]*{re.escape(str(kw.quantize(Decimal('0.1'))))} ", pdf)
    assert re.search(rf"(\(U\)|Rack units) {ru.quantize(Decimal(1))} ", pdf)
    assert f"on site: {kw:,.1f} kW at full load (incl. PUE), {ru:,.0f} RU" in bid.table


def _cli_rows(bid: Bid, heading: str, count: int) -> list[list[str]]:
    """The first ``count`` rows of the CLI table under ``heading`` (its header and rule skipped),
    split into cells at runs of two or more spaces."""
    lines = bid.table.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    return [re.split(r"\s{2,}", line.strip()) for line in lines[start + 4 : start + 4 + count]]


def _pdf_row(bid: Bid, name: str) -> str:
    """The PDF's workload-table line of ``name``: the first laid-out line that starts with the name
    (or its part up to a hyphen, where the cell wraps) and shows a deployment (``N × GPU …``)."""
    starts = (name, name[: name.index("-") + 1]) if "-" in name else (name,)
    lines = (line.strip() for line in bid.pdf.splitlines())
    return next(f"{line} " for line in lines if line.startswith(starts) and " × " in line)


def _as_cli(shown: str) -> str:
    """A deployment cell of a Korean quote as the (English) CLI words it: shared pools and
    co-located parts of a card."""
    shown = re.sub(r"카드 (\d+/\d+) 공유", r"\1 of a card", shown)
    shown = re.sub(r"카드마다 (\d+/\d+)", r"\1 of each card", shown)
    return shown.replace("공유", "shared")


def _hundredths(value: float | str) -> Decimal:
    return Decimal(str(value).replace(",", "")).quantize(Decimal("0.01"))


def test_workload_rows_agree_everywhere_and_none_is_empty(bid: Bid) -> None:
    answer = {row["workload_name"]: row for row in bid.plan["workload_rows"]}
    page = html_tables(bid.html)["workloads-table"]
    assert [row[0] for row in page] == list(answer)
    sheet = [row for row in bid.xlsx.worksheets[4].iter_rows(min_row=2, values_only=True) if row[0]][
        : len(page)
    ]
    cli = _cli_rows(bid, "Workloads", len(page))
    pdf = _flat(bid.pdf)
    embeddings = {row[0]: row for row in html_tables(bid.html).get("embeddings-table", [])}
    for shown, cells, cli_cells in zip(page, sheet, cli, strict=True):
        name, uses, replicas, aggregate = shown[0], shown[1], shown[2], shown[6]
        saved = answer[name]
        assert (cells[0], cells[1]) == (name, uses) and cli_cells[:2] == [
            name,
            _as_cli(uses),
        ]
        assert _hundredths(replicas) == _hundredths(saved["replicas"]) == _hundredths(cells[2])
        assert _hundredths(cli_cells[2]) == _hundredths(saved["replicas"])
        assert Decimal(replicas) > 0 and saved["served"]  # serving demand, never 0 replicas
        row_in_pdf = _pdf_row(bid, name)
        assert " × " in row_in_pdf and f" {replicas} " in row_in_pdf, row_in_pdf
        if name in embeddings:  # in embeddings/s and input tok/s instead of output speed
            assert aggregate == "–" and cells[8] is None
            per_s, input_tok_s = embeddings[name][1], embeddings[name][2]
            inputs = next(
                w["inference"]["input_tokens"] for w in bid.scenario["workloads"] if w["name"] == name
            )
            assert per_s == f"{saved['capacity_req_s']:,.1f}" and Decimal(per_s.replace(",", "")) > 0
            assert input_tok_s == f"{saved['capacity_req_s'] * inputs:,.0f}" and input_tok_s in pdf
            continue
        assert aggregate == f"{saved['output_tok_s']:,.0f}" == f"{cells[8]:,.0f}"
        assert Decimal(aggregate.replace(",", "")) > 0 and f" {aggregate} " in row_in_pdf
        assert aggregate in _whole_numbers(" ".join(cli_cells))  # the CLI shows decimals below 100


def test_pool_rows_agree_everywhere_and_none_is_empty(bid: Bid) -> None:
    groups = bid.plan["deployment_groups"]
    page = html_tables(bid.html)["groups-table"]
    names = {(row[0], row[1]) for row in page}
    sheet = [row for row in bid.xlsx.worksheets[4].iter_rows(values_only=True) if (row[0], row[1]) in names]
    cli = _cli_rows(bid, "Deployment groups", len(groups))
    pdf = _flat(bid.pdf)
    for group, shown, cells, cli_cells in zip(groups, page, sheet, cli, strict=True):
        peak, off_peak = group["replicas_peak"], group.get("replicas_off_peak", 0)
        gpus, hour = f"{group['gpus_peak']:g}", f"{group.get('peak_hour', 0):02d}:00"
        tok_s, utilization = f"{group['output_tok_s']:,.0f}", group["utilization"]
        assert shown[2:6] == [str(peak), str(off_peak), gpus, hour] == cli_cells[2:6]
        assert (cells[2], cells[3], f"{cells[4]:g}", cells[5]) == (peak, off_peak, gpus, hour)
        assert shown[0].startswith(group["gpu_id"]) and cli_cells[0] == _as_cli(shown[0])
        assert shown[7] == tok_s == f"{cells[7]:,.0f}" and tok_s in _whole_numbers(cli_cells[7])
        assert shown[8] == f"{utilization:.1%}" and cli_cells[8] == f"{utilization:.0%}"
        assert cells[8] == pytest.approx(utilization, rel=1e-9)
        assert f"{peak} {off_peak} {gpus} {hour}" in pdf and tok_s in pdf and shown[8] in pdf
        served = [share["workload_name"] for share in group["shares"] if share.get("output_tok_s", 0) > 0]
        assert served and peak > 0  # a pool serving demand never shows 0 replicas
        assert all(name in shown[6] and name in cli_cells[6] for name in served)


def test_every_bom_gpu_serves_a_workload(bid: Bid) -> None:
    """Each GPU line of the customer's BOM (named by its product name) is a fleet line of the plan
    whose GPU the workload rows use, in every file and in the answer."""
    fleet = {
        line["gpu_name"]: line for line in bid.plan["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"
    }
    bom = [row for row in html_tables(bid.html)["bom-table"] if row[1] in fleet]
    assert sorted(row[1] for row in bom) == sorted(fleet)
    page = html_tables(bid.html)["workloads-table"]
    used_on_page = {word for row in page for word in row[1].split()}
    used_in_answer = {use["gpu_id"] for row in bid.plan["workload_rows"] for use in row["uses"]}
    for row in bom:
        line = fleet[row[1]]
        assert int(row[3]) == line["gpu_count"]
        assert line["gpu_id"] in used_on_page and line["gpu_id"] in used_in_answer
        assert set(line["workload_names"]) <= {w["workload_name"] for w in bid.plan["workload_rows"]}


def _whole_numbers(line: str) -> set[str]:
    """Every number of a CLI table line rounded to a whole number as the quote shows it."""
    out = set()
    for word in line.split():
        try:
            out.add(f"{Decimal(word.replace(',', '')):,.0f}")
        except ArithmeticError:
            continue
    return out


def _percent(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:+.1f}%"


def test_sensitivity_is_the_saved_plans_in_every_file(bid: Bid) -> None:
    rows = html_tables(bid.html)["sensitivity-table"]
    answer = bid.plan.get("sensitivity", [])
    assert len(rows) == len(answer) > 0
    sheet = list(bid.xlsx.worksheets[6].iter_rows(min_row=2, max_row=1 + len(rows), values_only=True))
    pdf = _flat(bid.pdf)
    cli = _cli_rows(bid, "Price sensitivity", len(rows))
    for shown, cells, saved, cli_cells in zip(rows, sheet, answer, cli, strict=True):
        assert cli_cells[0] == shown[0] == saved["subject"]
        for column, key in ((2, "change_down_fraction"), (3, "change_up_fraction")):
            expected = _percent(saved.get(key))
            in_cli = "-" if saved.get(key) is None else f"{saved[key]:+.0%}"
            assert cli_cells[column] == in_cli, (cli_cells, saved)
            if expected is None:
                assert cells[column] is None
                continue
            assert expected in shown[column], (shown, saved)
            in_book = cells[column]
            in_book_text = _percent(in_book) if isinstance(in_book, float) else str(in_book)
            assert in_book_text is not None and in_book_text.endswith(expected)
            assert expected in pdf
    assert re.search(r"(Annex|부록) 1\.", pdf)  # the assumptions come after, as an annex
