"""The quote's present-value block (a request with a discount rate): each plan year's cash, nominal
and in today's money, the discount factor and the running total, ending at the NPV. The amounts are
the planner's (``PlanResult.cash_flows``); the factor is shown so a reviewer can recompute each
row as nominal × (1 + rate)^−year."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pricebook.schema import Money
from report import charts
from report.data import Discounting
from report.formatting import money, money_summary, percent
from report.html_base import chart, e, table
from report.labels import Language, label


@dataclass(frozen=True, slots=True)
class PresentValueRow:
    year: int
    months: int
    nominal: Money
    factor: float
    """(1 + rate)^−year."""
    discounted: Money
    cumulative: Money
    """Σ discounted up to this year."""


def present_value_rows(d: Discounting) -> tuple[PresentValueRow, ...]:
    rows: list[PresentValueRow] = []
    running = Decimal(0)
    for y in d.years:
        running += y.discounted.amount
        rows.append(
            PresentValueRow(
                year=y.year,
                months=y.months,
                nominal=y.nominal,
                factor=(1.0 + d.rate) ** -y.year,
                discounted=y.discounted,
                cumulative=Money(amount=running, currency=y.discounted.currency),
            )
        )
    return tuple(rows)


def rate_text(d: Discounting) -> str:
    return percent(d.rate, 2)


def objective_text(d: Discounting, lang: Language) -> str:
    return label("npv.minimised" if d.objective == "npv" else "npv.nominal_minimised", lang)


def present_value_html(d: Discounting, horizon_tco: Money, lang: Language, *, chart_title: str = "") -> str:
    """The table and its chart; ``horizon_tco`` is the nominal total, ``chart_title`` a title drawn
    in the chart (none by default)."""
    headers = [
        label("year", lang),
        label("months", lang),
        label("pv.nominal", lang),
        label("pv.factor", lang),
        label("pv.discounted", lang),
        label("pv.cumulative", lang),
    ]
    rows = [
        [
            e(label("year_n", lang).format(n=r.year)),
            e(r.months),
            e(money(r.nominal, lang)),
            e(f"{r.factor:.6f}"),
            e(money(r.discounted, lang)),
            e(money(r.cumulative, lang)),
        ]
        for r in present_value_rows(d)
    ]
    foot = [[e(label("npv", lang)), "", e(money(horizon_tco, lang)), "", (e(money(d.npv, lang)), "npv"), ""]]
    title = label("pv", lang).format(rate=rate_text(d))
    body = f"<h3>{e(title)}</h3><p>{e(label('pv.note', lang))} {e(objective_text(d, lang))}.</p>"
    body += table(headers, rows, "present-value-table", foot)
    svg = charts.present_value_chart(present_value_rows(d), lang, title=chart_title)
    body += chart("present-value", svg, chart_title or title)
    return body


def npv_summary_item(d: Discounting, lang: Language) -> tuple[str, str, str]:
    """The summary's NPV line: (label, value, data-field)."""
    name = f"{label('npv', lang)} ({rate_text(d)})"
    return e(name), e(money_summary(d.npv, lang)), "npv"
