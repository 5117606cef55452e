"""ExportPlan's request: format required, language defaulting to English, the scenario required and
checked like PlanFleet's (its field paths under ``request``); the document back as the response."""

from __future__ import annotations

import datetime as dt
import functools
import json

import pytest
from convert_support import chat

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook import load_default
from report import Document, Language, QuoteData, ReportFormat, build_quote
from report.presentation import Audience, QuoteHeader
from service.convert.export import documents_to_proto, export_request_from_proto, saved_quote
from service.convert.scenario import scenario_request
from solver import planner
from solver.errors import InvalidRequest
from store.records import StoredPlan


def _scenario() -> api.PlanFleetRequest:
    return api.PlanFleetRequest(workloads=[chat()])


@functools.cache
def _quote() -> QuoteData:
    resolved = scenario_request(_scenario(), load_default())
    return build_quote(planner.plan(resolved, time_limit_s=20), resolved, quoted_on=dt.date(2026, 12, 3))


def _fields(exc: pytest.ExceptionInfo[InvalidRequest]) -> set[str]:
    return {v.field for v in exc.value.violations}


def test_a_good_request_names_format_language_title_and_keeps_the_scenario() -> None:
    message = api.ExportPlanRequest(
        request=_scenario(), format=api.REPORT_FORMAT_PDF, language=api.REPORT_LANGUAGE_KO, title="bid"
    )
    query = export_request_from_proto(message, load_default())
    assert (query.formats, query.language, query.title) == ((ReportFormat.PDF,), Language.KO, "bid")
    assert query.scenario is not None and query.plan_id is None
    assert query.scenario.resolved.request.inference[0].name == "chat"
    assert json.loads(query.scenario.request_json)["workloads"][0]["name"] == "chat"


PLAN_ID = "01JE0000000000000000000000"


def test_a_plan_id_is_the_source_instead_of_a_scenario() -> None:
    message = api.ExportPlanRequest(plan_id=PLAN_ID.lower(), format=api.REPORT_FORMAT_XLSX)
    query = export_request_from_proto(message, load_default())
    assert (query.plan_id, query.scenario) == (PLAN_ID, None)


def test_a_malformed_plan_id_names_plan_id() -> None:
    message = api.ExportPlanRequest(plan_id="plan-7", format=api.REPORT_FORMAT_XLSX)
    with pytest.raises(InvalidRequest) as exc:
        export_request_from_proto(message, load_default())
    assert _fields(exc) == {"plan_id"}


def _stored(document: str | None) -> StoredPlan:
    return StoredPlan(
        plan_id=PLAN_ID, request=b"", response=b"", document=document, created_at=dt.datetime.now(dt.UTC)
    )


def test_a_saved_quote_is_read_back_and_retitled() -> None:
    quote = _quote()
    assert saved_quote(_stored(quote.model_dump_json()), "") == quote
    assert saved_quote(_stored(quote.model_dump_json()), "resent").title == "resent"


@pytest.mark.parametrize("document", [None, '{"schema_version": 1}', "not json"])
def test_a_plan_without_a_readable_quote_names_plan_id(document: str | None) -> None:
    with pytest.raises(InvalidRequest) as exc:
        saved_quote(_stored(document), "")
    assert _fields(exc) == {"plan_id"}
    assert PLAN_ID in exc.value.violations[0].reason


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


def test_also_formats_follow_format_in_order() -> None:
    message = api.ExportPlanRequest(
        plan_id=PLAN_ID,
        format=api.REPORT_FORMAT_PDF,
        also_formats=[api.REPORT_FORMAT_HTML, api.REPORT_FORMAT_XLSX],
    )
    query = export_request_from_proto(message, load_default())
    assert query.formats == (ReportFormat.PDF, ReportFormat.HTML, ReportFormat.XLSX)


def test_a_format_asked_for_twice_or_unset_names_its_field() -> None:
    message = api.ExportPlanRequest(
        plan_id=PLAN_ID,
        format=api.REPORT_FORMAT_PDF,
        also_formats=[api.REPORT_FORMAT_HTML, api.REPORT_FORMAT_PDF, api.REPORT_FORMAT_UNSPECIFIED],
    )
    with pytest.raises(InvalidRequest) as exc:
        export_request_from_proto(message, load_default())
    assert _fields(exc) == {"also_formats[1]", "also_formats[2]"}
    assert "pdf is asked for twice" in str(exc.value)


def test_documents_to_proto_carries_every_document_the_first_also_on_top() -> None:
    pdf = Document(content=b"%PDF-1.7", media_type="application/pdf", file_name="quote-x.pdf")
    html = Document(
        content=b"<!DOCTYPE html>", media_type="text/html; charset=utf-8", file_name="quote-x.html"
    )
    out = documents_to_proto([pdf, html], common_pb2.Provenance(pricebook_version="v"))
    assert (out.content, out.media_type, out.file_name) == (b"%PDF-1.7", "application/pdf", "quote-x.pdf")
    assert [(d.content, d.file_name) for d in out.documents] == [
        (b"%PDF-1.7", "quote-x.pdf"),
        (b"<!DOCTYPE html>", "quote-x.html"),
    ]
    assert out.provenance.pricebook_version == "v"


def test_audience_and_header_are_read_and_put_on_the_quote() -> None:
    header = api.QuoteHeader(customer=" 한국정보원 ", supplier_name="주식회사 예시", validity="30일")
    message = api.ExportPlanRequest(
        plan_id=PLAN_ID, format=api.REPORT_FORMAT_PDF, audience=api.REPORT_AUDIENCE_INTERNAL, header=header
    )
    query = export_request_from_proto(message, load_default())
    assert query.audience is Audience.INTERNAL
    assert (query.header.customer, query.header.supplier_name, query.header.validity) == (
        "한국정보원",
        "주식회사 예시",
        "30일",
    )
    unset = export_request_from_proto(
        api.ExportPlanRequest(plan_id=PLAN_ID, format=api.REPORT_FORMAT_PDF), load_default()
    )
    assert unset.audience is Audience.CUSTOMER and unset.header == QuoteHeader()


def test_an_unknown_audience_names_audience() -> None:
    message = api.ExportPlanRequest(plan_id=PLAN_ID, format=api.REPORT_FORMAT_PDF, audience=9)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest) as exc:
        export_request_from_proto(message, load_default())
    assert _fields(exc) == {"audience"}
