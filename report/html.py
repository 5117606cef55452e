"""The quote as one self-contained HTML page: inline CSS (print rules included), charts as inline
SVG, no script and no external resource, so it opens offline and prints (and becomes the PDF)
as it is. Sections follow issue 17's contents 1–9; each says so when it has nothing to show."""

from __future__ import annotations

from report import bid, charts
from report.cashflow import money_sum, quote_cash_flow
from report.data import Alternative, AlternativeKind, QuoteData
from report.disaggregation import disaggregation_html
from report.formatting import compact_json, mix_change, money, money_summary, number, percent
from report.html_base import bullets as _bullets
from report.html_base import chart as _chart
from report.html_base import e as _e
from report.html_base import note as _note
from report.html_base import numbered
from report.html_base import section as _section
from report.html_base import table as _table
from report.html_bid import (
    bom_section,
    budget_facts,
    embeddings_table,
    header_block,
    planner_notes_annex,
    sourcing_annex,
)
from report.labels import COLUMNS, Language, label
from report.present_value import npv_summary_item, present_value_html
from report.row_text import cost_label, group_cells, quote_warnings, shows_no_credit, workload_deployments
from report.schedule_html import alternatives_note, capex_text, schedule_html
from report.style import CSS
from report.text import DASH, replicas


def _status(quote: QuoteData, lang: Language) -> str:
    return label(f"status.{quote.status}", lang)


# --------------------------------------------------------------------------------------------
# 1–2: summary and alternatives
# --------------------------------------------------------------------------------------------


def _summary(quote: QuoteData, lang: Language) -> str:
    def L(key: str) -> str:
        return _e(label(key, lang))

    items = [
        (L("status"), _e(_status(quote, lang)), "status"),
    ]
    econ = quote.economics
    if econ is not None:
        items += [
            (L("recommended_fleet"), _e(bid.recommended_fleet(quote, lang)), "fleet"),
            (L("horizon_tco"), _e(money_summary(econ.horizon_tco, lang)), "horizon-tco"),
            (L("capex"), _e(capex_text(quote, lang)), "capex"),
            *(
                [(L("opex_monthly"), _e(money_summary(econ.opex.total, lang)), "opex-monthly")]
                if quote.schedule is None  # a multi-year plan's changes by year: see its schedule
                else []
            ),
            *(
                [(L("tco_with_vat"), _e(money_summary(econ.vat.horizon_tco_with_vat, lang)), "tco-with-vat")]
                if econ.vat is not None
                else []
            ),
            *([npv_summary_item(econ.discounting, lang)] if econ.discounting is not None else []),
            (L("horizon"), f"{quote.horizon_months} {L('months')}", ""),
        ]
        if quote.saving is not None:
            fraction = percent(quote.saving_fraction)
            saving = f"{money_summary(quote.saving, lang)} ({fraction}, {quote.saving_against})"
            items.append((L("saving"), _e(saving), "saving"))
        items += [(_e(k), v, f) for k, v, f in budget_facts(quote, lang)]
    rows = "".join(
        f"<dt>{k}</dt><dd" + (f' data-field="{f}"' if f else "") + f">{v}</dd>" for k, v, f in items
    )
    tco = money_summary(econ.horizon_tco, lang) if econ is not None else ""
    body = f'<dl class="summary">{rows}</dl><p>{_e(bid.summary_text(quote, lang, tco))}</p>'
    use = bid.budget_use(quote)
    if use is not None:
        gauge = charts.budget_chart(float(use.budget.amount), float(use.spend.amount), quote.currency, lang)
        body += _chart("budget", gauge, label("budget", lang))
    body += _note(label("vat_included" if quote.includes_vat else "vat_excluded", lang))
    if econ is None:
        body = f'<p class="no-plan">{_e(label("no_plan", lang))}</p>' + body
        body += _bullets("diagnosis", quote.diagnosis, lang)
    return _section("summary", "summary", body, lang)


def outside_requirement(quote: QuoteData, alt: Alternative, lang: Language) -> str:
    """The mark of an alternative the request does not allow (empty for one it allows)."""
    if alt.meets_requirement:
        return ""
    modes = ", ".join(label(f"mode.{m}", lang) for m in quote.allowed_modes)
    return label("outside_requirement", lang).format(modes=modes)


