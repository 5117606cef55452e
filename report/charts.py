"""The quote's charts as inline SVG, drawn by matplotlib.

Why matplotlib: it is on the local package mirror as a wheel with no system libraries to install,
draws offline (no browser, no network, unlike Vega-Altair + vl-convert's embedded JavaScript
engine), and its SVG backend can turn text into paths, so the SVG carries its own Korean glyphs
and looks the same in a browser and in WeasyPrint. Each chart is an explicit ``Figure`` saved by the
SVG backend (no pyplot and its global state, no Agg raster step), a fixed hash salt and no date in
the metadata, so the same quote gives byte-identical charts.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib import font_manager, rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import FT2Font
from matplotlib.ticker import FuncFormatter, PercentFormatter

from report.cashflow import CashFlow
from report.data import BuyVsRentRow, CostComponentRow, Frontier, HourlyLoad, QuoteSite, WorkloadRow
from report.labels import Language, label
from report.row_text import cost_label
from solver.units import HOURS_PER_MONTH

FONTS = ["DejaVu Sans", "Noto Sans CJK KR", "Noto Sans CJK JP"]
"""Latin first, then Debian's fonts-noto-cjk for Hangul (matplotlib falls back glyph by glyph)."""
COLORS = ["#1f4e79", "#2e86c1", "#48c9b0", "#f5b041", "#af7ac5", "#ec7063", "#85929e", "#58d68d"]
ROW_COLORS = {
    "capex": "#1f4e79",
    "support": "#2e86c1",
    "power": "#f5b041",
    "colocation": "#af7ac5",
    "software": "#48c9b0",
    "storage": "#85929e",
    "reserved": "#ec7063",
    "on_demand": "#e67e22",
    "lease": "#8e6c3a",
    "residual": "#27ae60",
}
"""One colour per cash-flow row and TCO component (money back, the residual value, in green)."""
COMPONENT_COLORS = {
    "gpu_purchase": "#1f4e79",
    "host_purchase": "#5d8aa8",
    "networking": "#34495e",
    "installation": "#7f8c8d",
    "storage": "#85929e",
    "residual_value": "#27ae60",
    "support": "#2e86c1",
    "power": "#f5b041",
    "colocation": "#af7ac5",
    "software": "#48c9b0",
    "reserved_rental": "#ec7063",
    "on_demand_rental": "#e67e22",
    "lease": "#8e6c3a",
    "vat": "#c0392b",
}
HANGUL_PROBE = "견적서"
"""Characters a Korean chart must be able to draw."""
CJK_FAMILY = "Noto Sans CJK KR"
WIDTH_IN = 7.0
HEIGHT_IN = 3.0
UTILISATION_POINTS = 101


def _svg(fig: Figure, salt: str) -> str:
    buffer = io.StringIO()
    with rc_context({"svg.hashsalt": f"fleetplan-{salt}", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})  # the SVG backend's canvas
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figure(height_in: float = HEIGHT_IN) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(WIDTH_IN, height_in), layout="constrained")
    return fig, fig.add_subplot()


def _cjk_font_path() -> str | None:
    """The file matplotlib's font cache gives for the CJK family, if it has one whose glyphs
    include Hangul."""
    try:
        path = font_manager.findfont(FontProperties(family=CJK_FAMILY), fallback_to_default=False)
    except ValueError:
        return None
    font = FT2Font(path)
    return path if all(font.get_char_index(ord(c)) for c in HANGUL_PROBE) else None


class MissingGlyphsError(RuntimeError):
    """The charts cannot draw Korean: no CJK font matplotlib can use."""


def _add_system_fonts() -> None:
    """Add the system's fonts the cache does not list, and write the cache again so the next
    process finds them too."""
    manager = font_manager.fontManager
    known = {entry.fname for entry in manager.ttflist}
    for path in font_manager.findSystemFonts():
        if path not in known:
            with contextlib.suppress(OSError, RuntimeError, ValueError):  # unreadable: skip
                manager.addfont(path)
    cache = Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json"
    with contextlib.suppress(OSError):
        font_manager.json_dump(manager, cache)


