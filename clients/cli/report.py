"""``fleetplan report SCENARIO.yaml|--plan-id ID --output q.pdf [--output q.html ...] [--lang en|ko]``:
a quote of the scenario's plan, or of a saved plan (its quote as saved, not planned again), through
one ExportPlan call: every ``--output`` (its format from the file's suffix) is rendered from the same
plan, so the files show the same numbers."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from api.fleetplan.v1 import fleet_planner_pb2 as api
from clients.cli.connection import connect_for
from clients.cli.exits import EXIT_OK
from clients.cli.measured import add_measurement_flags, attach_measurements
from clients.cli.progress import planning_stage
from clients.scenario import ScenarioError, load_scenario

FORMATS = {
    ".html": api.REPORT_FORMAT_HTML,
    ".pdf": api.REPORT_FORMAT_PDF,
    ".xlsx": api.REPORT_FORMAT_XLSX,
}
LANGUAGES = {"en": api.REPORT_LANGUAGE_EN, "ko": api.REPORT_LANGUAGE_KO}
AUDIENCES = {"customer": api.REPORT_AUDIENCE_CUSTOMER, "internal": api.REPORT_AUDIENCE_INTERNAL}


def report_format(output: Path) -> api.ReportFormat.ValueType:
    """The format named by the output file's suffix; any other suffix is refused."""
    fmt = FORMATS.get(output.suffix.lower())
    if fmt is None:
        raise ScenarioError(
            "--output",
            str(output),
            f"unknown report format {output.suffix or '(no suffix)'!r}; use .html, .pdf or .xlsx",
        )
    return fmt


def report_formats(outputs: list[Path]) -> list[api.ReportFormat.ValueType]:
    """The format of each output file; a format asked for twice is refused (one file per format)."""
    formats = [report_format(output) for output in outputs]
    for index, fmt in enumerate(formats):
        if fmt in formats[:index]:
            suffix = outputs[index].suffix.lower()
            reason = f"two outputs of the same format ({suffix}); give each format once"
            raise ScenarioError("--output", str(outputs[index]), reason)
    return formats


def export_request(
    args: argparse.Namespace, formats: list[api.ReportFormat.ValueType]
) -> api.ExportPlanRequest:
    """A scenario file or ``--plan-id``: exactly one (refused before any call otherwise)."""
    if (args.scenario is None) == (args.plan_id is None):
        given = "both" if args.scenario is not None else "neither"
        reason = f"give a scenario file or --plan-id ID (a saved plan); got {given}"
        raise ScenarioError("--plan-id", "", reason)
    request = api.ExportPlanRequest(
        format=formats[0],
        also_formats=formats[1:],
        language=LANGUAGES[args.lang],
        audience=AUDIENCES[args.audience],
        header=quote_header(args),
    )
    if args.plan_id is not None:
        if args.measurements:
            raise ScenarioError(
                "--measurements", "", "a saved plan (--plan-id) is not planned again: plan it with them"
            )
        request.plan_id = args.plan_id  # titled by --title, else by the saved plan's label
    else:
        scenario = Path(args.scenario)
        request.request.CopyFrom(load_scenario(scenario, api.PlanFleetRequest))
        attach_measurements(args, request.request.measurements)
        request.title = scenario.stem
    if args.title:
        request.title = args.title
    return request


def quote_header(args: argparse.Namespace) -> api.QuoteHeader:
    """The header block: the supplier profile file (YAML with QuoteHeader's fields: supplier_name,
    supplier_registration_number, supplier_contact, validity, delivery, payment_terms, …), then
    the flags over it."""
    header = api.QuoteHeader()
    if args.supplier_profile:
        header.CopyFrom(load_scenario(Path(args.supplier_profile), api.QuoteHeader))
    if args.customer:
        header.customer = args.customer
    if args.quote_number:
        header.quote_number = args.quote_number
    return header


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    outputs = [Path(output) for output in args.output]
    request = export_request(args, report_formats(outputs))
    rendering = f"rendering the quote ({', '.join(o.suffix.lstrip('.').upper() for o in outputs)})"
    if request.HasField("request"):
        rendering = f"{planning_stage(request.request.solver_options)}, then {rendering}"
    with connect_for(args, rendering) as client:
        response = client.export_plan(request)
    for output, document in zip(outputs, response.documents, strict=True):
        output.write_bytes(document.content)
        out.write(f"wrote {output} ({document.media_type}, {len(document.content):,} bytes)\n")
    return EXIT_OK


def add_report(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    client_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """The ``report`` sub-command (``client_options`` adds --target, --timeout-s, TLS, …)."""
    report = sub.add_parser(
        "report", help="a bid-ready quote of a scenario's plan or of a saved plan: HTML, PDF or XLSX"
    )
    report.add_argument("scenario", nargs="?", help="YAML with the shape of PlanFleetRequest")
    report.add_argument(
        "--plan-id", help="instead of a scenario: a saved plan's id (plan --save); it is not planned again"
    )
    report.add_argument(
        "--output",
        required=True,
        action="append",
        help="quote.html, quote.pdf or quote.xlsx (format from the suffix); repeat it for several "
        "formats of the one plan (planned once)",
    )
    report.add_argument("--lang", choices=sorted(LANGUAGES), default="en", help="labels and number formats")
    report.add_argument(
        "--audience",
        choices=sorted(AUDIENCES),
        default="customer",
        help="customer (default): only what the request allows, no internal sourcing; internal: "
        "everything, alternatives outside the request marked, sourcing in an annex",
    )
    report.add_argument("--title", help="the quote's title (default: the scenario's file name)")
    report.add_argument("--customer", help="who the quote is addressed to (수신)")
    report.add_argument("--quote-number", help="the quote's number (견적번호)")
    report.add_argument(
        "--supplier-profile",
        help="YAML with the supplier's details and terms: supplier_name, supplier_registration_number, "
        "supplier_representative, supplier_address, supplier_contact, validity, delivery, payment_terms",
    )
    add_measurement_flags(report)
    client_options(report)
    report.set_defaults(func=cmd_report)
