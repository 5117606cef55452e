"""ExportPlan of a saved plan (``plan_id``) end to end over gRPC, on SQLite and PostgreSQL: the quote's
numbers are the saved plan's own JSON (GetPlan's response: TCO, capex, opex, each BOM line), in HTML
and XLSX, with the saved plan's pricebook version and hash — also after a restart on a pricebook whose
price of a bought card changed (a plan made again would cost less: the quote is not re-planned).
Unknown and malformed ids, a missing or doubled source, a plan saved without its quote and a server
without a store are refused with the field or id named; the CLI's ``report --plan-id``."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import grpc
import openpyxl
import pytest
from google.protobuf import json_format

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlanError, FleetPlannerClient
from clients.cli.app import main
from clients.scenario import load_scenario
from pricebook import load_default
from service.server import ThreadedServer
from service.settings import ServerSettings
from store import open_store
from tests.e2e.pricebook_copies import with_offer_price
from tests.report.report_support import amount, bom_lines_of, exact_amount

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = "500m_krw_portfolio"


def _server(store: str, **settings: object) -> ThreadedServer:
    return ThreadedServer(ServerSettings(address="127.0.0.1:0", store=store, **settings))  # type: ignore[arg-type]


def _saved_request(label: str = "bid-2026-12") -> api.PlanFleetRequest:
    request = load_scenario(EXAMPLES / f"{EXAMPLE}.yaml", api.PlanFleetRequest)
    request.save = True
    request.label = label
    return request


class _Fields(HTMLParser):
    """The text of every element with a ``data-field`` attribute, by field name, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, list[str]] = {}
        self._open: list[tuple[str | None, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"br", "img", "meta", "link", "input", "hr", "col", "wbr"}:
            return
        self._open.append((dict(attrs).get("data-field"), []))

    def handle_endtag(self, tag: str) -> None:
        if not self._open:
            return
        name, parts = self._open.pop()
        text = "".join(parts)
        if self._open:
            self._open[-1][1].append(text)
        if name:
            self.fields.setdefault(name, []).append(text)

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][1].append(data)


def _html_fields(content: bytes) -> tuple[dict[str, list[str]], str]:
    page = content.decode("utf-8")
    parser = _Fields()
    parser.feed(page)
    return parser.fields, page


def _row_of(sheet: Any, text: str, column: int) -> int:
    for row in sheet.iter_rows():
        if row[column - 1].value == text:
            return int(row[column - 1].row)
    raise AssertionError(f"{text!r} not in column {column} of {sheet.title}")


def _check_html(content: bytes, plan_json: dict[str, Any], book_hash: str) -> None:
    fields, page = _html_fields(content)
    cost = plan_json["cost"]
    tco, capex = amount(cost["horizon_tco"]), amount(cost["capex"])
    assert [exact_amount(t) for t in fields["horizon-tco"]] == [tco]
    assert [exact_amount(t) for t in fields["capex"]] == [capex]
    assert [exact_amount(t) for t in fields["opex-monthly"]] == [amount(cost["opex_monthly"])]
    assert [exact_amount(t) for t in fields["cashflow-total"]] == [tco]
    bom = bom_lines_of(plan_json, load_default(), with_hosts=True)
    assert bom and [exact_amount(t) for t in fields["bom-amount"]] == bom
    assert [exact_amount(t) for t in fields["bom-supply"]] == [capex]
    assert book_hash in page


def _check_xlsx(content: bytes, plan_json: dict[str, Any], book_hash: str) -> None:
    values = openpyxl.load_workbook(io.BytesIO(content), data_only=True)
    cost = plan_json["cost"]
    tco, capex = amount(cost["horizon_tco"]), amount(cost["capex"])
    summary = values["Summary"]
    assert Decimal(str(summary.cell(_row_of(summary, "Horizon TCO", 1), 2).value)) == tco
    assert Decimal(str(summary.cell(_row_of(summary, "Capex", 1), 2).value)) == capex
    bom = values["BOM"]
    supply_row = _row_of(bom, "Supply amount", 5)
    assert Decimal(str(bom.cell(supply_row, 6).value)) == capex
    lines = [
        Decimal(str(bom.cell(r, 6).value))
        for r in range(4, supply_row - 1)
        if bom.cell(r, 6).value is not None
    ]
    assert lines == bom_lines_of(plan_json, load_default(), with_hosts=True)
    assumptions = values["Assumptions"]
    hash_row = _row_of(assumptions, "Pricebook hash", 1)
    assert assumptions.cell(hash_row, 2).value == book_hash


def _bought_offer(plan_json: dict[str, Any]) -> str:
    return str(
        next(line["offer_id"] for line in plan_json["fleet"] if line.get("mode") == "ACQUISITION_MODE_BUY")
    )