def ensure_cjk_font() -> str:
    """The CJK font's file. A font cache built before the fonts were installed does not list them
    (the charts would draw □ boxes): it is rebuilt once; still none is an error saying what to
    install, never a chart of boxes."""
    path = _cjk_font_path()
    if path is None:
        _add_system_fonts()
        path = _cjk_font_path()
    if path is None:
        msg = f"no {CJK_FAMILY} font with Hangul for the charts: install Debian's fonts-noto-cjk"
        raise MissingGlyphsError(msg)
    return path


def _money_axis(ax: Axes, currency: str, lang: Language, axis: str = "y") -> None:
    """Amounts in a unit a reader takes in: KRW in 억 원 (≥ 1억) or 백만 원, USD in thousands."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    largest = max(abs(low), abs(high))
    if currency == "KRW":
        scale, key = (
            (100_000_000, "axis.eok_krw") if largest >= 100_000_000 else (1_000_000, "axis.million_krw")
        )
    else:
        scale, key = (1_000, "axis.thousand_usd") if largest >= 10_000 else (1, "axis.usd")
    places = 1 if largest / scale < 10 else 0
    target.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / scale:,.{places}f}"))
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label(key, lang))


def _style() -> Any:  # rc_context's keys are typed as literals
    ensure_cjk_font()
    return {"font.family": FONTS, "font.size": 8, "axes.spines.top": False, "axes.spines.right": False}


def cash_flow_chart(flow: CashFlow, site: QuoteSite, lang: Language) -> str:
    """Stacked bars per year: purchase and each running cost up, the residual value down."""
    with rc_context(_style()):
        fig, ax = _figure()
        years = [label("year_n", lang).format(n=y) for y in flow.years]
        up = [0.0] * len(years)
        down = [0.0] * len(years)
        for i, (row, amounts) in enumerate(flow.rows):
            values = [float(a.amount) for a in amounts]
            if not any(values):
                continue
            base = [d if v < 0 else u for v, u, d in zip(values, up, down, strict=True)]
            ax.bar(
                years,
                values,
                bottom=base,
                label=cost_label("cf", row, site, lang),
                color=ROW_COLORS.get(row, COLORS[i % 8]),
            )
            up = [u + max(v, 0.0) for u, v in zip(up, values, strict=True)]
            down = [d + min(v, 0.0) for d, v in zip(down, values, strict=True)]
        ax.axhline(0, color="#333333", linewidth=0.6)
        _money_axis(ax, flow.total.currency, lang)
        ax.legend(fontsize=7, ncols=4, loc="upper right", frameon=False)
        return _svg(fig, "cashflow")


def present_value_chart(rows: Sequence[Any], lang: Language, *, title: str = "") -> str:
    """Per plan year (0 = purchases): nominal and discounted cash side by side, and the running
    total of the discounted cash (ending at the NPV) as a line. ``rows``: ``PresentValueRow``;
    ``title`` (e.g. the NPV stated) above the plot."""
    with rc_context(_style()):
        fig, ax = _figure()
        x = list(range(len(rows)))
        width = 0.4
        ax.bar(
            [i - width / 2 for i in x],
            [float(r.nominal.amount) for r in rows],
            width,
            label=label("pv.nominal", lang),
            color=COLORS[6],
        )
        ax.bar(
            [i + width / 2 for i in x],
            [float(r.discounted.amount) for r in rows],
            width,
            label=label("pv.discounted", lang),
            color=COLORS[0],
        )
        ax.plot(
            x,
            [float(r.cumulative.amount) for r in rows],
            marker="o",
            color=COLORS[3],
            label=label("pv.cumulative", lang),
        )
        ax.set_xticks(x, [label("year_n", lang).format(n=r.year) for r in rows])
        ax.axhline(0, color="#333333", linewidth=0.6)
        _money_axis(ax, rows[0].nominal.currency if rows else "USD", lang)
        ax.legend(fontsize=7, ncols=3, loc="upper left", frameon=False)
        if title:
            ax.set_title(title, fontsize=9)
        return _svg(fig, "present-value")


def tco_chart(components: Sequence[CostComponentRow], currency: str, site: QuoteSite, lang: Language) -> str:
    """Horizontal bars: each TCO component over the horizon (the residual value negative)."""
    with rc_context(_style()):
        fig, ax = _figure(max(1.6, 0.35 * len(components) + 0.8))
        names = [cost_label("comp", c.name, site, lang) for c in components]
        values = [float(c.horizon_amount.amount) for c in components]
        colors = [COMPONENT_COLORS.get(c.name, COLORS[i % len(COLORS)]) for i, c in enumerate(components)]
        ax.barh(names, values, color=colors)
        ax.invert_yaxis()
        ax.axvline(0, color="#333333", linewidth=0.6)
        _money_axis(ax, currency, lang, "x")
        return _svg(fig, "tco")


def buy_vs_rent_chart(row: BuyVsRentRow, currency: str, lang: Language) -> str:
    """Cost of one GPU per month against utilisation: buying (fixed + power per busy hour), renting
    on demand (per busy hour) and reserved (flat), with the break-even points marked."""
    with rc_context(_style()):
        fig, ax = _figure()
        u = [i / (UTILISATION_POINTS - 1) for i in range(UTILISATION_POINTS)]
        hours = HOURS_PER_MONTH
        if row.owned_fixed_monthly_per_gpu is not None:
            fixed = row.owned_fixed_monthly_per_gpu
            power = row.power_per_busy_gpu_hour
            ax.plot(
                u, [fixed + power * hours * x for x in u], label=label("owned_line", lang), color=COLORS[0]
            )
        if row.on_demand_per_gpu_hour is not None:
            od = float(row.on_demand_per_gpu_hour.amount)
            ax.plot(u, [od * hours * x for x in u], label=label("on_demand_line", lang), color=COLORS[5])
        if row.reserved_per_gpu_hour is not None:
            flat = float(row.reserved_per_gpu_hour.amount) * hours
            ax.plot(u, [flat] * len(u), label=label("reserved_line", lang), color=COLORS[3], linestyle="--")
        for point, key in (
            (row.break_even_on_demand, "break_even_od"),
            (row.break_even_reserved, "break_even_res"),
        ):
            if point is not None and 0.0 <= point <= 1.0:
                ax.axvline(point, color="#555555", linestyle=":", linewidth=1.0)
                ax.annotate(
                    f"{label(key, lang)} {point:.0%}",
                    xy=(point, 0.95),
                    xycoords=("data", "axes fraction"),
                    fontsize=7,
                    rotation=90,
                    va="top",
                    ha="right",
                )
        if row.plan_utilization is not None:
            ax.axvline(
                row.plan_utilization, color=COLORS[2], linewidth=1.2, label=label("plan_utilization", lang)
            )
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        _money_axis(ax, currency, lang)
        ax.set_xlabel(label("utilization", lang))
        ax.set_ylabel(f"{label('cost_per_gpu_month', lang)} ({ax.get_ylabel()})")
        ax.set_title(row.gpu_id, fontsize=9)
        ax.legend(fontsize=7, frameon=False, loc="upper left")
        return _svg(fig, f"breakeven-{row.gpu_id}")


def latency_chart(rows: Sequence[WorkloadRow], lang: Language) -> str:
    """Per workload: p95 TTFT and TPOT as a share of their targets (below 1 meets the SLA), and the
    per-user speed's target as a share of the speed reached."""
    with rc_context(_style()):
        fig, ax = _figure()
        names = [r.name for r in rows]
        series = (
            ("TTFT", [_share(r.ttft_p95_ms, r.ttft_target_ms) for r in rows]),
            ("TPOT", [_share(r.tpot_p95_ms, r.tpot_target_ms) for r in rows]),
            ("tok/s", [_share(r.min_per_user_tok_s, r.per_user_tok_s) for r in rows]),
        )
        width = 0.25
        for i, (name, values) in enumerate(series):
            xs = [j + (i - 1) * width for j in range(len(names))]
            ax.bar(xs, values, width=width, label=name, color=COLORS[i + 1])
        for j in range(len(rows)):
            if not any(values[j] for _, values in series):  # throughput-only work: nothing to draw
                ax.annotate(label("batch", lang), xy=(j, 0.05), ha="center", fontsize=7, color="#555555")
        ax.axhline(1.0, color=COLORS[5], linestyle="--", linewidth=1.0, label=label("share_of_target", lang))
        ax.set_xticks(range(len(names)), names)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylim(0, max(1.2, *(v for _, vs in series for v in vs)) * 1.05)
        ax.legend(fontsize=7, frameon=False, ncols=4, loc="upper right")
        return _svg(fig, "latency")


