"""A plan: fleet, workloads, training, cost, unit costs, baselines, break-even, sensitivity, diagnosis,
solver statistics, uncertainty band, warnings and provenance, in that order (each part only when the
plan has it)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.break_even import render_break_even
from clients.render.disaggregation import disaggregated_names, disaggregation_section, disaggregation_table
from clients.render.headroom import headroom_table
from clients.render.schedule import schedule_section, schedule_tables
from clients.render.tables import Cell, Table, heading, section
from clients.render.values import enum_name, mode_name, money, precision_name, render_provenance, status_name
from report.text import DASH, uses_text
from report.text import deployment as deployment_text
from report.text import replicas as replicas_text

TURNED_AWAY_SHOWN = 3
RUNNER_UP_WORKLOADS_NAMED = 6
DIAGNOSIS_REASONS_SHOWN = 8

WORKLOAD_HEADERS = [
    "workload",
    "deployments at peak (replicas × deployment)",
    "replicas",
    "p95 TTFT ms",
    "TPOT ms",
    "tok/s/user",
    "agg tok/s",
    "util",
    "runner-up (Δ cost)",
]
GROUP_HEADERS = [
    "deployment",
    "kind",
    "replicas peak",
    "off-peak",
    "GPUs at peak",
    "peak hour",
    "workloads (share of load)",
    "agg tok/s",
    "util",
]
SOLVER_HEADERS = ["status", "objective", "bound", "gap", "seconds", "limit", "backend", "vars", "cons"]


def render_plan(plan: plan_pb2.Plan, provenance: common_pb2.Provenance, *, markdown: bool = False) -> str:
    out = [heading("Plan", markdown=markdown), f"status: {status_name(plan.status)}", plan.summary]
    out += schedule_section(plan, markdown=markdown)
    out += _fleet(plan, markdown=markdown)
    out += _workloads(plan, markdown=markdown)
    out += _groups(plan, markdown=markdown)
    out += disaggregation_section(plan, markdown=markdown)
    out += _training(plan, markdown=markdown)
    out += _cost(plan, markdown=markdown)
    out += _unit_costs(plan, markdown=markdown)
    out += _baselines(plan, markdown=markdown)
    if plan.HasField("break_even"):
        out.append(render_break_even(plan.break_even, markdown=markdown))
    headroom = headroom_table(plan)
    out += headroom.section(markdown=markdown) if headroom is not None else []
    out += _sensitivity(plan, markdown=markdown)
    out += _diagnosis(plan, markdown=markdown)
    out += _solver(plan.solver_statistics, markdown=markdown)
    if plan.HasField("uncertainty"):
        band = plan.uncertainty
        out.append(
            f"throughput uncertainty band: ×{band.low_factor:.2f} – ×{band.high_factor:.2f} ({band.note})"
        )
    out += [f"warning: {w}" for w in plan.warnings]
    out.append(render_provenance(provenance))
    return "\n".join(out)


def plan_tables(plan: plan_pb2.Plan) -> list[Table]:
    """The plan's tables, as the text and Markdown renderings show them (and ``--csv`` writes them)."""
    tables = (
        _fleet_table(plan),
        _workloads_table(plan),
        _groups_table(plan),
        disaggregation_table(plan),
        _training_table(plan),
        _cost_table(plan),
        _unit_costs_table(plan),
        _baselines_table(plan),
        headroom_table(plan),
        _sensitivity_table(plan),
    )
    return [*schedule_tables(plan), *(t for t in tables if t is not None)]