def why_it_loses(alt: Alternative, currency: str, lang: Language) -> str:
    """One line on why an alternative loses to the recommended plan."""
    if alt.kind is AlternativeKind.RECOMMENDED:
        return label("this_plan", lang)
    if alt.reason:
        # An API without a price for every workload is not a fleet that fails: it is not comparable.
        key = "not_comparable" if alt.kind is AlternativeKind.API else "infeasible_because"
        return label(key, lang).format(reason=bid.alternative_reason(alt, currency, lang))
    if alt.extra_cost is None:
        return DASH
    if alt.extra_cost.amount > 0:
        return label("costs_more", lang).format(
            amount=money(alt.extra_cost, lang), fraction=percent(alt.extra_fraction)
        )
    if alt.extra_cost.amount < 0:
        less = alt.extra_cost.model_copy(update={"amount": -alt.extra_cost.amount})
        return label("costs_less", lang).format(amount=money(less, lang))
    return label("costs_same", lang)


def _alternatives(quote: QuoteData, lang: Language) -> str:
    headers = [label(k, lang) for k in COLUMNS.alternatives]
    rows = [
        [
            _e(label(f"kind.{a.kind.value}", lang) + (f" ({a.name})" if a.name else "")),
            _e(label("feasible.yes" if a.feasible else "feasible.no", lang)),
            (_e(money(a.horizon_tco, lang)), f"alt-tco-{a.kind.value}"),
            _e(money(a.capex, lang)),
            _e(a.gpus),
            _e(bid.fleet_text(a.fleet_summary, lang)),
            _e(outside_requirement(quote, a, lang) + why_it_loses(a, quote.currency, lang)),
        ]
        for a in quote.shown_alternatives()
    ]
    body = _table(headers, rows, "alternatives-table")
    if not any(a.kind is AlternativeKind.RENT_ONLY for a in quote.alternatives):
        body += _note(label("no_rent_only", lang))
    if staged := alternatives_note(quote, lang):
        body += _note(staged)
    elif not any(a.kind is AlternativeKind.API for a in quote.alternatives):
        body += _note(label("no_api_price", lang))
    return _section("alternatives", "alternatives", body, lang)


# --------------------------------------------------------------------------------------------
# 3–4: bill of materials, cash flow, TCO
# --------------------------------------------------------------------------------------------


def _vat_and_depreciation(quote: QuoteData, lang: Language) -> str:
    """The plan's VAT line (when the request asked for VAT) and its book depreciation schedule."""
    econ = quote.economics
    body = ""
    if econ is not None and econ.vat is not None:
        v = econ.vat
        rows = [
            [_e(label("vat_supply", lang)), (_e(money(v.supply, lang)), "vat-supply")],
            [_e(f"{label('vat', lang)} ({percent(v.rate, 0)})"), (_e(money(v.vat, lang)), "vat-vat")],
            [_e(label("total", lang)), (_e(money(v.total, lang)), "vat-total")],
            [_e(label("tco_with_vat", lang)), (_e(money(v.horizon_tco_with_vat, lang)), "vat-tco")],
        ]
        body += f"<h3>{_e(label('vat_line', lang))}</h3>" + _table(
            ["", label("amount", lang)], rows, "vat-table"
        )
    if econ is not None and econ.book_depreciation:
        headers = [label(k, lang) for k in ("year", "months", "depreciation_amount", "book_value_end")]
        rows = [
            [_e(d.year), _e(d.months), _e(money(d.depreciation, lang)), _e(money(d.book_value_end, lang))]
            for d in econ.book_depreciation
        ]
        body += f"<h3>{_e(label('book_depreciation', lang))}</h3>" + _table(
            headers, rows, "depreciation-table"
        )
    return body


