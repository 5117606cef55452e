"""Plans → proto: ``solver.planner.PlanResult`` (and the optimizer's ``FleetSolution`` inside it) as a
``Plan`` message: fleet lines, deployments, training, costs, unit costs, break-even, baselines,
sensitivity, diagnosis and solver statistics."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

from api.fleetplan.v1 import common_pb2, plan_pb2
from pricebook import catalog as pb_catalog
from pricebook.errors import UnknownEntryError
from pricebook.schema import Pricebook
from service.convert.disaggregation import comparison_to_proto, roles_to_proto
from service.convert.enums import MODE_TO_PROTO, QUANTILE_TO_PROTO, by_name, precision_to_proto
from service.convert.headroom import headroom_to_proto
from service.convert.money import amount_to_proto, money_to_proto, set_money
from service.convert.schedule import schedule_to_proto
from solver import planner
from solver.analysis.cash_flows import CashFlows
from solver.analysis.tco import UnitCost
from solver.budget import StageTime
from solver.optimizer.instance import Bucket
from solver.optimizer.results import (
    Assignment,
    CapRelaxation,
    Diagnosis,
    FleetSolution,
    LimitFired,
    SolverStats,
    SolveStatus,
)
from solver.planner.notices import Language, Notice
from solver.planner.rows import hourly

# Keyed by the plain string value, so a status given as its string is found too.
PLAN_STATUS_TO_PROTO: dict[str, plan_pb2.PlanStatus.ValueType] = {
    str(status): number for number, status in by_name(plan_pb2.PlanStatus, "PLAN_STATUS", SolveStatus).items()
}
LIMIT_TO_PROTO: dict[str, plan_pb2.LimitFired.ValueType] = {
    str(limit): number for number, limit in by_name(plan_pb2.LimitFired, "LIMIT_FIRED", LimitFired).items()
}


def status_to_proto(value: object) -> plan_pb2.PlanStatus.ValueType:
    """A solve status (enum member or its string) as the proto enum; unknown → UNSPECIFIED."""
    return PLAN_STATUS_TO_PROTO.get(str(value), plan_pb2.PLAN_STATUS_UNSPECIFIED)


def _limit_to_proto(value: object) -> plan_pb2.LimitFired.ValueType:
    return LIMIT_TO_PROTO.get(str(value), plan_pb2.LIMIT_FIRED_UNSPECIFIED)


def finite(value: float | None) -> float:
    """``value``, or 0 when it is absent or not finite (proto doubles carry no "unknown")."""
    return float(value) if value is not None and math.isfinite(value) else 0.0


def _by_hour(buckets: Sequence[Bucket], per_bucket: Sequence[int]) -> list[int]:
    """Expand per-bucket values to the 24 hours of the day."""
    return [round(v) for v in hourly(buckets, per_bucket)]


def notice_to_proto(notice: Notice) -> plan_pb2.PlanNotice:
    return plan_pb2.PlanNotice(
        code=notice.code,
        params=dict(notice.params),
        message=notice.text(Language.EN),
        message_ko=notice.text(Language.KO),
    )


UNKNOWN_RELATIVE_GAP = 1.0
"""The wire's relative gap of a plan without a proven bound: 100 %, from the trivial bound 0 of a TCO
(``gap_unknown`` says it is not a solver's bound)."""


def solver_stats_to_proto(
    stats: SolverStats, candidates: int = 0, stages: Sequence[StageTime] = ()
) -> plan_pb2.SolverStatistics:
    return plan_pb2.SolverStatistics(
        stages=[
            plan_pb2.StageTime(
                stage=s.stage,
                wall_seconds=finite(s.wall_s),
                cpu_seconds=finite(s.cpu_s),
                allotted_seconds=finite(s.budget_s),
            )
            for s in stages
        ],
        status=status_to_proto(stats.status),
        objective=finite(stats.objective),
        best_bound=finite(stats.best_bound),
        relative_gap=UNKNOWN_RELATIVE_GAP if stats.gap_unknown else finite(stats.gap),
        requested_relative_gap=finite(stats.relative_gap_target),
        gap_unknown=stats.gap_unknown,
        solve_seconds=finite(stats.seconds),
        time_limit_s=finite(stats.time_limit_s),
        limit_fired=_limit_to_proto(stats.limit_fired),
        backend=stats.backend,
        variables=stats.variables,
        constraints=stats.constraints,
        candidates=candidates,
    )


def _gpu_name(book: Pricebook | None, gpu_id: str) -> str:
    if book is None:
        return gpu_id
    try:
        return pb_catalog.gpu(book, gpu_id).name
    except UnknownEntryError:
        return gpu_id


def fleet_line_to_proto(line: planner.PlanFleetLine, book: Pricebook | None) -> plan_pb2.FleetLine:
    out = plan_pb2.FleetLine(
        gpu_id=line.gpu,
        gpu_name=_gpu_name(book, line.gpu),
        mode=MODE_TO_PROTO.get(line.mode, common_pb2.ACQUISITION_MODE_UNSPECIFIED),
        server_id=line.server_id or "",
        gpu_count=line.gpus,
        server_count=line.servers,
        owned=line.owned,
        on_demand_gpus_by_hour=list(line.on_demand_gpus_by_hour),
        offer_id=line.offer_id,
        power_kw=finite(line.power_kw),
        rack_units=round(finite(line.rack_units)),
        provider=line.provider,
        price_label=line.price_label.value if line.price_label is not None else "",
        gpus_per_instance=line.gpus_per_instance,
        workload_names=list(line.workloads),
    )
    set_money(out, "price_per_gpu_hour", line.price_per_gpu_hour)
    set_money(out, "price_per_gpu", line.price_per_gpu)
    set_money(out, "horizon_cost", line.horizon_cost)
    return out


def _deployment(
    assignment: Assignment,
    solution: FleetSolution,
    currency: str,
    rejected: Sequence[str] = (),
    probability: float = 0.0,
) -> plan_pb2.WorkloadDeployment:
    peak = assignment.peak_bucket
    if not assignment.uses:  # a given fleet with no replica for this workload (EvaluateFleet)
        return plan_pb2.WorkloadDeployment(
            workload_name=assignment.workload,
            demand_req_s=finite(assignment.demand_req_s[peak]),
            runner_up_note=assignment.runner_up_note,
            rejected_deployments=rejected,
        )
    primary = assignment.primary.candidate
    groups = [
        plan_pb2.ReplicaGroup(
            gpu_id=u.candidate.gpu,
            tp=u.candidate.tp,
            mig_slice=u.candidate.mig_slice,
            precision=precision_to_proto(u.candidate.precision),
            kv_precision=precision_to_proto(u.candidate.kv_precision),
            replicas=u.replicas[peak],
            replicas_by_hour=_by_hour(solution.buckets, u.replicas),
            capacity_per_replica_req_s=finite(u.candidate.capacity_req_s),
            pool_id=u.candidate.pool if u.pooled else "",
            shared_replicas=finite(u.shared_load[peak]) if u.pooled else 0.0,
            input_tokens=u.candidate.input_tokens,
            output_tokens=u.candidate.output_tokens,
        )
        for u in assignment.uses
    ]
    out = plan_pb2.WorkloadDeployment(
        workload_name=assignment.workload,
        gpu_id=primary.gpu,
        tp=primary.tp,
        precision=precision_to_proto(primary.precision),
        kv_precision=precision_to_proto(primary.kv_precision),
        replicas=sum(u.replicas[peak] for u in assignment.uses),
        replica_groups=groups,
        ttft_p95_ms=finite(primary.ttft_p95_ms),
        tpot_ms=finite(primary.tpot_ms),
        per_user_tok_s=finite(primary.per_user_tok_s),
        utilization=finite(assignment.utilization),
        demand_req_s=finite(assignment.demand_req_s[peak]),
        capacity_req_s=finite(assignment.capacity_req_s[peak]),
        output_tok_s=finite(sum(u.serving(peak) * u.candidate.max_output_tok_s for u in assignment.uses)),
        meets_demand_probability=probability,
        bottleneck=primary.bottleneck or "",
        runner_up_note=assignment.runner_up_note,
        rejected_deployments=rejected,
        measured_by=list(primary.measured_by),
        measured_note=primary.measured_note,
    )
    if assignment.runner_up is not None:
        r = assignment.runner_up
        out.runner_up.CopyFrom(
            plan_pb2.RunnerUp(
                gpu_id=r.gpu,
                tp=r.tp,
                precision=precision_to_proto(r.precision),
                replicas=r.replicas_at_peak,
                horizon_tco=amount_to_proto(r.total_cost, currency),
                cost_delta=amount_to_proto(r.cost_difference, currency),
            )
        )
    return out


def deployment_group_to_proto(line: planner.DeploymentLine) -> plan_pb2.DeploymentGroup:
    group = plan_pb2.DeploymentGroup(
        group_id=line.id,
        gpu_id=line.gpu,
        tp=line.tp,
        mig_slice=line.mig_slice,
        precision=precision_to_proto(line.precision),
        kv_precision=precision_to_proto(line.kv_precision),
        shared=line.shared,
        replicas_peak=line.replicas_peak,
        replicas_off_peak=line.replicas_off_peak,
        replicas_by_hour=list(line.replicas_by_hour),
        gpus_peak=finite(line.gpus_peak),
        spares=line.spares,
        peak_hour=line.peak_hour,
        shares=[
            plan_pb2.GroupShare(
                workload_name=s.workload,
                share=finite(s.share),
                replicas_by_hour=[finite(v) for v in s.replicas_by_hour],
                output_tok_s=finite(s.output_tok_s),
            )
            for s in line.shares
        ],
        output_tok_s=finite(line.output_tok_s),
        utilization=finite(line.utilization),
    )
    if line.disaggregation is not None:
        group.disaggregation.CopyFrom(roles_to_proto(line.disaggregation))
    return _co_located(group, line)


Located = TypeVar("Located", plan_pb2.DeploymentGroup, plan_pb2.WorkloadGroupUse)


def _co_located(message: Located, line: planner.DeploymentLine | planner.WorkloadGroupUse) -> Located:
    """``message`` with the co-location fields of its group, set only on shared cards (whole-card
    groups keep the wire as it was; their deployment is named from gpu_id, tp, mig_slice, precision)."""
    if line.card_share < 1:
        message.card_share = line.card_share
        message.co_located_with.extend(line.co_located_with)
        message.deployment = line.label
    return message


def workload_row_to_proto(line: planner.WorkloadLine) -> plan_pb2.WorkloadRow:
    return plan_pb2.WorkloadRow(
        workload_name=line.workload,
        served=line.served,
        peak_hour=line.peak_hour,
        demand_req_s=finite(line.demand_req_s),
        capacity_req_s=finite(line.capacity_req_s),
        utilization=finite(line.utilization),
        uses=[
            _co_located(
                plan_pb2.WorkloadGroupUse(
                    group_id=u.group_id,
                    gpu_id=u.gpu,
                    tp=u.tp,
                    mig_slice=u.mig_slice,
                    precision=precision_to_proto(u.precision),
                    shared=u.shared,
                    replicas=finite(u.replicas),
                    replicas_max=finite(u.replicas_max),
                    share=finite(u.share),
                    output_tok_s=finite(u.output_tok_s),
                    ttft_p95_ms=finite(u.ttft_p95_ms),
                    tpot_ms=finite(u.tpot_ms),
                    per_user_tok_s=finite(u.per_user_tok_s),
                ),
                u,
            )
            for u in line.uses
        ],
        replicas=finite(line.replicas),
        output_tok_s=finite(line.output_tok_s),
        ttft_p95_ms=finite(line.ttft_p95_ms),
        tpot_ms=finite(line.tpot_ms),
        per_user_tok_s=finite(line.per_user_tok_s),
    )


def _diagnosis(diagnosis: Diagnosis) -> plan_pb2.InfeasibilityDiagnosis:
    return plan_pb2.InfeasibilityDiagnosis(
        unservable_workloads=[
            plan_pb2.UnservableWorkload(workload_name=u.workload, reasons=list(u.reasons))
            for u in diagnosis.unservable
        ],
        binding_caps=[_binding_cap(c) for c in diagnosis.binding_caps],
        messages=list(diagnosis.messages),
    )


def _binding_cap(c: CapRelaxation) -> plan_pb2.BindingCap:
    out = plan_pb2.BindingCap(
        cap=c.cap,
        limit=finite(c.limit),
        needed=finite(c.needed),
        shortfall=finite(c.shortfall),
        message=c.message,
        fleet=c.fleet,
    )
    if c.needed_at_least is not None:
        out.needed_at_least = finite(c.needed_at_least)
    return out


def _cost(result: planner.PlanResult) -> plan_pb2.CostBreakdown | None:
    if result.tco is None:
        return None
    total = result.tco.total
    out = plan_pb2.CostBreakdown(
        currency_code=result.currency,
        horizon_months=result.horizon_months,
        components=[
            plan_pb2.CostComponent(
                name=c.name,
                horizon_amount=money_to_proto(c.horizon_amount),
                monthly_amount=money_to_proto(c.monthly_amount),
                explanation=c.explanation,
            )
            for c in result.cost_components
        ],
        includes_vat=result.includes_vat,
        fx_rate_note=result.fx_rate_note,
    )
    set_money(out, "capex", total.capex)
    set_money(out, "opex_monthly", total.opex_monthly)
    set_money(out, "residual_value", total.residual_value)
    set_money(out, "horizon_tco", total.horizon_total)
    for year in result.depreciation:
        row = out.depreciation_schedule.add(year=year.year, months=year.months)
        set_money(row, "depreciation", year.depreciation)
        set_money(row, "book_value_end", year.book_value_end)
    if result.cash_flows is not None:
        _cash_flows(out, result.cash_flows)
    if result.vat is not None:
        out.vat.vat_rate = result.vat.rate
        for name in ("supply", "vat", "total", "capex_vat"):
            set_money(out.vat, name, getattr(result.vat, name))
        set_money(out.vat, "horizon_tco_with_vat", result.vat.horizon_total_with_vat)
    return out


def _cash_flows(out: plan_pb2.CostBreakdown, flows: CashFlows) -> None:
    out.discount_rate_annual = flows.rate
    out.objective = flows.objective.value
    set_money(out, "npv", flows.npv)
    for year in flows.years:
        row = out.cash_flows_by_year.add(year=year.year, months=year.months)
        set_money(row, "nominal", year.nominal)
        set_money(row, "discounted", year.discounted)


def unit_cost_to_proto(u: UnitCost) -> plan_pb2.UnitCost:
    out = plan_pb2.UnitCost(workload_name=u.workload)
    set_money(out, "per_million_output_tokens", u.per_million_output_tokens)
    set_money(out, "per_million_total_tokens", u.per_million_total_tokens)
    set_money(out, "per_training_run", u.per_training_run)
    set_money(out, "monthly_cost", u.monthly_cost)
    return out


def break_even_to_proto(result: planner.BreakEvenResult) -> plan_pb2.BreakEvenAnalysis:
    out = plan_pb2.BreakEvenAnalysis(notes=list(result.notes))
    for b in result.buy_vs_rent:
        row = plan_pb2.BuyVsRent(
            gpu_id=b.gpu,
            break_even_utilization_on_demand=finite(b.break_even_utilization_on_demand),
            break_even_utilization_reserved=finite(b.break_even_utilization_reserved),
            payback_months=finite(b.payback_months),
            plan_utilization=finite(b.plan_utilization),
            verdict=b.verdict,
        )
        set_money(row, "owned_cost_per_gpu_hour", b.owned_cost_per_gpu_hour)
        set_money(row, "on_demand_price_per_gpu_hour", b.on_demand_price_per_gpu_hour)
        set_money(row, "reserved_price_per_gpu_hour", b.reserved_price_per_gpu_hour)
        out.buy_vs_rent.append(row)
    for a in result.api:
        api_row = plan_pb2.ApiBreakEven(
            workload_name=a.workload,
            api_price_id=a.api_price_id or "",
            provider=a.provider,
            break_even_daily_tokens=finite(a.break_even_daily_tokens),
            workload_daily_tokens=finite(a.workload_daily_tokens),
            self_hosting_cheaper=bool(a.self_hosting_cheaper),
            verdict=a.verdict,
        )
        set_money(api_row, "self_hosted_per_million_tokens", a.self_hosted_per_million_tokens)
        set_money(api_row, "api_per_million_tokens", a.api_per_million_tokens)
        out.api.append(api_row)
    return out


def _baseline(b: planner.Baseline, book: Pricebook | None) -> plan_pb2.Baseline:
    out = plan_pb2.Baseline(
        gpu_id=b.gpu,
        feasible=b.feasible,
        fleet=[fleet_line_to_proto(x, book) for x in b.fleet],
        reason=b.reason or b.fleet_summary,
    )
    set_money(out, "horizon_tco", b.horizon_tco)
    set_money(out, "extra_cost", b.extra_cost)
    return out


def _sensitivity(s: planner.Sensitivity) -> plan_pb2.Sensitivity:
    out = plan_pb2.Sensitivity(
        subject=s.subject,
        parameter=s.parameter,
        plan_below=s.plan_below,
        plan_above=s.plan_above,
        explanation=s.explanation,
    )
    if s.change_down_fraction is not None:
        out.change_down_fraction = s.change_down_fraction
    if s.change_up_fraction is not None:
        out.change_up_fraction = s.change_up_fraction
    return out


def _training(
    result: planner.PlanResult, rejected: Mapping[str, Sequence[str]]
) -> list[plan_pb2.TrainingAllocation]:
    per_run = {u.workload: u.per_training_run for u in result.unit_costs if u.per_training_run is not None}
    allocations = []
    for t in result.solution.training:
        allocation = plan_pb2.TrainingAllocation(
            workload_name=t.workload,
            gpu_id=t.gpu,
            gpus=t.min_gpus,
            gpu_hours_per_month=t.gpu_hours_per_month,
            on_demand_gpu_hours_per_month=t.on_demand_gpu_hours_per_month,
            hours_per_run=t.hours_per_run,
            rejected_gpus=rejected.get(t.workload, ()),
        )
        set_money(allocation, "cost_per_run", per_run.get(t.workload))
        allocations.append(allocation)
    return allocations


def _baseline_saving(s: planner.BaselineSaving) -> plan_pb2.BaselineSaving:
    return plan_pb2.BaselineSaving(
        best_baseline_gpu_id=s.best_baseline_gpu,
        saving=money_to_proto(s.saving),
        saving_fraction=finite(s.saving_fraction),
    )


def plan_to_proto(result: planner.PlanResult, book: Pricebook | None = None) -> plan_pb2.Plan:
    """A whole plan: fleet, deployments, training, cost, unit costs, break-even, baselines,
    sensitivity, diagnosis, statistics, uncertainty, warnings, cap usage."""
    solution = result.solution
    rejected = dict(result.rejected)
    meets = dict(result.meets_demand)
    plan = plan_pb2.Plan(
        # A plan too far from its bound is returned for inspection, not as one to buy.
        status=plan_pb2.PLAN_STATUS_GAP_TOO_WIDE if result.gap_too_wide else status_to_proto(result.status),
        summary=result.summary,
        fleet=[fleet_line_to_proto(line, book) for line in result.fleet],
        deployments=[
            _deployment(
                a, solution, result.currency, rejected.get(a.workload, ()), meets.get(a.workload, 0.0)
            )
            for a in solution.assignments
        ],
        training=_training(result, rejected),
        unit_costs=[unit_cost_to_proto(u) for u in result.unit_costs],
        break_even=break_even_to_proto(result.break_even),
        baselines=[_baseline(b, book) for b in result.baselines],
        sensitivity=[_sensitivity(s) for s in result.sensitivity],
        solver_statistics=solver_stats_to_proto(solution.stats, result.candidates_considered, result.stages),
        uncertainty=common_pb2.UncertaintyBand(
            low_factor=result.uncertainty.low_factor,
            high_factor=result.uncertainty.high_factor,
            note=result.uncertainty.note,
        ),
        warnings=list(result.warnings),
        notices=[notice_to_proto(n) for n in result.notices],
        cap_usage={k: float(v) for k, v in solution.usage.items() if math.isfinite(v)},
        deployment_groups=[deployment_group_to_proto(g) for g in result.deployment_lines],
        workload_rows=[workload_row_to_proto(w) for w in result.workload_lines],
    )
    cost = _cost(result)
    if cost is not None:
        plan.cost.CopyFrom(cost)
    if result.baseline_saving is not None:
        plan.baseline_saving.CopyFrom(_baseline_saving(result.baseline_saving))
    if solution.diagnosis is not None:
        plan.diagnosis.CopyFrom(_diagnosis(solution.diagnosis))
    _pools_and_risk(plan, result)
    if result.headroom is not None:
        plan.headroom.CopyFrom(headroom_to_proto(result.headroom))
    if result.schedule is not None:
        plan.schedule.CopyFrom(schedule_to_proto(result.schedule))
    if result.disaggregation is not None:
        plan.disaggregation.CopyFrom(comparison_to_proto(result.disaggregation))
    return plan


def _pools_and_risk(plan: plan_pb2.Plan, result: planner.PlanResult) -> None:
    """Shared pools, the capacity quantile and the TCO at it and at p50 (issue 20)."""
    solution = result.solution
    for pool in solution.pools:
        d = pool.deployment
        plan.pools.append(
            plan_pb2.ReplicaPool(
                pool_id=pool.id,
                gpu_id=d.gpu,
                tp=d.tp,
                mig_slice=d.mig_slice,
                precision=precision_to_proto(d.precision),
                replicas=max(pool.replicas, default=0),
                replicas_by_hour=_by_hour(solution.buckets, pool.replicas),
                spares=pool.spares,
                workload_names=list(pool.members),
            )
        )
    if result.tco_at_quantile is None:
        return
    plan.capacity_quantile = QUANTILE_TO_PROTO[result.capacity_quantile]
    plan.horizon_tco_at_quantile.CopyFrom(amount_to_proto(result.tco_at_quantile, result.currency))
    if result.tco_at_p50 is not None:
        plan.horizon_tco_at_p50.CopyFrom(amount_to_proto(result.tco_at_p50, result.currency))
