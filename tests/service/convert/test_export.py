"""ExportPlan's request: format required, language defaulting to English, the scenario required and
checked like PlanFleet's (its field paths under ``request``); the document back as the response."""

from __future__ import annotations

import json

import pytest
from convert_support import chat

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import load_default
from report import Document, Language, ReportFormat
from service.convert.export import document_to_proto, export_request_from_proto
from solver.errors import InvalidRequest


def _scenario() -> api.PlanFleetRequest:
    return api.PlanFleetRequest(workloads=[chat()])


def _fields(exc: pytest.ExceptionInfo[InvalidRequest]) -> set[str]:
    return {v.field for v in exc.value.violations}


def test_a_good_request_names_format_language_title_and_keeps_the_scenario() -> None:
    message = api.ExportPlanRequest(
        request=_scenario(), format=api.REPORT_FORMAT_PDF, language=api.REPORT_LANGUAGE_KO, title="bid"
    )
    query = export_request_from_proto(message, load_default())
    assert (query.format, query.language, query.title) == (ReportFormat.PDF, Language.KO, "bid")
    assert query.resolved.request.inference[0].name == "chat"
    assert json.loads(query.request_json)["workloads"][0]["name"] == "chat"


def test_language_defaults_to_english() -> None:
    message = api.ExportPlanRequest(request=_scenario(), format=api.REPORT_FORMAT_HTML)
    assert export_request_from_proto(message, load_default()).language is Language.EN


def test_format_and_scenario_are_required() -> None:
    with pytest.raises(InvalidRequest) as exc:
        export_request_from_proto(api.ExportPlanRequest(), load_default())
    assert _fields(exc) == {"format", "request"}


def test_scenario_errors_carry_paths_under_request() -> None:
    scenario = _scenario()
    scenario.workloads[0].inference.model.model_id = "no-such/model"
    message = api.ExportPlanRequest(request=scenario, format=api.REPORT_FORMAT_XLSX, language=7)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest) as exc:
        export_request_from_proto(message, load_default())
    fields = _fields(exc)
    assert "language" in fields
    assert any(f.startswith("request.workloads[0]") for f in fields), fields


def test_document_to_proto_carries_bytes_media_type_and_name() -> None:
    doc = Document(content=b"%PDF-1.7", media_type="application/pdf", file_name="quote-x.pdf")
    out = document_to_proto(doc, common_pb2.Provenance(pricebook_version="v"))
    assert (out.content, out.media_type, out.file_name) == (b"%PDF-1.7", "application/pdf", "quote-x.pdf")
    assert out.provenance.pricebook_version == "v"