def _fleet(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _fleet_table(plan)
    return [*table.section(markdown=markdown), *_footprint(plan)] if table is not None else []


def _footprint(plan: plan_pb2.Plan) -> list[str]:
    """The bought (and owned) hardware's power and rack space, as the quote states them."""
    on_site = [f for f in plan.fleet if f.mode == common_pb2.ACQUISITION_MODE_BUY]
    power_kw, rack_units = sum(f.power_kw for f in on_site), sum(f.rack_units for f in on_site)
    if not power_kw and not rack_units:
        return []
    return [f"on site: {power_kw:,.1f} kW at full load (incl. PUE), {rack_units:,.0f} RU"]


def _fleet_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.fleet:
        return None
    return Table(
        "fleet",
        "Fleet",
        [
            "GPU",
            "mode",
            "server",
            "offer",
            "provider",
            "label",
            "unit price",
            "GPUs",
            "servers",
            "horizon cost",
            "serves",
        ],
        [
            [
                f.gpu_id,
                mode_name(f.mode) + (" (owned)" if f.owned else ""),
                f.server_id or "-",
                f.offer_id or "-",
                f.provider or "-",
                f.price_label or "-",
                unit_price(f),
                _gpu_count(f),
                f.server_count,
                money(f.horizon_cost),
                ", ".join(f.workload_names) or "-",
            ]
            for f in plan.fleet
        ],
    )


def unit_price(line: plan_pb2.FleetLine) -> str:
    """Per GPU for purchases, per GPU-hour for rentals."""
    if line.HasField("price_per_gpu_hour"):
        return f"{money(line.price_per_gpu_hour)}/GPU-h"
    if line.HasField("price_per_gpu"):
        return f"{money(line.price_per_gpu)}/GPU"
    return "-"


def _gpu_count(line: plan_pb2.FleetLine) -> str:
    """GPUs, and for rentals of multi-GPU instances how many instances they are."""
    if line.gpus_per_instance > 1:
        return f"{line.gpu_count} ({line.gpu_count // line.gpus_per_instance} × {line.gpus_per_instance}-GPU)"
    return str(line.gpu_count)


def _workloads(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    """The deployments' table, then the notes on runner-ups and the deployments turned away."""
    table = _workloads_table(plan)
    if table is None:
        return []
    out = table.section(markdown=markdown)
    out += [
        f"note on {d.workload_name}: {d.runner_up_note}"
        for d in plan.deployments
        if d.runner_up_note and not d.HasField("runner_up")
    ]
    out += runner_up_remarks(plan.deployments)
    out += [f"{d.workload_name}: {d.measured_note}" for d in plan.deployments if d.measured_note]
    for deployment in plan.deployments:
        out += turned_away(deployment.workload_name, deployment.rejected_deployments)
    return out


def _workloads_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.deployments and not plan.workload_rows:
        return None
    deployments = {d.workload_name: d for d in plan.deployments}
    if plan.workload_rows:
        names = disaggregated_names(plan)
        rows = [_workload_row(w, deployments.get(w.workload_name), names) for w in plan.workload_rows]
    else:  # a plan saved before the planner wrote its rows
        rows = [_legacy_workload_row(d) for d in plan.deployments]
    return Table("workloads", "Workloads", WORKLOAD_HEADERS, rows)


def _runner_up(d: plan_pb2.WorkloadDeployment | None) -> str:
    if d is not None and d.HasField("runner_up"):
        return f"{d.runner_up.gpu_id} (+{money(d.runner_up.cost_delta)})"
    return "see note" if d is not None and d.runner_up_note else "-"


def _workload_row(
    w: plan_pb2.WorkloadRow, d: plan_pb2.WorkloadDeployment | None, disaggregated: dict[str, str]
) -> list[Cell]:
    if not w.served:
        return [w.workload_name, "not served", 0, "-", "-", "-", "-", "-", _runner_up(d)]
    return [
        w.workload_name,
        workload_uses(w, disaggregated),
        replicas_text(w.replicas),
        w.ttft_p95_ms,
        w.tpot_ms,
        w.per_user_tok_s,
        w.output_tok_s,
        f"{w.utilization:.0%}",
        _runner_up(d),
    ]


def _legacy_workload_row(d: plan_pb2.WorkloadDeployment) -> list[Cell]:
    """A plan saved before the planner wrote its rows: each replica group with its own replicas plus
    its share of a pool at peak (the same figures the rows hold)."""
    uses = [
        (
            g.replicas + g.shared_replicas,
            max([*g.replicas_by_hour, g.replicas + g.shared_replicas]),
            deployment_name(g.gpu_id, g.tp, g.mig_slice, g.precision) + (" shared" if g.pool_id else ""),
        )
        for g in d.replica_groups
    ]
    return [
        d.workload_name,
        uses_text(uses, "other hours").replace(DASH, "-"),
        replicas_text(sum(u[0] for u in uses)) if uses else d.replicas,
        d.ttft_p95_ms,
        d.tpot_ms,
        d.per_user_tok_s,
        d.output_tok_s,
        f"{d.utilization:.0%}",
        _runner_up(d),
    ]


def deployment_name(gpu_id: str, tp: int, mig_slice: int, precision: int) -> str:
    """E.g. "h100-nvl TP2 fp8" or "h100-nvl MIG 1/7 fp8"."""
    return deployment_text(gpu_id, tp, mig_slice, precision_name(precision))


def workload_uses(w: plan_pb2.WorkloadRow, disaggregated: dict[str, str] | None = None) -> str:
    """Each group serving the workload at its peak ("1.46 × h100-nvl TP1 fp8 shared + 1 × h100-nvl
    TP2 fp8"; a disaggregated group by its unit, ``disaggregated`` by group id), then those serving
    it only in other hours with their most replicas."""
    names = disaggregated or {}
    uses = [
        (
            u.replicas,
            u.replicas_max,
            (
                names.get(u.group_id)
                or u.deployment
                or deployment_name(u.gpu_id, u.tp, u.mig_slice, u.precision)
            )
            + (" shared" if u.shared else ""),
        )
        for u in w.uses
    ]
    return uses_text(uses, "other hours").replace(DASH, "-")


def _groups(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _groups_table(plan)
    return table.section(markdown=markdown) if table is not None else []


def _groups_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.deployment_groups:
        return None
    names = disaggregated_names(plan)
    return Table(
        "deployment_groups",
        "Deployment groups (replicas by hour in --json)",
        GROUP_HEADERS,
        [
            [
                names.get(g.group_id)
                or g.deployment
                or deployment_name(g.gpu_id, g.tp, g.mig_slice, g.precision),
                ("disaggregated pool" if g.shared else "disaggregated")
                if g.group_id in names
                else "shared pool"
                if g.shared
                else "co-located"
                if g.deployment
                else "own",
                g.replicas_peak,
                g.replicas_off_peak,
                replicas_text(g.gpus_peak),
                f"{g.peak_hour:02d}:00",
                ", ".join(f"{s.workload_name} {s.share:.0%}" for s in g.shares),
                g.output_tok_s,
                f"{g.utilization:.0%}",
            ]
            for g in plan.deployment_groups
        ],
    )


def runner_up_remarks(deployments: Iterable[plan_pb2.WorkloadDeployment]) -> list[str]:
    """One line per distinct remark on the runner-ups shown (e.g. that large portfolios move one
    workload while the others keep their plan), naming the workloads it applies to."""
    by_remark: dict[str, list[str]] = {}
    for d in deployments:
        if d.runner_up_note and d.HasField("runner_up"):
            by_remark.setdefault(d.runner_up_note, []).append(d.workload_name)
    lines = []
    for remark, names in by_remark.items():
        hidden = len(names) - RUNNER_UP_WORKLOADS_NAMED
        shown = ", ".join(names[:RUNNER_UP_WORKLOADS_NAMED]) + (f" and {hidden} more" if hidden > 0 else "")
        lines.append(f"runner-ups of {shown}: {remark}")
    return lines


def turned_away(workload: str, reasons: Sequence[str]) -> list[str]:
    """The first few deployments the planner turned away for a workload, and why (--json has all)."""
    if not reasons:
        return []
    hidden = len(reasons) - TURNED_AWAY_SHOWN
    more = f" (+{hidden} more in --json)" if hidden > 0 else ""
    return [f"turned away for {workload}{more}:", *(f"  - {r}" for r in reasons[:TURNED_AWAY_SHOWN])]


def _training(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _training_table(plan)
    if table is None:
        return []
    out = table.section(markdown=markdown)
    for t in plan.training:
        out += turned_away(t.workload_name, t.rejected_gpus)
    return out


def _training_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.training:
        return None
    return Table(
        "training",
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
    )


def _cost(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _cost_table(plan)
    if table is None:
        return []
    out = table.section(markdown=markdown)
    c = plan.cost
    if c.HasField("vat"):
        out += _vat(c.vat, markdown=markdown)
    if c.depreciation_schedule:
        out += section(
            "Book depreciation (straight line; accounting only, the TCO uses market value)",
            ["year", "months", "depreciation", "book value at year end"],
            [
                [y.year, y.months, money(y.depreciation), money(y.book_value_end)]
                for y in c.depreciation_schedule
            ],
            markdown=markdown,
        )
    nominal = plan.schedule.nominal_tco if plan.HasField("schedule") else c.horizon_tco
    out += _cash_flows(c, nominal, markdown=markdown)
    if c.fx_rate_note:
        out.append(f"FX rate: {c.fx_rate_note}")
    return out


def _cash_flows(c: plan_pb2.CostBreakdown, nominal: common_pb2.Money, *, markdown: bool) -> list[str]:
    """The yearly cash flows and their NPV (only when the request gave a discount rate)."""
    if not c.cash_flows_by_year:
        return []
    rate = f"{c.discount_rate_annual:.2%}"
    cumulative = Decimal(0)
    rows: list[list[Cell]] = []
    for y in c.cash_flows_by_year:
        cumulative += Decimal(y.discounted.amount)
        total = common_pb2.Money(amount=str(cumulative), currency_code=y.discounted.currency_code)
        rows.append([y.year, y.months, money(y.nominal), money(y.discounted), money(total)])
    out = section(
        f"Cash flow by year (year 0 = purchases; each year's opex at its end, discounted at {rate} a year)",
        ["year", "months", "nominal", "discounted", "cumulative discounted"],
        rows,
        markdown=markdown,
    )
    out.append(
        f"NPV at {rate} a year: {money(c.npv)} (nominal TCO {money(nominal)}; "
        f"the plan minimised the {'NPV' if c.objective == 'npv' else 'nominal TCO'})"
    )
    return out


def _cost_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.HasField("cost"):
        return None
    c = plan.cost
    rows: list[list[Cell]] = [
        ["capex", money(c.capex), ""],
        ["opex / month", money(c.opex_monthly), ""],
        ["residual value", money(c.residual_value), ""],
        ["horizon TCO", money(c.horizon_tco), ""],
    ]
    rows += [[f"  {x.name}", money(x.horizon_amount), x.explanation] for x in c.components]
    title = f"Cost ({c.currency_code}, {c.horizon_months} months, ex-VAT)"
    if plan.HasField("schedule"):  # a multi-year plan: these lines price the final year alone
        rows[3][0] = f"TCO of these {c.horizon_months} months"
        months = f"{c.horizon_months} months"
        title = f"Final year's fleet alone ({c.currency_code}, {months}, ex-VAT; the horizon: the schedule)"
    return Table("cost", title, ["item", "amount", "how"], rows)


def _vat(vat: plan_pb2.VatLine, *, markdown: bool) -> list[str]:
    return section(
        f"VAT {vat.vat_rate:.0%} on every payment over the horizon",
        ["item", "amount"],
        [
            ["supply (공급가액): capex + opex × months", money(vat.supply)],
            ["VAT (부가세)", money(vat.vat)],
            ["total (합계)", money(vat.total)],
            ["  of which VAT on capex", money(vat.capex_vat)],
            ["horizon TCO incl. VAT", money(vat.horizon_tco_with_vat)],
        ],
        markdown=markdown,
    )


def _unit_costs(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _unit_costs_table(plan)
    return table.section(markdown=markdown) if table is not None else []


def _unit_costs_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.unit_costs:
        return None
    return Table(
        "unit_costs",
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
    )


def _baselines(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _baselines_table(plan)
    if table is None:
        return []
    out = table.section(markdown=markdown)
    if plan.HasField("baseline_saving"):
        s = plan.baseline_saving
        out.append(
            f"saving over best single-GPU fleet ({s.best_baseline_gpu_id}): "
            f"{money(s.saving)} ({s.saving_fraction:.1%})"
        )
    return out


def _baselines_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.baselines:
        return None
    return Table(
        "baselines",
        "Single-GPU baselines",
        ["GPU", "feasible", "horizon TCO", "extra vs plan", "note"],
        [
            [b.gpu_id, "yes" if b.feasible else "no", money(b.horizon_tco), money(b.extra_cost), b.reason]
            for b in plan.baselines
        ],
    )


def _sensitivity(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _sensitivity_table(plan)
    return table.section(markdown=markdown) if table is not None else []


def _sensitivity_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.sensitivity:
        return None
    return Table(
        "sensitivity",
        "Price sensitivity (where re-planning changes the mix; not headroom)",
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
    )


def _diagnosis(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    if not plan.HasField("diagnosis"):
        return []
    d = plan.diagnosis
    out = [heading("Why no plan", markdown=markdown)]
    for u in d.unservable_workloads:
        out.append(f"- workload {u.workload_name} cannot be served:")
        out += [f"    {r}" for r in u.reasons[:DIAGNOSIS_REASONS_SHOWN]]
    lines = [c.message for c in d.binding_caps] + list(d.messages)
    out += [f"- {line}" for line in dict.fromkeys(lines)]  # each line once
    return out


def _solver(stats: plan_pb2.SolverStatistics, *, markdown: bool) -> list[str]:
    row: list[Cell] = [
        status_name(stats.status),
        stats.objective,
        stats.best_bound,
        "unknown" if stats.gap_unknown else f"{stats.relative_gap:.2%}",
        stats.solve_seconds,
        enum_name(plan_pb2.LimitFired, stats.limit_fired, "LIMIT_FIRED_"),
        stats.backend,
        stats.variables,
        stats.constraints,
    ]
    return section("Solver", SOLVER_HEADERS, [row], markdown=markdown)
