"""ExportPlan end to end: the real server on loopback, the client, every example in every format
(slow), the quote's totals equal to PlanFleet's answer for the same scenario, bad input refused."""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import grpc
import openpyxl
import pytest

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients import FleetPlanError, FleetPlannerClient
from clients.scenario import load_scenario
from service.server import ThreadedServer, start_in_thread
from service.settings import ServerSettings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MAGIC = {
    api.REPORT_FORMAT_HTML: (b"<!DOCTYPE html>", "text/html", ".html"),
    api.REPORT_FORMAT_PDF: (b"%PDF-", "application/pdf", ".pdf"),
    api.REPORT_FORMAT_XLSX: (b"PK", "application/vnd.openxmlformats", ".xlsx"),
}


@pytest.fixture(scope="module")
def client() -> Iterator[FleetPlannerClient]:
    server: ThreadedServer = start_in_thread(ServerSettings(address="127.0.0.1:0", grace_period_s=1.0))
    try:
        with FleetPlannerClient(server.address, timeout_s=120) as c:
            yield c
    finally:
        server.stop(grace_s=0.5)


def _export(
    client: FleetPlannerClient, name: str, fmt: api.ReportFormat.ValueType, lang: api.ReportLanguage.ValueType
) -> api.ExportPlanResponse:
    scenario = load_scenario(EXAMPLES / f"{name}.yaml", api.PlanFleetRequest)
    return client.export_plan(api.ExportPlanRequest(request=scenario, format=fmt, language=lang, title=name))


def _check(response: api.ExportPlanResponse, fmt: api.ReportFormat.ValueType, name: str) -> None:
    magic, media, suffix = MAGIC[fmt]
    assert response.content.startswith(magic)
    assert response.media_type.startswith(media)
    assert response.file_name.startswith(f"quote-{name}-") and response.file_name.endswith(suffix)
    assert response.provenance.pricebook_content_hash


def test_xlsx_totals_equal_plan_fleets_answer(client: FleetPlannerClient) -> None:
    name = "rtx5090_cluster"
    response = _export(client, name, api.REPORT_FORMAT_XLSX, api.REPORT_LANGUAGE_EN)
    _check(response, api.REPORT_FORMAT_XLSX, name)
    plan = client.plan_fleet(load_scenario(EXAMPLES / f"{name}.yaml", api.PlanFleetRequest)).plan
    book = openpyxl.load_workbook(io.BytesIO(response.content), data_only=True)
    summary = {row[0].value: row[1].value for row in book["Summary"].iter_rows() if row[0].value}
    assert Decimal(str(summary["Horizon TCO"])) == Decimal(plan.cost.horizon_tco.amount)
    assert Decimal(str(summary["Capex"])) == Decimal(plan.cost.capex.amount)


def test_bad_input_is_invalid_argument_naming_the_field(client: FleetPlannerClient) -> None:
    scenario = load_scenario(EXAMPLES / "rtx5090_cluster.yaml", api.PlanFleetRequest)
    with pytest.raises(FleetPlanError) as exc:
        client.export_plan(api.ExportPlanRequest(request=scenario))
    assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in exc.value.violations] == ["format"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_every_example_exports_every_format(client: FleetPlannerClient, name: str) -> None:
    for fmt, lang in (
        (api.REPORT_FORMAT_HTML, api.REPORT_LANGUAGE_EN),
        (api.REPORT_FORMAT_XLSX, api.REPORT_LANGUAGE_KO),
        (api.REPORT_FORMAT_PDF, api.REPORT_LANGUAGE_KO),
    ):
        _check(_export(client, name, fmt, lang), fmt, name)
