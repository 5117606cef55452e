"""Human-readable rendering of responses: plain-text tables (default) or Markdown.

Only formatting: every number shown comes from the response message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

from api.fleetplan.v1 import common_pb2, performance_pb2, plan_pb2
from api.fleetplan.v1 import fleet_planner_pb2 as api

Cell = str | int | float


def _cell(value: Cell) -> str:
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:,.2f}"
        return f"{value:.3g}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, markdown: bool = False) -> str:
    body = [[_cell(c) for c in row] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) if _numeric(c) else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(list(headers)), line(["-" * w for w in widths]), *(line(r) for r in body)])


def _numeric(text: str) -> bool:
    return text.replace(",", "").replace(".", "", 1).replace("-", "", 1).replace("%", "").isdigit()


def section(
    title: str, headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, markdown: bool = False
) -> list[str]:
    """A heading and its table."""
    return [heading(title, markdown=markdown), table(headers, rows, markdown=markdown)]


def heading(text: str, *, markdown: bool) -> str:
    return f"\n## {text}\n" if markdown else f"\n{text}\n{'=' * len(text)}"


def has_on_demand(row: plan_pb2.BuyVsRent) -> bool:
    """Break-even and payback against on-demand only mean something when there is an offer."""
    return bool(row.on_demand_price_per_gpu_hour.currency_code)


def payback(row: plan_pb2.BuyVsRent) -> str:
    if not has_on_demand(row):
        return "-"
    return f"{row.payback_months:.1f}" if row.payback_months > 0 else "never"


def api_break_even(row: plan_pb2.ApiBreakEven) -> str:
    """Daily tokens above which self-hosting wins: "-" without an API price or a self-hosted
    deployment, "never" when a fully used replica still costs more per token than the API (all
    are 0 on the wire)."""
    if not row.api_per_million_tokens.currency_code or not row.self_hosted_per_million_tokens.currency_code:
        return "-"
    return f"{row.break_even_daily_tokens:,.0f}" if row.break_even_daily_tokens > 0 else "never"


def money(value: common_pb2.Money) -> str:
    if not value.currency_code:
        return "-"
    try:
        amount = Decimal(value.amount)
    except InvalidOperation:
        return f"{value.amount} {value.currency_code}"
    places = 0 if value.currency_code == "KRW" or abs(amount) >= 1000 else 2
    return f"{amount:,.{places}f} {value.currency_code}"


def enum_name(enum: object, number: int, prefix: str) -> str:
    name: str = enum.Name(number)  # type: ignore[attr-defined]
    return name.removeprefix(prefix).lower()


def _mode(number: int) -> str:
    return enum_name(common_pb2.AcquisitionMode, number, "ACQUISITION_MODE_")


TURNED_AWAY_SHOWN = 3


def _turned_away(workload: str, reasons: Sequence[str]) -> list[str]:
    """The first few deployments the planner turned away for a workload, and why (--json has all)."""
    if not reasons:
        return []
    hidden = len(reasons) - TURNED_AWAY_SHOWN
    more = f" (+{hidden} more in --json)" if hidden > 0 else ""
    return [f"turned away for {workload}{more}:", *(f"  - {r}" for r in reasons[:TURNED_AWAY_SHOWN])]


def _runner_up_remarks(deployments: Iterable[plan_pb2.WorkloadDeployment]) -> list[str]:
    """One line per distinct remark on the runner-ups shown (e.g. that large portfolios move one
    workload while the others keep their plan), naming the workloads it applies to."""
    by_remark: dict[str, list[str]] = {}
    for d in deployments:
        if d.runner_up_note and d.HasField("runner_up"):
            by_remark.setdefault(d.runner_up_note, []).append(d.workload_name)
    lines = []
    for remark, names in by_remark.items():
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"runner-ups of {shown}: {remark}")
    return lines


def _deployment_columns(d: plan_pb2.WorkloadDeployment) -> list[str | int | float]:
    """GPU, TP (or MIG slice), precision and replicas; a workload served by several deployment kinds
    at once (e.g. 2 × TP1 + 1 × TP2 on one 4-GPU board) shows each, joined by " + "."""
    groups = list(d.replica_groups)
    if not groups:
        return [d.gpu_id, d.tp, _precision(d.precision), d.replicas]

    def joined(values: list[str]) -> str:
        return values[0] if len(set(values)) == 1 else " + ".join(values)

    def size(g: plan_pb2.ReplicaGroup) -> str:
        return f"MIG 1/{g.mig_slice}" if g.mig_slice else str(g.tp)

    return [
        joined([g.gpu_id for g in groups]),
        joined([size(g) for g in groups]),
        joined([_precision(g.precision) for g in groups]),
        " + ".join(str(g.replicas) for g in groups),
    ]


def _precision(number: int) -> str:
    return enum_name(common_pb2.Precision, number, "PRECISION_") if number else "-"


def render_plan(plan: plan_pb2.Plan, provenance: common_pb2.Provenance, *, markdown: bool = False) -> str:
    out = [
        heading("Plan", markdown=markdown),
        f"status: {enum_name(plan_pb2.PlanStatus, plan.status, 'PLAN_STATUS_')}",
        plan.summary,
    ]
    if plan.fleet:
        out += section(
            "Fleet",
            ["GPU", "mode", "server", "GPUs", "servers", "horizon cost"],
            [
                [
                    f.gpu_id,
                    _mode(f.mode) + (" (owned)" if f.owned else ""),
                    f.server_id or "-",
                    f.gpu_count,
                    f.server_count,
                    money(f.horizon_cost),
                ]
                for f in plan.fleet
            ],
            markdown=markdown,
        )
    if plan.deployments:
        out += section(
            "Workloads",
            [
                "workload",
                "GPU",
                "TP/slice",
                "precision",
                "replicas",
                "p95 TTFT ms",
                "TPOT ms",
                "tok/s/user",
                "util",
                "runner-up (Δ cost)",
            ],
            [
                [
                    d.workload_name,
                    *_deployment_columns(d),
                    d.ttft_p95_ms,
                    d.tpot_ms,
                    d.per_user_tok_s,
                    f"{d.utilization:.0%}",
                    f"{d.runner_up.gpu_id} (+{money(d.runner_up.cost_delta)})"
                    if d.HasField("runner_up")
                    else ("see note" if d.runner_up_note else "-"),
                ]
                for d in plan.deployments
            ],
            markdown=markdown,
        )
        out += [
            f"note on {d.workload_name}: {d.runner_up_note}"
            for d in plan.deployments
            if d.runner_up_note and not d.HasField("runner_up")
        ]
        out += _runner_up_remarks(plan.deployments)
        for deployment in plan.deployments:
            out += _turned_away(deployment.workload_name, deployment.rejected_deployments)
    if plan.training:
        out += section(
            "Training",
            ["workload", "GPU", "GPUs", "hours/run", "GPU-h/month", "on-demand GPU-h"],
            [
                [
                    t.workload_name,
                    t.gpu_id,
                    t.gpus,
                    t.hours_per_run,
                    t.gpu_hours_per_month,
                    t.on_demand_gpu_hours_per_month,
                ]
                for t in plan.training
            ],
            markdown=markdown,
        )
        for t in plan.training:
            out += _turned_away(t.workload_name, t.rejected_gpus)
    if plan.HasField("cost"):
        c = plan.cost
        rows: list[list[Cell]] = [
            ["capex", money(c.capex)],
            ["opex / month", money(c.opex_monthly)],
            ["residual value", money(c.residual_value)],
            ["horizon TCO", money(c.horizon_tco)],
        ]
        rows += [[f"  {x.name}", money(x.horizon_amount)] for x in c.components]
        out += section(
            f"Cost ({c.currency_code}, {c.horizon_months} months)",
            ["item", "amount"],
            rows,
            markdown=markdown,
        )
    if plan.unit_costs:
        out += section(
            "Unit costs",
            ["workload", "per 1M output tok", "per 1M tokens", "per training run"],
            [
                [
                    u.workload_name,
                    money(u.per_million_output_tokens),
                    money(u.per_million_total_tokens),
                    money(u.per_training_run),
                ]
                for u in plan.unit_costs
            ],
            markdown=markdown,
        )
    if plan.baselines:
        out += section(
            "Single-GPU baselines",
            ["GPU", "feasible", "horizon TCO", "extra vs plan", "note"],
            [
                [
                    b.gpu_id,
                    "yes" if b.feasible else "no",
                    money(b.horizon_tco),
                    money(b.extra_cost),
                    b.reason,
                ]
                for b in plan.baselines
            ],
            markdown=markdown,
        )
        if plan.HasField("baseline_saving"):
            s = plan.baseline_saving
            out.append(
                f"saving over best single-GPU fleet ({s.best_baseline_gpu_id}): "
                f"{money(s.saving)} ({s.saving_fraction:.1%})"
            )
    if plan.HasField("break_even"):
        out.append(render_break_even(plan.break_even, markdown=markdown))
    if plan.sensitivity:
        out += section(
            "Sensitivity",
            ["subject", "parameter", "down", "up", "explanation"],
            [
                [
                    s.subject,
                    s.parameter,
                    f"{s.change_down_fraction:+.0%}" if s.HasField("change_down_fraction") else "-",
                    f"{s.change_up_fraction:+.0%}" if s.HasField("change_up_fraction") else "-",
                    s.explanation,
                ]
                for s in plan.sensitivity
            ],
            markdown=markdown,
        )
    if plan.HasField("diagnosis"):
        d = plan.diagnosis
        out.append(heading("Why no plan", markdown=markdown))
        for u in d.unservable_workloads:
            out.append(f"- workload {u.workload_name} cannot be served:")
            out += [f"    {r}" for r in u.reasons[:8]]
        out += [f"- {c.message}" for c in d.binding_caps]
        out += [f"- {m}" for m in d.messages]
    stats = plan.solver_statistics
    out += section(
        "Solver",
        ["status", "objective", "bound", "gap", "seconds", "limit", "backend", "vars", "cons"],
        [
            [
                enum_name(plan_pb2.PlanStatus, stats.status, "PLAN_STATUS_"),
                stats.objective,
                stats.best_bound,
                f"{stats.relative_gap:.2%}",
                stats.solve_seconds,
                enum_name(plan_pb2.LimitFired, stats.limit_fired, "LIMIT_FIRED_"),
                stats.backend,
                stats.variables,
                stats.constraints,
            ]
        ],
        markdown=markdown,
    )
    if plan.HasField("uncertainty"):
        band = plan.uncertainty
        out.append(
            f"throughput uncertainty band: ×{band.low_factor:.2f} – ×{band.high_factor:.2f} ({band.note})"
        )
    out += [f"warning: {w}" for w in plan.warnings]
    out.append(render_provenance(provenance))
    return "\n".join(out)


def render_provenance(p: common_pb2.Provenance) -> str:
    text = f"\npricebook {p.pricebook_version} (sha256 {p.pricebook_content_hash[:16]}…)"
    if p.performance_model_version:
        text += f", performance model {p.performance_model_version}"
    text += "".join(f"\noverride applied: {o}" for o in p.overrides_applied)
    return text


def render_break_even_answer(r: api.AnalyzeBreakEvenResponse, *, markdown: bool = False) -> str:
    """The plan the analysis rests on (in one line: an infeasible one says why), then the tables."""
    based_on = f"based on: {r.plan.summary}" if r.plan.summary else ""
    return "\n".join(x for x in (based_on, render_break_even(r.break_even, markdown=markdown)) if x)


def verdicts(texts: Sequence[str], *, markdown: bool) -> list[str]:
    """Sentences under a table, one bullet each (in Markdown after a blank line, so that the list
    does not run into the table)."""
    bullets = [f"- {t}" for t in texts if t]
    return ["", *bullets] if markdown and bullets else bullets


def render_break_even(b: plan_pb2.BreakEvenAnalysis, *, markdown: bool = False) -> str:
    """Buy vs rent and self-host vs API: numbers in tables, each row's verdict in words below
    (verdicts are sentences; in a column they made 300-character lines)."""
    out = []
    if b.buy_vs_rent:
        out += section(
            "Buy vs rent",
            ["GPU", "own /GPU-h", "on-demand /GPU-h", "break-even util", "payback months"],
            [
                [
                    x.gpu_id,
                    money(x.owned_cost_per_gpu_hour),
                    money(x.on_demand_price_per_gpu_hour),
                    f"{x.break_even_utilization_on_demand:.0%}" if has_on_demand(x) else "-",
                    payback(x),
                ]
                for x in b.buy_vs_rent
            ],
            markdown=markdown,
        )
        out += verdicts([x.verdict for x in b.buy_vs_rent], markdown=markdown)
    if b.api:
        out += section(
            "Self-host vs API",
            ["workload", "API", "self-host /1M", "API /1M", "break-even tok/day"],
            [
                [
                    x.workload_name,
                    x.provider,
                    money(x.self_hosted_per_million_tokens),
                    money(x.api_per_million_tokens),
                    api_break_even(x),
                ]
                for x in b.api
            ],
            markdown=markdown,
        )
        out += verdicts([x.verdict for x in b.api], markdown=markdown)
    out += [f"note: {n}" for n in b.notes]
    return "\n".join(out)


def render_evaluation(r: api.EvaluateFleetResponse, *, markdown: bool = False) -> str:
    out = [heading("Fleet evaluation", markdown=markdown), f"feasible: {'yes' if r.feasible else 'no'}"]
    if r.fits:
        out.append(
            table(
                ["workload", "served", "headroom"],
                [
                    [f.workload_name, f"{f.served_fraction:.0%}", f"{f.headroom_fraction:+.0%}"]
                    for f in r.fits
                ],
                markdown=markdown,
            )
        )
    if r.HasField("fleet_horizon_tco"):
        out.append(f"fleet TCO: {money(r.fleet_horizon_tco)}")
    if r.HasField("optimal_horizon_tco"):
        out.append(f"optimal plan TCO: {money(r.optimal_horizon_tco)} (saving {money(r.saving_of_optimal)})")
    out += [f"- {m}" for m in r.messages]
    out.append(render_plan(r.plan, r.provenance, markdown=markdown))
    return "\n".join(out)


def render_estimates(r: api.EstimatePerformanceResponse, *, markdown: bool = False) -> str:
    infer_rows: list[list[Cell]] = []
    train_rows: list[list[Cell]] = []
    errors = []
    for res in r.results:
        c = res.case
        model = c.model.model_id or f"{c.model.spec.params_b:g}B spec"
        outcome = res.WhichOneof("outcome")
        if outcome == "inference":
            e = res.inference
            infer_rows.append(
                [
                    res.case_index,
                    c.gpu_id,
                    model,
                    e.tp,
                    _precision(c.precision),
                    e.output_tok_s_total,
                    e.total_tok_s,
                    e.ttft_ms,
                    e.tpot_ms,
                    e.per_user_tok_s,
                    e.max_concurrency,
                    "yes" if e.fits else "no",
                    e.bottleneck,
                    f"{e.output_tok_s_low:,.0f}–{e.output_tok_s_high:,.0f}",
                ]
            )
        elif outcome == "training":
            t = res.training
            train_rows.append(
                [
                    res.case_index,
                    c.gpu_id,
                    model,
                    t.train_tok_s,
                    t.train_tok_s_per_gpu,
                    t.mfu,
                    t.hours,
                    t.gpu_hours,
                    "yes" if t.fits else "no",
                    t.min_gpus,
                ]
            )
        elif outcome == "error":
            errors.append(f"case {res.case_index}: {res.error.field}: {res.error.reason}")
    out = []
    if infer_rows:
        out.append(
            table(
                [
                    "#",
                    "GPU",
                    "model",
                    "TP",
                    "prec",
                    "out tok/s",
                    "total tok/s",
                    "TTFT ms",
                    "TPOT ms",
                    "tok/s/user",
                    "max conc",
                    "fits",
                    "bottleneck",
                    "band out tok/s",
                ],
                infer_rows,
                markdown=markdown,
            )
        )
    if train_rows:
        out.append(
            table(
                [
                    "#",
                    "GPU",
                    "model",
                    "train tok/s",
                    "per GPU",
                    "MFU",
                    "hours",
                    "GPU-hours",
                    "fits",
                    "min GPUs",
                ],
                train_rows,
                markdown=markdown,
            )
        )
    out += errors
    out.append(render_provenance(r.provenance))
    return "\n".join(out)


def render_catalog(r: api.ListCatalogResponse, *, markdown: bool = False) -> str:
    out = []
    if r.gpus:
        out += section(
            "GPUs",
            [
                "id",
                "name",
                "memory GB",
                "GB/s",
                "BF16 TF",
                "FP8 TF",
                "TDP W",
                "link",
                "P2P",
                "source",
                "as of",
            ],
            [
                [
                    g.id,
                    g.name,
                    g.memory_gb,
                    g.memory_bandwidth_gbs,
                    g.bf16_tflops,
                    g.fp8_tflops,
                    g.tdp_w,
                    g.scale_up_link,
                    "yes" if g.p2p_over_pcie else "no",
                    g.source.source[:40],
                    g.source.as_of_date,
                ]
                for g in r.gpus
            ],
            markdown=markdown,
        )
    if r.servers:
        out += section(
            "Servers",
            ["id", "GPU", "GPUs", "host cost", "host W", "RU", "source", "as of"],
            [
                [
                    s.id,
                    s.gpu_id,
                    s.gpus_per_server,
                    money(s.host_cost),
                    s.host_power_w,
                    s.rack_units,
                    s.source.source[:40],
                    s.source.as_of_date,
                ]
                for s in r.servers
            ],
            markdown=markdown,
        )
    if r.offers:
        out += section(
            "Offers",
            ["id", "kind", "GPU", "provider", "price", "term", "label", "source", "as of"],
            [
                [
                    o.id,
                    o.kind,
                    o.gpu_id,
                    o.provider,
                    money(o.price),
                    o.term_months,
                    o.label,
                    o.source.source[:40],
                    o.source.as_of_date,
                ]
                for o in r.offers
            ],
            markdown=markdown,
        )
    if r.api_prices:
        out += section(
            "API prices (per 1M tokens)",
            ["id", "provider", "model", "input", "output", "as of"],
            [
                [
                    p.id,
                    p.provider,
                    p.model_id,
                    money(p.input_per_million_tokens),
                    money(p.output_per_million_tokens),
                    p.source.as_of_date,
                ]
                for p in r.api_prices
            ],
            markdown=markdown,
        )
    if r.models:
        out += section(
            "Models",
            ["id", "params B", "active B", "layers", "kv heads", "experts", "attention", "as of"],
            [
                [
                    m.id,
                    m.params_b,
                    m.active_params_b,
                    m.layers,
                    m.kv_heads,
                    m.experts,
                    m.attention,
                    m.source.as_of_date,
                ]
                for m in r.models
            ],
            markdown=markdown,
        )
    if r.HasField("site"):
        s = r.site
        rows: list[list[Cell]] = [
            ["electricity KRW/kWh", s.electricity_krw_per_kwh],
            ["electricity USD/kWh", s.electricity_usd_per_kwh],
            ["PUE", s.pue],
            ["depreciation months", s.depreciation_months],
            ["residual value", f"{s.residual_value_fraction:.0%}"],
            ["support per year", f"{s.support_fraction_per_year:.0%}"],
            ["colocation per RU-month", money(s.colocation_per_rack_unit_month)],
            ["VAT", f"{s.vat_rate:.0%}"],
        ]
        rows += [
            [f"FX {f.base_currency_code}→{f.quote_currency_code}", f"{f.rate:,.2f} ({f.source.as_of_date})"]
            for f in s.fx_rates
        ]
        out += section("Site assumptions", ["assumption", "value"], rows, markdown=markdown)
        out.append(f"source: {s.source.source} ({s.source.as_of_date})")
    out.append(render_provenance(r.provenance))
    return "\n".join(out)


def swept_value(value: float) -> str:
    """A swept value as the user would write it: 0.5, 1.5, 2, 30 or 500,000,000."""
    if abs(value) >= 1000 and value == int(value):
        return f"{value:,.0f}"
    return f"{value:g}"


def render_frontier(frontier: api.SweepFrontier, dimension: str, *, markdown: bool = False) -> str:
    return "\n".join(
        [
            heading(f"Frontier ({dimension})", markdown=markdown),
            table(
                [dimension, "status", "horizon TCO", "fleet", "pareto"],
                [
                    [
                        swept_value(p.value),
                        enum_name(plan_pb2.PlanStatus, p.status, "PLAN_STATUS_"),
                        money(p.horizon_tco),
                        p.fleet_summary,
                        "yes" if p.pareto_optimal else "",
                    ]
                    for p in frontier.points
                ],
                markdown=markdown,
            ),
        ]
    )


__all__ = [
    "performance_pb2",
    "render_catalog",
    "render_estimates",
    "render_evaluation",
    "render_frontier",
    "render_plan",
    "table",
]
