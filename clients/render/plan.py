"""A plan: fleet, workloads, training, cost, unit costs, baselines, break-even, sensitivity, diagnosis,
solver statistics, uncertainty band, warnings and provenance, in that order (each part only when the
plan has it)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from api.fleetplan.v1 import common_pb2, plan_pb2
from clients.render.break_even import render_break_even
from clients.render.headroom import headroom_table
from clients.render.tables import Cell, Table, heading, section
from clients.render.values import enum_name, mode_name, money, precision_name, render_provenance, status_name

TURNED_AWAY_SHOWN = 3
RUNNER_UP_WORKLOADS_NAMED = 6
DIAGNOSIS_REASONS_SHOWN = 8

WORKLOAD_HEADERS = [
    "workload",
    "GPU",
    "TP/slice",
    "precision",
    "replicas",
    "p95 TTFT ms",
    "TPOT ms",
    "tok/s/user",
    "agg tok/s",
    "util",
    "runner-up (Δ cost)",
]
SOLVER_HEADERS = ["status", "objective", "bound", "gap", "seconds", "limit", "backend", "vars", "cons"]


def render_plan(plan: plan_pb2.Plan, provenance: common_pb2.Provenance, *, markdown: bool = False) -> str:
    out = [heading("Plan", markdown=markdown), f"status: {status_name(plan.status)}", plan.summary]
    out += _fleet(plan, markdown=markdown)
    out += _workloads(plan, markdown=markdown)
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
        _training_table(plan),
        _cost_table(plan),
        _unit_costs_table(plan),
        _baselines_table(plan),
        headroom_table(plan),
        _sensitivity_table(plan),
    )
    return [t for t in tables if t is not None]


def _fleet(plan: plan_pb2.Plan, *, markdown: bool) -> list[str]:
    table = _fleet_table(plan)
    return table.section(markdown=markdown) if table is not None else []


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
    for deployment in plan.deployments:
        out += turned_away(deployment.workload_name, deployment.rejected_deployments)
    return out


def _workloads_table(plan: plan_pb2.Plan) -> Table | None:
    if not plan.deployments:
        return None
    return Table("workloads", "Workloads", WORKLOAD_HEADERS, [_workload_row(d) for d in plan.deployments])


def _workload_row(d: plan_pb2.WorkloadDeployment) -> list[Cell]:
    if d.HasField("runner_up"):
        runner_up = f"{d.runner_up.gpu_id} (+{money(d.runner_up.cost_delta)})"
    else:
        runner_up = "see note" if d.runner_up_note else "-"
    return [
        d.workload_name,
        *deployment_columns(d),
        d.ttft_p95_ms,
        d.tpot_ms,
        d.per_user_tok_s,
        d.output_tok_s,
        f"{d.utilization:.0%}",
        runner_up,
    ]


def deployment_columns(d: plan_pb2.WorkloadDeployment) -> list[Cell]:
    """GPU, TP (or MIG slice), precision and replicas; a workload served by several deployment kinds
    at once (e.g. 2 × TP1 + 1 × TP2 on one 4-GPU board) shows each, joined by " + "."""
    groups = list(d.replica_groups)
    if not groups:
        return [d.gpu_id, d.tp, precision_name(d.precision), d.replicas]

    def joined(values: list[str]) -> str:
        return values[0] if len(set(values)) == 1 else " + ".join(values)

    def size(g: plan_pb2.ReplicaGroup) -> str:
        return f"MIG 1/{g.mig_slice}" if g.mig_slice else str(g.tp)

    return [
        joined([g.gpu_id for g in groups]),
        joined([size(g) for g in groups]),
        joined([precision_name(g.precision) for g in groups]),
        " + ".join(str(g.replicas) for g in groups),
    ]


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
    if c.fx_rate_note:
        out.append(f"FX rate: {c.fx_rate_note}")
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
