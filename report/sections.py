"""The quote's per-workload and analysis rows, taken from a ``PlanResult`` as the planner wrote them:
workloads (how each runs against its SLA, copied from ``PlanResult.workload_lines``), deployment
groups (``PlanResult.deployment_lines``), training runs, buy vs rent, self-host vs API, sensitivity."""

from __future__ import annotations

from pricebook.schema import Money
from report.data import (
    ApiRow,
    BuyVsRentRow,
    DeploymentGroupRow,
    GroupShareRow,
    SensitivityRow,
    TrainingRow,
    WorkloadRow,
    WorkloadUseRow,
)
from report.disagg_data import RolesRow
from report.disaggregation import group_roles, roles_row
from solver.domain import InferenceWorkload, PlanRequest
from solver.planner.results import PlanResult, WorkloadLine

UNSERVED_REASONS_SHOWN = 2


def _served_row(line: WorkloadLine, w: InferenceWorkload | None, roles: dict[str, RolesRow]) -> WorkloadRow:
    main = line.uses[0]
    sla = w.sla if w is not None else None
    return WorkloadRow(
        name=line.workload,
        served=True,
        gpu_id=main.gpu,
        tp=main.tp,
        mig_slice=str(main.mig_slice) if main.mig_slice else "",
        precision=main.precision.value,
        replicas=line.replicas,
        ttft_p95_ms=line.ttft_p95_ms,
        ttft_target_ms=sla.ttft_p95_ms if sla is not None else None,
        tpot_p95_ms=line.tpot_ms,
        tpot_target_ms=sla.tpot_p95_ms if sla is not None else None,
        per_user_tok_s=line.per_user_tok_s,
        min_per_user_tok_s=sla.min_per_user_tok_s if sla is not None else None,
        aggregate_tok_s=line.output_tok_s,
        utilization=line.utilization,
        note="",
        uses=tuple(
            WorkloadUseRow(
                gpu_id=u.gpu,
                tp=u.tp,
                mig_slice=u.mig_slice,
                precision=u.precision.value,
                shared=u.shared,
                replicas=u.replicas,
                replicas_max=u.replicas_max,
                share=u.share,
                output_tok_s=u.output_tok_s,
                deployment=u.label if u.card_share < 1 else "",
                card_share=u.card_share,
                disaggregation=roles.get(u.group_id),
            )
            for u in line.uses
        ),
    )


def _unserved_row(w: InferenceWorkload, note: str) -> WorkloadRow:
    return WorkloadRow(
        name=w.name,
        served=False,
        gpu_id="",
        tp=0,
        mig_slice="",
        precision="",
        replicas=0,
        ttft_p95_ms=None,
        ttft_target_ms=w.sla.ttft_p95_ms,
        tpot_p95_ms=None,
        tpot_target_ms=w.sla.tpot_p95_ms,
        per_user_tok_s=None,
        min_per_user_tok_s=w.sla.min_per_user_tok_s,
        aggregate_tok_s=None,
        utilization=None,
        note=note,
    )


def workload_rows(result: PlanResult, request: PlanRequest) -> tuple[WorkloadRow, ...]:
    """One row per inference workload of the request: how it runs, or why it does not."""
    served = {w.workload: w for w in result.workload_lines if w.served}
    diagnosis = result.solution.diagnosis
    reasons = {u.workload: u.reasons for u in diagnosis.unservable} if diagnosis is not None else {}
    roles = group_roles(result)
    rows = []
    for w in request.inference:
        line = served.get(w.name)
        if line is not None:
            rows.append(_served_row(line, w, roles))
        else:
            why = "; ".join(reasons.get(w.name, ())[:UNSERVED_REASONS_SHOWN]) or result.summary
            rows.append(_unserved_row(w, why))
    return tuple(rows)


def group_rows(result: PlanResult) -> tuple[DeploymentGroupRow, ...]:
    """The plan's deployment groups, as the planner wrote them."""
    return tuple(
        DeploymentGroupRow(
            gpu_id=g.gpu,
            tp=g.tp,
            mig_slice=g.mig_slice,
            precision=g.precision.value,
            shared=g.shared,
            replicas_peak=g.replicas_peak,
            replicas_off_peak=g.replicas_off_peak,
            replicas_by_hour=g.replicas_by_hour,
            gpus_peak=g.gpus_peak,
            peak_hour=g.peak_hour,
            shares=tuple(GroupShareRow(workload=s.workload, share=s.share) for s in g.shares),
            output_tok_s=g.output_tok_s,
            utilization=g.utilization,
            deployment=g.label if g.card_share < 1 else "",
            card_share=g.card_share,
            disaggregation=roles_row(g.disaggregation),
        )
        for g in result.deployment_lines
    )


def training_rows(result: PlanResult, request: PlanRequest) -> tuple[TrainingRow, ...]:
    per_run: dict[str, Money] = {
        u.workload: u.per_training_run for u in result.unit_costs if u.per_training_run is not None
    }
    runs = {t.name: t for t in request.training}
    rows = []
    for t in result.solution.training:
        workload = runs.get(t.workload)
        rows.append(
            TrainingRow(
                name=t.workload,
                gpu_id=t.gpu,
                gpus=t.min_gpus,
                hours_per_run=t.hours_per_run,
                runs_per_month=workload.runs_per_month if workload is not None else 0.0,
                deadline_hours=workload.deadline_hours if workload is not None else None,
                cost_per_run=per_run.get(t.workload),
            )
        )
    return tuple(rows)


def buy_vs_rent_rows(result: PlanResult) -> tuple[BuyVsRentRow, ...]:
    return tuple(
        BuyVsRentRow(
            gpu_id=b.gpu,
            owned_fixed_monthly_per_gpu=b.owned_fixed_monthly_per_gpu,
            power_per_busy_gpu_hour=b.power_per_busy_gpu_hour,
            on_demand_per_gpu_hour=b.on_demand_price_per_gpu_hour,
            reserved_per_gpu_hour=b.reserved_price_per_gpu_hour,
            break_even_on_demand=b.break_even_utilization_on_demand,
            break_even_reserved=b.break_even_utilization_reserved,
            plan_utilization=b.plan_utilization,
            payback_months=b.payback_months,
            verdict=b.verdict,
        )
        for b in result.break_even.buy_vs_rent
    )


def api_rows(result: PlanResult) -> tuple[ApiRow, ...]:
    return tuple(
        ApiRow(
            workload=a.workload,
            api_price_id=a.api_price_id or "",
            provider=a.provider,
            api_model=a.api_model,
            same_model=a.same_model,
            api_per_million_tokens=a.api_per_million_tokens,
            self_hosted_per_million_tokens=a.self_hosted_per_million_tokens,
            workload_daily_tokens=a.workload_daily_tokens,
            break_even_daily_tokens=a.break_even_daily_tokens,
            verdict=a.verdict,
        )
        for a in result.break_even.api
    )


def sensitivity_rows(result: PlanResult) -> tuple[SensitivityRow, ...]:
    return tuple(
        SensitivityRow(
            subject=s.subject,
            parameter=s.parameter,
            change_down_fraction=s.change_down_fraction,
            change_up_fraction=s.change_up_fraction,
            last_same_down_fraction=s.last_same_down_fraction,
            last_same_up_fraction=s.last_same_up_fraction,
            plan_below=s.plan_below,
            plan_above=s.plan_above,
            explanation=s.explanation,
        )
        for s in result.sensitivity
    )