def _cash_flow(quote: QuoteData, lang: Language) -> str:
    econ = quote.economics
    if econ is None:
        return _section("cashflow", "cashflow", _note(label("no_bom", lang)), lang)
    flow = quote_cash_flow(quote)
    headers = [
        "",
        *(
            f"{label('year_n', lang).format(n=y)} ({m} {label('months', lang)})"
            for y, m in zip(flow.years, flow.months, strict=True)
        ),
        label("total", lang),
    ]
    rows = [
        [
            _e(cost_label("cf", row, quote.site, lang)),
            *(_e(money(a, lang)) for a in amounts),
            _e(money(money_sum(amounts), lang)),
        ]
        for row, amounts in flow.rows
        if any(a.amount for a in amounts) or (row == "residual" and shows_no_credit(quote))
    ]
    foot = [
        [
            _e(label("cf.total", lang)),
            *(_e(money(t, lang)) for t in flow.totals),
            (_e(money(flow.total, lang)), "cashflow-total"),
        ]
    ]
    body = _table(headers, rows, "cashflow-table", foot)
    body += _chart("cashflow", charts.cash_flow_chart(flow, quote.site, lang), label("cashflow", lang))
    if econ.discounting is not None and quote.schedule is None:  # a multi-year plan's: in its schedule
        body += present_value_html(econ.discounting, econ.horizon_tco, lang)
    if quote.schedule is None:
        body += _tco_breakdown(quote, lang)
    body += _vat_and_depreciation(quote, lang)
    return _section("cashflow", "cashflow", body, lang)


def _tco_breakdown(quote: QuoteData, lang: Language) -> str:
    """The TCO by component and its chart (a plan of one period: a multi-year plan's components
    change by year, its cash flow above is by year)."""
    econ = quote.economics
    assert econ is not None
    # the planner's explanations are English: another language shows the amounts (the words are
    # in the internal annex)
    explain = lang is Language.EN
    comp_rows = [
        [
            _e(cost_label("comp", c.name, quote.site, lang)),
            _e(money(c.horizon_amount, lang)),
            _e(money(c.monthly_amount, lang)),
            *([_e(c.explanation)] if explain else []),
        ]
        for c in econ.components
    ]
    tco_total = [_e(label("horizon_tco", lang)), (_e(money(econ.horizon_tco, lang)), "tco-total"), ""]
    comp_foot = [tco_total + ([""] if explain else [])]
    body = f"<h3>{_e(label('tco_breakdown', lang))}</h3>"
    columns = (
        ("component", "total", "monthly", "explanation") if explain else ("component", "total", "monthly")
    )
    body += _table([label(k, lang) for k in columns], comp_rows, "tco-table", comp_foot)
    body += _chart(
        "tco",
        charts.tco_chart(econ.components, quote.currency, quote.site, lang),
        label("tco_breakdown", lang),
    )
    return body


# --------------------------------------------------------------------------------------------
# 5–7: buy vs rent, workloads, sensitivity
# --------------------------------------------------------------------------------------------


def _buy_vs_rent(quote: QuoteData, lang: Language) -> str:
    if not (quote.internal or quote.rentals_allowed):  # arguments against the bid the customer asked for
        return _section("buy_vs_rent", "buy-vs-rent", _note(label("rentals_not_allowed", lang)), lang)
    if not quote.buy_vs_rent:
        body = _note(label("no_buy_vs_rent", lang))
    else:
        headers = [
            label(k, lang)
            for k in (
                "gpu",
                "on_demand_line",
                "reserved_line",
                "break_even_od",
                "break_even_res",
                "plan_utilization",
                "payback",
                "verdict",
            )
        ]
        rows = [
            [
                _e(b.gpu_id),
                _e(money(b.on_demand_per_gpu_hour, lang)),
                _e(money(b.reserved_per_gpu_hour, lang)),
                _e(percent(b.break_even_on_demand)),
                _e(percent(b.break_even_reserved)),
                _e(percent(b.plan_utilization)),
                _e(number(b.payback_months, 1)),
                _e(bid.buy_verdict(b, lang)),
            ]
            for b in quote.buy_vs_rent
        ]
        body = _table(headers, rows, "buy-vs-rent-table")
        for b in quote.buy_vs_rent:
            body += _chart(
                f"breakeven-{b.gpu_id}",
                charts.buy_vs_rent_chart(b, quote.currency, lang),
                f"{label('buy_vs_rent', lang)}: {b.gpu_id}",
            )
    body += f"<h3>{_e(label('api_vs_self', lang))}</h3>"
    if not quote.api:
        return _section("buy_vs_rent", "buy-vs-rent", body + _note(label("no_api_rows", lang)), lang)
    headers = [
        label(k, lang)
        for k in (
            "workload",
            "provider",
            "api_price",
            "self_hosted_price",
            "daily_tokens",
            "break_even_tokens",
            "verdict",
        )
    ]
    rows = [
        [
            _e(a.workload),
            _e(f"{a.provider} ({a.api_price_id})" if a.api_price_id else DASH),
            _e(money(a.api_per_million_tokens, lang)),
            _e(money(a.self_hosted_per_million_tokens, lang)),
            _e(number(a.workload_daily_tokens)),
            _e(number(a.break_even_daily_tokens)),
            _e(bid.api_verdict(a, lang)),
        ]
        for a in quote.api
    ]
    return _section("buy_vs_rent", "buy-vs-rent", body + _table(headers, rows, "api-table"), lang)


