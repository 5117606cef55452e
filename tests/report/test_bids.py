"""The two bids of ``examples/bids/`` through the documented workflow — ``fleetplan plan … --save
--json``, ``fleetplan plans show ID`` (the CLI table), then ONE ``fleetplan report --plan-id ID``
writing PDF, HTML and XLSX — and every number the quote shows checked equal across the three
files, the CLI table and the JSON answer (issue 30). Slow: two plans and a PDF each."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from quote_files import html_fields, html_tables, pdf_text, xlsx_values
from report_support import BIDS, amount, exact_amount

from clients.cli.app import main

pytestmark = pytest.mark.slow


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
        "수신처",
        "--title",
        "bid",
    ]
    for output in outputs:
        argv += ["--output", str(output)]
    written = _run(*argv)
    assert all(f"wrote {o}" in written for o in outputs)
    pdf, html, xlsx = (o.read_bytes() for o in outputs)
    currency = answer["plan"]["cost"]["horizon_tco"]["currency_code"]
    return Bid(name, lang, currency, answer["plan"], table, html.decode(), pdf_text(pdf), xlsx_values(xlsx))


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
    scenario = yaml.safe_load((BIDS / f"{bid.name}.yaml").read_text(encoding="utf-8"))
    budget = Decimal(scenario["constraints"]["capex_budget"].split()[0])
    capex = amount(bid.plan["cost"]["capex"])
    _shown_everywhere(bid, "budget", budget, 0)
    _shown_everywhere(bid, "spend", capex, 0)
    _shown_everywhere(bid, "remaining", budget - capex, 0)


def test_power_and_rack_units_are_the_plans(bid: Bid) -> None:
    bought = [line for line in bid.plan["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"]
    fields = html_fields(bid.html)
    kw = sum(Decimal(str(line["power_kw"])) for line in bought)
    ru = sum(Decimal(str(line["rack_units"])) for line in bought)
    assert Decimal(fields["power-kw"][0].replace(",", "")) == kw.quantize(Decimal("0.1"))
    assert Decimal(fields["rack-units"][0].replace(",", "")) == ru.quantize(Decimal(1))
    numbers = _sheet_numbers(bid, 0)
    assert kw.quantize(Decimal("0.01")) in numbers and ru.quantize(Decimal("0.01")) in numbers


def test_workload_rows_agree_and_every_bought_gpu_serves_a_workload(bid: Bid) -> None:
    page = html_tables(bid.html)["workloads-table"]
    sheet = [row for row in bid.xlsx.worksheets[4].iter_rows(min_row=2, values_only=True) if row[0]][
        : len(page)
    ]
    pdf = _flat(bid.pdf)
    embeddings = {row[0]: row for row in html_tables(bid.html).get("embeddings-table", [])}
    for shown, cells in zip(page, sheet, strict=True):
        name, uses, replicas, aggregate = shown[0], shown[1], shown[2], shown[6]
        assert (cells[0], cells[1]) == (name, uses)
        assert Decimal(str(cells[2])).quantize(Decimal("0.01")) == Decimal(replicas)
        assert Decimal(replicas) > 0  # serving demand
        assert name in pdf
        if name in embeddings:  # in embeddings/s and input tok/s instead of output speed
            assert aggregate == "–" and cells[8] is None
            assert Decimal(embeddings[name][1].replace(",", "")) > 0 and embeddings[name][2] in pdf
            continue
        assert f"{cells[8]:,.0f}" == aggregate
        assert Decimal(aggregate.replace(",", "")) > 0 and aggregate in pdf
        cli = next(line for line in bid.table.splitlines() if line.startswith(name + " "))
        assert aggregate in _whole_numbers(cli)  # the CLI's agg tok/s column (it shows decimals below 100)
    gpus_serving = {word for row in page for word in row[1].split()}
    bought = {line["gpu_id"] for line in bid.plan["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY"}
    assert bought <= gpus_serving


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
    for shown, cells, saved in zip(rows, sheet, answer, strict=True):
        for column, key in ((2, "change_down_fraction"), (3, "change_up_fraction")):
            expected = _percent(saved.get(key))
            if expected is None:
                assert cells[column] is None
                continue
            assert expected in shown[column], (shown, saved)
            in_book = cells[column]
            assert (_percent(in_book) if isinstance(in_book, float) else str(in_book)).endswith(expected)
            assert expected in pdf
    assert re.search(r"(Annex|부록) 1\.", pdf)  # the assumptions come after, as an annex
