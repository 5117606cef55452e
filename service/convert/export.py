"""ExportPlan: a scenario or a saved plan's id, a format and a language in; the quote's bytes,
media type and file name out. The quote itself is made by ``report`` from domain objects.

A saved plan is not planned again: PlanFleet with ``save`` keeps the plan's ``QuoteData`` (JSON,
the same for every format and language) beside the saved response, and exporting it renders that
document, so the numbers, pricebook version and hash are the saved plan's even after the
pricebook changed (``saved_quote``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from google.protobuf import json_format
from google.protobuf.message import Message
from pydantic import ValidationError

from api.fleetplan.v1 import common_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api
from pricebook.schema import Pricebook
from report import Document, Language, QuoteData, ReportFormat
from report.presentation import Audience, QuoteHeader
from service.convert.enums import by_name
from service.convert.plan_store import plan_id_from
from service.convert.scenario import scenario_request
from service.convert.violations import raise_if
from solver.errors import FieldViolation, InvalidRequest
from solver.resolve import ResolvedRequest
from store.records import StoredPlan

FORMAT_FROM_PROTO: dict[api.ReportFormat.ValueType, ReportFormat] = by_name(
    api.ReportFormat, "REPORT_FORMAT", ReportFormat
)
AUDIENCE_FROM_PROTO: dict[api.ReportAudience.ValueType, Audience] = {
    api.REPORT_AUDIENCE_UNSPECIFIED: Audience.CUSTOMER,
    **by_name(api.ReportAudience, "REPORT_AUDIENCE", Audience),
}
LANGUAGE_FROM_PROTO: dict[api.ReportLanguage.ValueType, Language] = {
    api.REPORT_LANGUAGE_UNSPECIFIED: Language.EN,
    **by_name(api.ReportLanguage, "REPORT_LANGUAGE", Language),
}


@dataclass(frozen=True, slots=True)
class ScenarioSource:
    """A scenario to plan now."""

    resolved: ResolvedRequest
    request_json: str
    """The scenario as sent (protobuf JSON, proto field names), printed in the quote's provenance."""


@dataclass(frozen=True, slots=True)
class ExportQuery:
    """A validated ExportPlan request: exactly one of ``scenario`` and ``plan_id`` is set."""

    formats: tuple[ReportFormat, ...]
    """Every format to render from the one plan: ``format`` first, then ``also_formats``."""
    language: Language
    title: str
    scenario: ScenarioSource | None
    plan_id: str | None
    """A saved plan's id (upper-case ULID)."""
    audience: Audience = Audience.CUSTOMER
    header: QuoteHeader = field(default_factory=QuoteHeader)

    def present(self, quote: QuoteData) -> QuoteData:
        """``quote`` for this export's audience, with its header (and title, when one is given)."""
        update: dict[str, object] = {"audience": self.audience, "header": self.header}
        if self.title:
            update["title"] = self.title
        return quote.model_copy(update=update)


def request_json(message: Message) -> str:
    """A request as the quote's provenance prints it (protobuf JSON, proto field names)."""
    return json_format.MessageToJson(message, preserving_proto_field_name=True, indent=2)


def _source(
    message: api.ExportPlanRequest, book: Pricebook, violations: list[FieldViolation]
) -> tuple[ScenarioSource | None, str | None]:
    which = message.WhichOneof("source")
    if which == "plan_id":
        try:
            return None, plan_id_from("plan_id", message.plan_id)
        except InvalidRequest as exc:
            violations.extend(exc.violations)
            return None, None
    if which != "request":
        violations.append(
            FieldViolation("request", "is required: a scenario to plan, or plan_id (a saved plan) instead")
        )
        return None, None
    try:
        resolved = scenario_request(message.request, book, prefix="request")
    except InvalidRequest as exc:
        violations.extend(exc.violations)
        return None, None
    return ScenarioSource(resolved, request_json(message.request)), None


def _formats(message: api.ExportPlanRequest, violations: list[FieldViolation]) -> tuple[ReportFormat, ...]:
    formats: list[ReportFormat] = []
    fmt = FORMAT_FROM_PROTO.get(message.format)
    if fmt is None:
        violations.append(FieldViolation("format", "is required: REPORT_FORMAT_HTML, _PDF or _XLSX"))
    else:
        formats.append(fmt)
    for index, value in enumerate(message.also_formats):
        field = f"also_formats[{index}]"
        more = FORMAT_FROM_PROTO.get(value)
        if more is None:
            violations.append(FieldViolation(field, "must be REPORT_FORMAT_HTML, _PDF or _XLSX"))
        elif more in formats:
            reason = f"{more.value} is asked for twice; give each format once"
            violations.append(FieldViolation(field, reason))
        else:
            formats.append(more)
    return tuple(formats)


def export_request_from_proto(message: api.ExportPlanRequest, book: Pricebook) -> ExportQuery:
    violations: list[FieldViolation] = []
    formats = _formats(message, violations)
    language = LANGUAGE_FROM_PROTO.get(message.language)
    if language is None:
        violations.append(FieldViolation("language", f"unknown language {message.language}"))
    audience = AUDIENCE_FROM_PROTO.get(message.audience)
    if audience is None:
        violations.append(FieldViolation("audience", f"unknown audience {message.audience}"))
    scenario, plan_id = _source(message, book, violations)
    raise_if(violations)
    assert language is not None and audience is not None  # no violations ⇒ set
    return ExportQuery(
        formats=formats,
        language=language,
        title=message.title,
        scenario=scenario,
        plan_id=plan_id,
        audience=audience,
        header=header_from_proto(message.header),
    )


def header_from_proto(message: api.QuoteHeader) -> QuoteHeader:
    return QuoteHeader(**{name: getattr(message, name).strip() for name in QuoteHeader.model_fields})


def saved_quote(stored: StoredPlan, title: str) -> QuoteData:
    """The quote saved with ``stored`` (titled ``title`` when given, else as saved). A plan saved
    without one (by a server before quotes were kept, or whose quote this server cannot read) is
    INVALID_ARGUMENT on ``plan_id``: plan the saved request again with ``save``."""
    again = "plan its request again with save: true to export it"
    if stored.document is None:
        reason = f"plan {stored.plan_id} was saved without its quote (by an older server); {again}"
        raise InvalidRequest([FieldViolation("plan_id", reason)])
    try:
        quote = QuoteData.model_validate_json(stored.document)
    except ValidationError as exc:
        reason = f"plan {stored.plan_id}'s saved quote cannot be read by this server; {again}"
        raise InvalidRequest([FieldViolation("plan_id", reason)]) from exc
    return quote.model_copy(update={"title": title}) if title else quote


def documents_to_proto(
    documents: Sequence[Document], provenance: common_pb2.Provenance
) -> api.ExportPlanResponse:
    """The response: every document in ``documents``, the first also in the top-level fields."""
    first = documents[0]
    return api.ExportPlanResponse(
        content=first.content,
        media_type=first.media_type,
        file_name=first.file_name,
        provenance=provenance,
        documents=[
            api.ExportedDocument(content=d.content, media_type=d.media_type, file_name=d.file_name)
            for d in documents
        ],
    )
