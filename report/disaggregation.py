"""A quote's disaggregated deployments (issue 33): the rows taken from the planner's result
(``roles_row``, ``why_row``), their words in the quote's language, and the part of the page and the
workbook that shows them — each group's two roles, their GPUs and the prefill:decode ratio, how
the KV cache travels, and a line saying why disaggregation won (the saving over the cheapest
aggregated plan). The page, the PDF (the page printed) and the workbook show the same cells."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from report.data import DeploymentGroupRow, QuoteData
from report.disagg_data import DisaggregationWhy, RoleRow, RolesRow
from report.formatting import money, number
from report.html_base import e, table
from report.labels import Language, label
from report.text import DASH, disaggregated, ratio, role
from solver.planner.results import DisaggregatedRole, DisaggregatedRoles, PlanResult

if TYPE_CHECKING:  # XlsxWriter is loaded only by the workbook (``report.xlsx``)
    from xlsxwriter.format import Format
    from xlsxwriter.worksheet import Worksheet

COLUMNS = (
    "workload",
    "disagg.prefill",
    "disagg.prefill_engines",
    "disagg.decode",
    "disagg.decode_engines",
    "disagg.ratio",
    "disagg.units",
    "disagg.prefill_gpus",
    "disagg.decode_gpus",
    "disagg.kv_link",
    "disagg.kv_mb",
    "disagg.network_cost",
)
"""The label keys of the disaggregated deployments' table, in column order."""
LINKS = ("nvlink", "network", "pcie")
"""KV links with a label of their own (``disagg.link.<link>``); others are shown as the planner
names them."""


def _role_row(r: DisaggregatedRole) -> RoleRow:
    return RoleRow(
        gpu_id=r.gpu,
        tp=r.tp,
        ep=r.ep,
        attention_dp=r.attention_dp,
        precision=r.precision.value,
        engines_per_unit=r.engines_per_unit,
        gpus_peak=r.gpus_peak,
    )


def roles_row(roles: DisaggregatedRoles | None) -> RolesRow | None:
    """The planner's roles of a group as the quote keeps them (None: an aggregated group)."""
    if roles is None:
        return None
    return RolesRow(
        prefill=_role_row(roles.prefill),
        decode=_role_row(roles.decode),
        kv_link=roles.kv_link,
        kv_bytes_per_request=roles.kv_bytes_per_request,
        network_cost=roles.network_cost,
    )


def group_roles(result: PlanResult) -> dict[str, RolesRow]:
    """Deployment group id → its roles, for the plan's disaggregated groups."""
    out = {}
    for line in result.deployment_lines:
        roles = roles_row(line.disaggregation)
        if roles is not None:
            out[line.id] = roles
    return out


def why_row(result: PlanResult) -> DisaggregationWhy | None:
    c = result.disaggregation
    if c is None:
        return None
    return DisaggregationWhy(aggregated_tco=c.aggregated_tco, saving=c.saving, reason=c.reason)


def role_name(r: RoleRow) -> str:
    return role(r.gpu_id, r.tp, r.ep, r.attention_dp, r.precision)


def unit_name(roles: RolesRow) -> str:
    """One unit, e.g. ``(prefill 1 × h200-sxm TP2 fp8 + decode 3 × h100-sxm TP4 fp8)``."""
    p, d = roles.prefill, roles.decode
    return disaggregated(role_name(p), p.engines_per_unit, role_name(d), d.engines_per_unit)


def link_name(link: str, lang: Language) -> str:
    return label(f"disagg.link.{link}", lang) if link in LINKS else link or DASH


def _cells(g: DeploymentGroupRow, roles: RolesRow, lang: Language) -> list[Any]:
    """A group's row: text where the page shows words, numbers where the workbook keeps numbers."""
    p, d = roles.prefill, roles.decode
    return [
        ", ".join(s.workload for s in g.shares),
        role_name(p),
        p.engines_per_unit,
        role_name(d),
        d.engines_per_unit,
        ratio(p.engines_per_unit, d.engines_per_unit),
        g.replicas_peak,
        p.gpus_peak,
        d.gpus_peak,
        link_name(roles.kv_link, lang),
        roles.kv_bytes_per_request / 1e6,
        roles.network_cost,
    ]


def _rows(quote: QuoteData, lang: Language) -> list[list[Any]]:
    return [_cells(g, g.disaggregation, lang) for g in quote.groups if g.disaggregation is not None]


def _text(value: Any, lang: Language) -> str:
    if value is None or hasattr(value, "currency"):
        return money(value, lang)
    if isinstance(value, float):
        return number(value, 1)
    return str(value)


def why_text(quote: QuoteData, lang: Language) -> str | None:
    """ "Why disaggregated serving": the cheapest aggregated plan's cost and the saving, or why
    there is none (None when the plan has no disaggregated deployment)."""
    why = quote.disaggregation
    if why is None:
        return None
    if why.aggregated_tco is None:
        return label("disagg.why_none", lang).format(reason=why.reason or DASH)
    return label("disagg.why", lang).format(
        aggregated=money(why.aggregated_tco, lang), saving=money(why.saving, lang)
    )


def disaggregation_html(quote: QuoteData, lang: Language) -> str:
    """The table of the disaggregated groups and the why line ("" when there is neither)."""
    rows = _rows(quote, lang)
    why = why_text(quote, lang)
    if not rows and why is None:
        return ""
    body = f"<h3>{e(label('disaggregation', lang))}</h3>"
    if rows:
        cells = [[e(_text(c, lang)) for c in row] for row in rows]
        body += table([label(k, lang) for k in COLUMNS], cells, "disaggregation-table")
    if why is not None:
        body += f'<p class="note" data-field="disaggregation-why">{e(why)}</p>'
    return body


def has_disaggregation(quote: QuoteData) -> bool:
    return quote.disaggregation is not None or any(g.disaggregation is not None for g in quote.groups)


def write_disaggregation(
    sheet: Worksheet, quote: QuoteData, lang: Language, formats: dict[str, Format]
) -> None:
    """The workbook's sheet of the same table and line; ``formats``: "bold", "head", "money",
    "number" (XlsxWriter formats of the workbook)."""
    sheet.write_string(0, 0, label("disaggregation", lang), formats["bold"])
    for col, key in enumerate(COLUMNS):
        sheet.write_string(1, col, label(key, lang), formats["head"])
    rows = _rows(quote, lang)
    for i, row in enumerate(rows):
        for col, value in enumerate(row):
            if value is None:
                continue
            if hasattr(value, "currency"):
                sheet.write_number(2 + i, col, float(value.amount), formats["money"])
            elif isinstance(value, float):
                sheet.write_number(2 + i, col, value, formats["number"])
            elif isinstance(value, int):
                sheet.write_number(2 + i, col, value)
            else:
                sheet.write_string(2 + i, col, value)
    why = why_text(quote, lang)
    if why is not None:
        sheet.write_string(3 + len(rows), 0, why)
    sheet.set_column(0, 0, 20)
    sheet.set_column(1, len(COLUMNS) - 1, 16)