def _target(value: float | None, target: float | None) -> str:
    if value is None:
        return DASH
    return f"{value:,.0f}" + (f" ({target:,.0f})" if target is not None else "")


def _workloads(quote: QuoteData, lang: Language) -> str:
    embedded = {e.name for e in quote.embeddings}
    body = ""
    if not quote.workloads:
        body += _note(label("no_inference", lang))
    else:
        headers = [label(k, lang) for k in COLUMNS.workloads]
        rows = [
            [
                _e(w.name),
                _e(workload_deployments(w, lang) if w.served else bid.not_served(w, lang)),
                _e(replicas(w.replicas)),
                _e(_target(w.ttft_p95_ms, w.ttft_target_ms)),
                *(
                    [DASH, DASH, DASH]  # output speed means nothing for one vector per request
                    if w.name in embedded
                    else [
                        _e(_target(w.tpot_p95_ms, w.tpot_target_ms)),
                        _e(
                            number(w.per_user_tok_s, 1)
                            + (f" (≥{w.min_per_user_tok_s:g})" if w.min_per_user_tok_s else "")
                        ),
                        _e(number(w.aggregate_tok_s)),
                    ]
                ),
                _e(percent(w.utilization)),
            ]
            for w in quote.workloads
        ]
        body += _table(headers, rows, "workloads-table")
        if quote.groups:
            body += f"<h3>{_e(label('deployment_groups', lang))}</h3>"
            groups = [[_e(c) for c in group_cells(g, lang)] for g in quote.groups]
            body += _table([label(k, lang) for k in COLUMNS.groups], groups, "groups-table")
        body += disaggregation_html(quote, lang)
        served = [w for w in quote.workloads if w.served]
        if served:
            body += _chart("latency", charts.latency_chart(served, lang), label("latency_chart", lang))
        if quote.hourly:
            body += _chart("hourly", charts.hourly_chart(quote.hourly, lang), label("hourly_chart", lang))
    body += embeddings_table(quote, lang)
    body += f"<h3>{_e(label('training', lang))}</h3>"
    if not quote.training:
        return _section("workloads", "workloads", body + _note(label("no_training", lang)), lang)
    headers = [label(k, lang) for k in COLUMNS.training]
    rows = [
        [
            _e(t.name),
            _e(t.gpu_id),
            _e(t.gpus),
            _e(number(t.hours_per_run, 1)),
            _e(number(t.runs_per_month, 1)),
            _e(number(t.deadline_hours)),
            _e(money(t.cost_per_run, lang)),
        ]
        for t in quote.training
    ]
    return _section("workloads", "workloads", body + _table(headers, rows, "training-table"), lang)


def _sensitivity(quote: QuoteData, lang: Language) -> str:
    if not quote.sensitivity:
        body = _note(label("no_sensitivity", lang))
    else:
        missing = label("not_in_range", lang)
        headers = [label(k, lang) for k in COLUMNS.sensitivity]
        rows = [
            [
                _e(bid.sensitivity_subject(s, lang)),
                _e(bid.sensitivity_parameter(s, lang)),
                _e(mix_change(s.change_down_fraction, s.last_same_down_fraction) or missing),
                _e(mix_change(s.change_up_fraction, s.last_same_up_fraction) or missing),
                _e(bid.sensitivity_explanation(quote, s, lang)),
            ]
            for s in quote.sensitivity
        ]
        body = _table(headers, rows, "sensitivity-table")
    frontier = quote.frontier
    if frontier is not None:
        body += f"<h3>{_e(label('frontier', lang))}</h3>"
        headers = [label(k, lang) for k in COLUMNS.frontier]
        rows = [
            [
                _e(f"{p.value:g}"),
                _e(label(f"status.{p.status}", lang)),
                _e(money(p.horizon_tco, lang)),
                _e(p.fleet_summary),
                _e(label("yes" if p.pareto_optimal else "no", lang)),
            ]
            for p in frontier.points
        ]
        body += _table(headers, rows, "frontier-table")
        body += _chart(
            "frontier", charts.frontier_chart(frontier, quote.currency, lang), label("frontier", lang)
        )
    return _section("sensitivity", "sensitivity", body, lang)