@pytest.mark.slow
def test_a_saved_plans_quote_is_the_saved_plan_also_after_a_price_change(
    store_spec: str, tmp_path: Path
) -> None:
    with _server(store_spec) as server, FleetPlannerClient(server.address, timeout_s=120) as client:
        planned = client.plan_fleet(_saved_request())
        saved = client.get_plan(planned.plan_id)
        html = client.export_plan(plan_id=planned.plan_id, report_format=api.REPORT_FORMAT_HTML)
        xlsx = client.export_plan(plan_id=planned.plan_id, report_format=api.REPORT_FORMAT_XLSX)
    plan_json = json.loads(json_format.MessageToJson(saved.response.plan, preserving_proto_field_name=True))
    saved_hash = saved.pricebook_content_hash
    assert planned.plan_id and plan_json["fleet"]
    _check_html(html.content, plan_json, saved_hash)
    _check_xlsx(xlsx.content, plan_json, saved_hash)
    assert html.provenance.pricebook_content_hash == saved_hash
    assert html.provenance.pricebook_version == saved.pricebook_version
    assert html.file_name.startswith("quote-bid-2026-12-")  # titled by the saved label

    # Restart on a pricebook where a card the plan buys is 30 % cheaper: a plan made now would cost
    # less, the saved plan's quote must not.
    book, _ = with_offer_price(tmp_path, _bought_offer(plan_json), Decimal("0.7"))
    with (
        _server(store_spec, pricebook_dir=book) as server,
        FleetPlannerClient(server.address, timeout_s=120) as client,
    ):
        replanned = client.plan_fleet(load_scenario(EXAMPLES / f"{EXAMPLE}.yaml", api.PlanFleetRequest))
        later = client.export_plan(
            plan_id=planned.plan_id.lower(), report_format=api.REPORT_FORMAT_XLSX, title="resent"
        )
    assert replanned.provenance.pricebook_content_hash != saved_hash
    assert Decimal(replanned.plan.cost.horizon_tco.amount) < amount(plan_json["cost"]["horizon_tco"])
    _check_xlsx(later.content, plan_json, saved_hash)
    assert later.provenance.pricebook_content_hash == saved_hash
    assert later.file_name.startswith("quote-resent-")


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = str(tmp_path_factory.mktemp("export-saved") / "plans.db")
    with _server(store) as server:
        yield server, store


def _refused(
    client: FleetPlannerClient, request: api.ExportPlanRequest | None = None, **kw: Any
) -> FleetPlanError:
    with pytest.raises(FleetPlanError) as exc:
        client.export_plan(request, **kw)
    return exc.value


def test_unknown_malformed_missing_and_doubled_sources_are_refused(sqlite_server: Any) -> None:
    server, _ = sqlite_server
    with FleetPlannerClient(server.address, timeout_s=60) as client:
        unknown = "01J0000000000000000000000Z"
        error = _refused(client, plan_id=unknown, report_format=api.REPORT_FORMAT_HTML)
        assert error.code == grpc.StatusCode.NOT_FOUND and error.reason == "PLAN_NOT_FOUND"
        assert unknown in error.message

        error = _refused(client, plan_id="not-a-plan", report_format=api.REPORT_FORMAT_HTML)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in error.violations] == ["plan_id"]

        error = _refused(client, report_format=api.REPORT_FORMAT_HTML)  # neither
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in error.violations] == ["request"]
        assert "plan_id" in error.violations[0].description

        scenario = load_scenario(EXAMPLES / "rtx5090_cluster.yaml", api.PlanFleetRequest)
        both = api.ExportPlanRequest(request=scenario, format=api.REPORT_FORMAT_HTML)
        error = _refused(client, both, plan_id=unknown)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in error.violations] == ["plan_id"]

        # A plan id and no format: both fields named at once, before the store is read.
        error = _refused(client, plan_id=unknown)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in error.violations] == ["format"]


def test_a_plan_saved_without_its_quote_is_refused_naming_plan_id(sqlite_server: Any) -> None:
    server, store_path = sqlite_server
    request = load_scenario(EXAMPLES / "rtx5090_cluster.yaml", api.PlanFleetRequest)
    request.save = True
    with FleetPlannerClient(server.address, timeout_s=60) as client:
        plan_id = client.plan_fleet(request).plan_id
        exported = client.export_plan(plan_id=plan_id, report_format=api.REPORT_FORMAT_HTML)
        assert exported.content.startswith(b"<!DOCTYPE html>")
        # As a server before quotes were saved would have left it.
        store = open_store(store_path)
        assert store is not None
        try:
            store.set_document(plan_id, None)
        finally:
            store.close()
        error = _refused(client, plan_id=plan_id, report_format=api.REPORT_FORMAT_HTML)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in error.violations] == ["plan_id"]
    assert "saved without its quote" in error.violations[0].description


def test_without_a_store_a_plan_id_is_failed_precondition() -> None:
    with _server("none") as server, FleetPlannerClient(server.address, timeout_s=60) as client:
        error = _refused(client, plan_id="01J0000000000000000000000Z", report_format=api.REPORT_FORMAT_PDF)
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION and error.reason == "STORE_DISABLED"


def test_cli_report_by_plan_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "plans.db")
    scenario = str(EXAMPLES / "rtx5090_cluster.yaml")
    assert main(["plan", scenario, "--save", "--label", "cli-bid", "--json", "--store", store]) == 0
    plan_id = json.loads(capsys.readouterr().out)["plan_id"]
    output = tmp_path / "quote.xlsx"
    assert main(["report", "--plan-id", plan_id, "--output", str(output), "--store", store]) == 0
    assert f"wrote {output}" in capsys.readouterr().out
    assert output.read_bytes().startswith(b"PK")

    for argv in (["report", scenario, "--plan-id", plan_id], ["report"]):
        assert main([*argv, "--output", str(tmp_path / "x.html"), "--store", store]) == 2
        assert "--plan-id" in capsys.readouterr().err
