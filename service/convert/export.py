"""ExportPlan: a scenario (later also a stored plan id), a format and a language in; the quote's
bytes, media type and file name out. The quote itself is made by ``report`` from domain objects."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import json_format

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from report import Document, Language, ReportFormat
from service.convert.enums import by_name
from service.convert.scenario import scenario_request
from service.convert.violations import raise_if
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import ResolvedRequest

FORMAT_FROM_PROTO: dict[api.ReportFormat.ValueType, ReportFormat] = by_name(
    api.ReportFormat, "REPORT_FORMAT", ReportFormat
)
LANGUAGE_FROM_PROTO: dict[api.ReportLanguage.ValueType, Language] = {
    api.REPORT_LANGUAGE_UNSPECIFIED: Language.EN,
    **by_name(api.ReportLanguage, "REPORT_LANGUAGE", Language),
}


@dataclass(frozen=True, slots=True)
class ExportQuery:
    """A validated ExportPlan request."""

    resolved: ResolvedRequest
    format: ReportFormat
    language: Language
    title: str
    request_json: str
    """The scenario as sent (protobuf JSON, proto field names), printed in the quote's provenance."""


def export_request_from_proto(message: api.ExportPlanRequest, book: Pricebook) -> ExportQuery:
    violations: list[FieldViolation] = []
    fmt = FORMAT_FROM_PROTO.get(message.format)
    if fmt is None:
        violations.append(FieldViolation("format", "is required: REPORT_FORMAT_HTML, _PDF or _XLSX"))
    language = LANGUAGE_FROM_PROTO.get(message.language)
    if language is None:
        violations.append(FieldViolation("language", f"unknown language {message.language}"))
    resolved: ResolvedRequest | None = None
    if message.WhichOneof("source") != "request":
        violations.append(FieldViolation("request", "is required (the scenario to quote)"))
    else:
        try:
            resolved = scenario_request(message.request, book, prefix="request")
        except InvalidRequest as exc:
            violations.extend(exc.violations)
    raise_if(violations)
    assert resolved is not None and fmt is not None and language is not None  # no violations ⇒ set
    return ExportQuery(
        resolved=resolved,
        format=fmt,
        language=language,
        title=message.title,
        request_json=json_format.MessageToJson(message.request, preserving_proto_field_name=True, indent=2),
    )


def document_to_proto(document: Document, provenance: common_pb2.Provenance) -> api.ExportPlanResponse:
    return api.ExportPlanResponse(
        content=document.content,
        media_type=document.media_type,
        file_name=document.file_name,
        provenance=provenance,
    )