# --------------------------------------------------------------------------------------------
# 8–9: assumptions and provenance
# --------------------------------------------------------------------------------------------


def _assumptions(quote: QuoteData, lang: Language) -> str:
    headers = [label(k, lang) for k in COLUMNS.assumptions]
    rows = [
        [
            _e(a.kind.value),
            _e(a.key),
            _e(a.value),
            _e(a.source),
            _e(a.as_of.isoformat() if a.as_of else DASH),
            _e(a.label or DASH),
        ]
        for a in quote.assumptions
    ]
    vat_basis = "vat_included" if quote.includes_vat else "vat_excluded"
    facts = [
        ("fx_rate", quote.fx_note or DASH),
        ("vat_rate", f"{percent(quote.vat_rate, 0)} ({label(vat_basis, lang)})"),
        ("depreciation", quote.depreciation_note),
        (
            "uncertainty",
            f"×{quote.uncertainty_low:.2f} – ×{quote.uncertainty_high:.2f}: {quote.uncertainty_note}",
        ),
    ]
    listing = "".join(f"<dt>{_e(label(k, lang))}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    return _section(
        "assumptions", "assumptions", f"<dl>{listing}</dl>" + _table(headers, rows, "assumptions-table"), lang
    )


def _provenance(quote: QuoteData, lang: Language) -> str:
    p = quote.provenance
    s = quote.solver
    facts = [
        ("fleetplan_version", p.fleetplan_version or DASH),
        ("pricebook_version", p.pricebook_version),
        ("pricebook_hash", p.pricebook_hash),
        ("calibration_date", p.calibration_date),
        ("solver_status", f"{label(f'status.{s.status}', lang)}, {s.seconds:.2f} s, limit: {s.limit_fired}"),
        ("solver_gap", percent(s.gap, 3) if s.gap is not None else DASH),
        ("solver_backend", s.backend),
        ("overrides", ", ".join(p.overrides_applied) or label("none", lang)),
    ]
    listing = "".join(f"<dt>{_e(label(k, lang))}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    body = f"<dl>{listing}</dl><h3>{_e(label('request', lang))}</h3>"
    body += f'<pre class="request">{_e(compact_json(p.request_json))}</pre>'
    if warnings := quote_warnings(quote, lang):
        body += _bullets("warnings", warnings, lang)
    return _section("provenance", "provenance", body, lang)


def render_html(quote: QuoteData, lang: Language) -> str:
    """The whole quote as one HTML document (UTF-8 text): the header block and 제안 금액, the
    numbered sections, then the annexes (headed 부록 / Annex; the internal ones only for the
    bidder's team)."""
    title = quote.title or label("title", lang)
    staged = schedule_html(quote, lang)
    sections = (
        _summary(quote, lang),
        bom_section(quote, lang),
        *([staged] if staged else []),
        _alternatives(quote, lang),
        _cash_flow(quote, lang),
        _buy_vs_rent(quote, lang),
        _workloads(quote, lang),
        _sensitivity(quote, lang),
    )
    annexes = [_assumptions(quote, lang), _provenance(quote, lang)]
    if quote.internal:
        annexes.append(sourcing_annex(quote, lang))
        if lang is not Language.EN:
            annexes.append(planner_notes_annex(quote, lang))
    body = "".join(numbered(s, f"{n}. ") for n, s in enumerate(sections, 1))
    body += "".join(numbered(s, label("annex", lang).format(n=n) + " ") for n, s in enumerate(annexes, 1))
    return (
        f'<!DOCTYPE html>\n<html lang="{lang.value}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{_e(label("title", lang))}</h1><p class="subtitle">{_e(quote.title)}</p>'
        + header_block(quote, lang)
        + "</header>"
        + body
        + "</body></html>\n"
    )