def _share(value: float | None, target: float | None) -> float:
    if value is None or target is None or target <= 0:
        return 0.0
    return value / target


def frontier_chart(frontier: Frontier, currency: str, lang: Language) -> str:
    """TCO of each sweep point against the swept value, Pareto-optimal points highlighted."""
    with rc_context(_style()):
        fig, ax = _figure()
        points = [p for p in frontier.points if p.horizon_tco is not None]
        xs = [p.value for p in points]
        ys = [float(p.horizon_tco.amount) for p in points if p.horizon_tco is not None]
        ax.plot(xs, ys, color=COLORS[6], marker="o", markersize=3, linewidth=0.8)
        pareto = [
            (p.value, float(p.horizon_tco.amount)) for p in points if p.pareto_optimal and p.horizon_tco
        ]
        if pareto:
            ax.scatter(*zip(*pareto, strict=True), color=COLORS[0], zorder=3, label=label("pareto", lang))
            ax.legend(fontsize=7, frameon=False)
        _money_axis(ax, currency, lang)
        ax.set_xlabel(frontier.axis)
        ax.set_ylabel(f"{label('horizon_tco', lang)} ({ax.get_ylabel()})")
        return _svg(fig, "frontier")


def budget_chart(budget: float, spend: float, currency: str, lang: Language) -> str:
    """One bar: the budget, the spend against it and what remains (over budget: the excess in red)."""
    with rc_context(_style()):
        fig, ax = _figure(1.5)
        used = min(spend, budget)
        ax.barh([0], [used], color=ROW_COLORS["capex"], label=label("spend", lang))
        if spend <= budget:
            ax.barh([0], [budget - spend], left=[used], color="#d5dbdb", label=label("remaining", lang))
        else:
            ax.barh([0], [spend - budget], left=[budget], color="#c0392b", label=label("over_budget", lang))
        ax.axvline(budget, color="#333333", linewidth=1.0)
        ax.set_yticks([])
        ax.set_xlim(0, max(budget, spend) * 1.02)
        _money_axis(ax, currency, lang, "x")
        fig.legend(fontsize=7, frameon=False, ncols=3, loc="outside upper center")
        return _svg(fig, "budget")


def hourly_chart(loads: Sequence[HourlyLoad], lang: Language) -> str:
    """Per workload, demand as a share of its replicas' capacity at the SLA, hour by hour (at or
    under 100 % the hour is served)."""
    with rc_context(_style()):
        fig, ax = _figure()
        hours = list(range(24))
        for i, load in enumerate(loads):
            shares = [
                d / c if c > 0 else 0.0 for d, c in zip(load.demand_req_s, load.capacity_req_s, strict=True)
            ]
            ax.plot(
                hours,
                shares,
                marker="o",
                markersize=2,
                linewidth=1.0,
                label=load.workload,
                color=COLORS[i % len(COLORS)],
            )
        ax.axhline(1.0, color="#c0392b", linestyle="--", linewidth=1.0, label=label("capacity", lang))
        ax.set_xticks(range(0, 24, 2))
        ax.set_xlabel(label("hour_of_day", lang))
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylabel(label("demand_share_of_capacity", lang))
        ax.set_ylim(0, 1.15)
        ax.legend(fontsize=7, frameon=False, ncols=4, loc="upper left")
        return _svg(fig, "hourly")
