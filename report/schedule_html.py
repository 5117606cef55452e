"""The quote page's 연차별 도입 계획 (acquisition plan by year) of a multi-year plan: per year what is
added, its capex and monthly opex, the fleet in service and the deployments; each year's
purchases and their depreciation; the cash by plan year with its present value, ending at the NPV,
and their chart. Every amount is the planner's (``QuoteData.schedule``, ``economics.discounting``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pricebook.schema import Money
from report import bid
from report.cashflow import money_sum
from report.data import QuoteData
from report.formatting import money, money_summary
from report.html_base import e, facts, note, section, table
from report.labels import Language, label
from report.present_value import present_value_html, rate_text
from report.schedule import Schedule, ScheduleDeploymentRow, ScheduleItemRow

CARD_SHARE = re.compile(r"(\d+/\d+) of (a|each) card")
"""The planner's words for a co-located deployment's share of a card (``deployment_label``)."""


def item_text(i: ScheduleItemRow, lang: Language, *, internal: bool) -> str:
    """``h200-sxm ×8 구매`` (the internal quote adds the offer)."""
    text = bid.fleet_text(f"{i.gpu_id} ×{i.gpus} {i.mode}", lang)
    return f"{text} ({i.offer_id})" if internal and i.offer_id else text


def items_text(items: Iterable[ScheduleItemRow], lang: Language, *, internal: bool) -> str:
    words = [item_text(i, lang, internal=internal) for i in items if i.gpus]
    return ", ".join(words) or label("sched.none", lang)


def deployment_text(d: ScheduleDeploymentRow, lang: Language) -> str:
    """``assistant-70b: 1 × h200-sxm TP4 fp8 카드마다 7/8``."""

    def share(m: re.Match[str]) -> str:
        key = "card_host" if m.group(2) == "each" else "card_guest"
        return label(key, lang).format(fraction=m.group(1))

    return f"{d.workload}: {d.peak_replicas} × {CARD_SHARE.sub(share, d.deployment)}"


def capex_total(s: Schedule) -> Money:
    """The years' capex together (the sum of the rows shown)."""
    return money_sum([y.capex for y in s.years])


def nominal_total(quote: QuoteData, s: Schedule) -> Money:
    """The horizon's cash: the sum of the plan's yearly cash flows when it has them (the rows the
    present-value table shows), else the schedule's nominal TCO."""
    d = quote.economics.discounting if quote.economics is not None else None
    return d.nominal_total if d is not None and d.nominal_total is not None else s.nominal_tco


def horizon_text(s: Schedule, lang: Language) -> str:
    return label("sched.years", lang).format(years=len(s.years), months=s.months)


def capex_text(quote: QuoteData, lang: Language) -> str:
    """The summary's capex: a multi-year plan's every purchase of the horizon, with the year of each."""
    econ = quote.economics
    assert econ is not None
    total = money_summary(econ.capex, lang)
    s = quote.schedule
    if s is None:
        return total
    years = [
        label("capex_in_year", lang).format(
            year=label("year_n", lang).format(n=y.year), amount=money(y.capex, lang)
        )
        for y in s.years
        if y.capex.amount
    ]
    return f"{total} ({', '.join(years)})" if years else total


def alternatives_note(quote: QuoteData, lang: Language) -> str:
    """How a multi-year plan's alternatives are compared (empty for one period): the same basis
    as ``report.schedule_alternatives.horizon_cost``."""
    s = quote.schedule
    if s is None:
        return ""
    d = quote.economics.discounting if quote.economics is not None else None
    if d is not None and d.objective == "npv":
        basis = label("alt.staged.npv", lang).format(rate=rate_text(d))
    else:
        basis = label("alt.staged.nominal", lang)
    return label("alt.staged", lang).format(basis=basis, months=s.months)


def _years_table(quote: QuoteData, s: Schedule, lang: Language) -> str:
    headers = [
        label(k, lang)
        for k in ("year", "months", "sched.added", "sched.capex", "sched.opex_monthly", "sched.fleet")
    ] + [label("sched.deployments", lang)]
    rows = [
        [
            e(label("year_n", lang).format(n=y.year)),
            e(y.months),
            e(items_text(y.added, lang, internal=quote.internal)),
            (e(money(y.capex, lang)), f"schedule-capex-{y.year}"),
            (e(money(y.opex_monthly, lang)), f"schedule-opex-{y.year}"),
            e(items_text(y.fleet, lang, internal=False)),
            "<br>".join(e(deployment_text(d, lang)) for d in y.deployments),
        ]
        for y in s.years
    ]
    total = (e(money(capex_total(s), lang)), "schedule-capex")
    foot = [[e(label("total", lang)), e(s.months), "", total, "", "", ""]]
    return table(headers, rows, "schedule-table", foot)


def _tranches_table(s: Schedule, lang: Language) -> str:
    if not s.tranches:
        return ""
    headers = [
        label(k, lang)
        for k in ("tranche.year", "gpu", "gpus", "tranche.servers", "tranche.hardware", "tranche.residual")
    ] + [label("tranche.depreciation", lang)]
    rows = [
        [
            e(label("year_n", lang).format(n=t.year)),
            e(t.gpu_id),
            e(t.gpus),
            e(t.servers),
            e(money(t.hardware, lang)),
            e(money(t.residual_value, lang)),
            (e(money(t.depreciation, lang)), f"tranche-depreciation-{t.year}-{t.gpu_id}"),
        ]
        for t in s.tranches
    ]
    return f"<h3>{e(label('sched.tranches', lang))}</h3>" + table(headers, rows, "tranche-table")


def schedule_html(quote: QuoteData, lang: Language) -> str:
    """The section, or "" for a plan of one period."""
    s = quote.schedule
    if s is None:
        return ""
    d = quote.economics.discounting if quote.economics is not None else None
    summary = [
        (label("sched.horizon", lang), e(horizon_text(s, lang)), "schedule-horizon"),
        (label("sched.capex_total", lang), e(money_summary(capex_total(s), lang)), "schedule-capex-total"),
        (label("sched.nominal_tco", lang), e(money_summary(nominal_total(quote, s), lang)), "nominal"),
    ]
    if d is not None:
        summary.append((label("npv", lang), e(money_summary(d.npv, lang)), "schedule-npv"))
    body = facts(summary, "summary") + note(label("sched.note", lang))
    body += _years_table(quote, s, lang) + _tranches_table(s, lang)
    if d is not None:
        title = label("sched.chart", lang).format(npv=money(d.npv, lang))
        body += present_value_html(d, nominal_total(quote, s), lang, chart_title=title)
    return section("schedule", "schedule", body, lang)
