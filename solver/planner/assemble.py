"""Turning a solved instance into a ``PlanResult``: the fleet as bid lines, its TCO and unit costs,
the break-even section, the uncertainty band, what was turned away, the summary and warnings.

Every pipeline (PlanFleet, EvaluateFleet, AnalyzeBreakEven, each sweep point) assembles its answer
here, so a fleet is priced by the same rounded TCO report wherever it appears.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pricebook.schema import Currency, GpuId, Money, Pricebook
from solver.analysis.cash_flows import CashFlows, cash_flows, lease_by_year
from solver.analysis.tco import (
    CostComponent,
    DepreciationYear,
    FleetLine,
    FleetTco,
    UnitCost,
    VatLines,
    WorkloadUsage,
    cost_components,
    depreciation_schedule,
    fleet_tco,
    site_terms,
    storage_lines,
    to_money,
    to_unit_price,
    unit_costs,
    vat_lines,
)
from solver.domain import AcquisitionMode, PlanRequest
from solver.optimizer.explain import rejection_reasons
from solver.optimizer.instance import FleetInstance, is_on_site
from solver.optimizer.results import ChosenOption, FleetSolution
from solver.planner.plan_break_even import plan_break_even
from solver.planner.results import (
    Baseline,
    BaselineSaving,
    PlanFleetLine,
    PlanResult,
    Sensitivity,
    UncertaintyBand,
)
from solver.planner.rows import deployment_lines, mapping_problems, with_workloads, workload_lines
from solver.planner.summary import (
    fx_note,
    gap_too_wide,
    gap_too_wide_warning,
    model_warnings,
    owned_warnings,
    price_warnings,
    solve_warnings,
    summary_text,
)
from solver.units import DAYS_PER_MONTH, HOURS_PER_DAY, HOURS_PER_MONTH


@dataclass(frozen=True, slots=True)
class Extras:
    """What the re-solves around the main solve found (empty for EvaluateFleet and sweep points)."""

    baselines: tuple[Baseline, ...] = ()
    saving: BaselineSaving | None = None
    sensitivity: tuple[Sensitivity, ...] = ()
    warnings: tuple[str, ...] = ()
    """Raised while running them (cut short, skipped, cancelled), before the plan's own warnings."""


@dataclass(frozen=True, slots=True)
class _Economics:
    """The plan's fleet priced: empty without a plan."""

    lines: tuple[FleetLine, ...]
    tco: FleetTco | None = None
    components: tuple[CostComponent, ...] = ()
    fleet: tuple[PlanFleetLine, ...] = ()
    costs: tuple[UnitCost, ...] = ()
    vat: VatLines | None = None
    depreciation: tuple[DepreciationYear, ...] = ()
    cash_flows: CashFlows | None = None
    leases: tuple[Money, ...] = ()


def assemble_result(
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    extras: Extras,
    overrides_applied: tuple[str, ...],
    started: float,
    utilization_override: float | None = None,
    complete: bool = False,
    deadline_limited: bool = False,
) -> PlanResult:
    """The full answer for ``solution``; ``started`` (``time.monotonic()``) times the whole call."""
    currency = request.constraints.currency
    economics = _economics(request, book, instance, solution)
    too_wide = gap_too_wide(solution, request.options.max_gap)
    warnings = [gap_too_wide_warning(solution, request.options.max_gap)] if too_wide else []
    warnings += extras.warnings
    if economics.tco is not None:
        warnings.extend(solve_warnings(solution, economics.tco, instance))
    warnings.extend(price_warnings(book, instance, solution))
    warnings.extend(owned_warnings(instance, solution))
    warnings.extend(model_warnings(request, book))
    groups = deployment_lines(solution, instance)
    fleet = with_workloads(economics.fleet, groups, solution)
    warnings.extend(mapping_problems(fleet, groups, solution, request))
    break_even = plan_break_even(
        request,
        book,
        instance,
        solution,
        lines=economics.lines,
        costs=economics.costs,
        utilization_override=utilization_override,
    )
    return PlanResult(
        status=solution.status,
        summary=(gap_too_wide_warning(solution, request.options.max_gap) + " " if too_wide else "")
        + summary_text(solution, economics.tco, extras.saving),
        currency=currency,
        horizon_months=instance.horizon_months,
        solution=solution,
        fleet=fleet,
        tco=economics.tco,
        cost_components=economics.components,
        includes_vat=request.constraints.include_vat,
        vat=economics.vat,
        depreciation=economics.depreciation,
        cash_flows=economics.cash_flows,
        lease_by_year=economics.leases,
        fx_rate_note=fx_note(book),
        unit_costs=economics.costs,
        break_even=break_even,
        baselines=extras.baselines,
        baseline_saving=extras.saving,
        sensitivity=extras.sensitivity,
        uncertainty=uncertainty_of(solution),
        warnings=tuple(dict.fromkeys(warnings)),
        pricebook_version=book.version,
        pricebook_hash=book.content_hash,
        overrides_applied=overrides_applied,
        candidates_considered=len(instance.candidates),
        seconds=time.monotonic() - started,
        rejected=rejected_deployments(instance),
        complete=complete,
        deadline_limited=deadline_limited,
        gap_too_wide=too_wide,
        deployment_lines=groups,
        workload_lines=workload_lines(solution, groups),
    )


def _economics(
    request: PlanRequest, book: Pricebook, instance: FleetInstance, solution: FleetSolution
) -> _Economics:
    if not solution.has_plan:
        return _Economics(lines=())
    currency = request.constraints.currency
    months = instance.horizon_months
    lines = fleet_lines(solution, instance)
    tco = solution_tco(solution, instance, currency)
    leases = lease_by_year(lines, currency)
    costs = unit_costs(
        lines,
        workload_usages(solution, instance),
        inference=request.inference,
        training=request.training,
        horizon_months=months,
        currency=currency,
    )
    return _Economics(
        lines=tuple(lines),
        tco=tco,
        components=cost_components(tco.total, site_terms(request.constraints, book)),
        fleet=plan_fleet_lines(solution, instance, tco, currency),
        costs=costs,
        vat=vat_lines(tco.total, book.site.vat_rate) if request.constraints.include_vat else None,
        depreciation=depreciation_schedule(tco.total.capex, months, book.site.depreciation_months),
        cash_flows=_cash_flows(request, tco, leases),
        leases=leases,
    )


def _cash_flows(request: PlanRequest, tco: FleetTco, leases: tuple[Money, ...]) -> CashFlows | None:
    """The yearly cash flows and NPV when the request gives a discount rate."""
    constraints = request.constraints
    if constraints.discount_rate_annual is None:
        return None
    return cash_flows(tco.total, constraints.discount_rate_annual, constraints.cost_objective, leases)


def rejected_deployments(instance: FleetInstance) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per workload name: the deployments (training: GPU types) turned away and why."""
    inference = {r.workload for r in instance.rejections}
    rows = [(w, rejection_reasons(instance.rejections_of(w))) for w in sorted(inference)]
    rows += [(t.name, rejection_reasons(t.rejections)) for t in instance.training if t.rejections]
    return tuple((name, reasons) for name, reasons in rows if reasons)


def fleet_lines(solution: FleetSolution, instance: FleetInstance) -> list[FleetLine]:
    """The optimizer's chosen options as TCO input (on-demand: peak count, busy hours as used)."""
    return [
        FleetLine(
            option=instance.option(chosen.option_id),
            gpus=chosen.peak_gpus,
            servers=chosen.servers,
            busy_gpu_hours_per_month=chosen.busy_gpu_hours_per_month,
        )
        for chosen in solution.options
    ]


def solution_tco(solution: FleetSolution, instance: FleetInstance, currency: Currency) -> FleetTco:
    """The TCO report of ``solution``: its fleet lines plus the request's fleet-wide storage."""
    return fleet_tco(
        fleet_lines(solution, instance),
        instance.horizon_months,
        currency,
        storage_lines(instance.extra_capex, instance.extra_monthly),
    )


def plan_fleet_lines(
    solution: FleetSolution, instance: FleetInstance, tco: FleetTco, currency: Currency
) -> tuple[PlanFleetLine, ...]:
    """The chosen options as bid lines: counts, unit prices, horizon cost, power and rack space."""
    by_option = {o.option_id: o for o in tco.by_option}
    result: list[PlanFleetLine] = []
    for chosen in solution.options:
        opt = instance.option(chosen.option_id)
        option_tco = by_option[chosen.option_id]
        price_hour = None
        if opt.mode is AcquisitionMode.ON_DEMAND:
            price_hour = to_unit_price(opt.busy_hourly_per_gpu, currency)
        elif opt.mode is AcquisitionMode.RESERVED:
            price_hour = to_unit_price(opt.fixed_monthly_per_gpu / HOURS_PER_MONTH, currency)
        on_site = is_on_site(opt)
        result.append(
            PlanFleetLine(
                option_id=opt.id,
                gpu=opt.gpu,
                mode=opt.mode,
                owned=opt.owned,
                server_id=opt.server_id,
                offer_id=opt.offer_id,
                provider=opt.provider,
                price_label=opt.price_label,
                gpus=chosen.peak_gpus,
                servers=chosen.servers,
                on_demand_gpus_by_hour=_on_demand_by_hour(solution, chosen),
                # A leased server has no price per GPU: its payments are the lease line.
                price_per_gpu=to_money(opt.capex_per_gpu, currency) if on_site and not opt.leased else None,
                price_per_gpu_hour=price_hour,
                horizon_cost=option_tco.tco.horizon_total,
                power_kw=(opt.power_kw_per_gpu * chosen.gpus + opt.power_kw_per_server * chosen.servers)
                if on_site
                else 0.0,
                rack_units=opt.rack_units_per_server * chosen.servers if on_site else 0.0,
                busy_gpu_hours_per_month=chosen.busy_gpu_hours_per_month,
                utilization=option_tco.utilization,
                gpus_per_instance=opt.rental_instance_gpus,
            )
        )
    return tuple(result)


def _on_demand_by_hour(solution: FleetSolution, chosen: ChosenOption) -> tuple[int, ...]:
    """On-demand GPUs rented in each hour of the day (empty for lines held every hour)."""
    if not chosen.on_demand_gpus:
        return ()
    hourly = [0] * HOURS_PER_DAY
    for bucket in solution.buckets:
        for hour in bucket.hours:
            hourly[hour] = chosen.on_demand_gpus[bucket.index]
    return tuple(hourly)


def workload_usages(solution: FleetSolution, instance: FleetInstance) -> list[WorkloadUsage]:
    """GPU-hours per month each workload occupies per GPU type (replicas × GPUs × hours; on a
    shared card, each model its share of it)."""
    hours = {b.index: b.hours_per_day for b in instance.buckets}
    usages: list[WorkloadUsage] = []
    for assignment in solution.assignments:
        per_gpu: dict[GpuId, float] = {}
        for use in assignment.uses:
            gpu_hours = sum(
                r * use.candidate.gpu_equivalents * hours[b] * DAYS_PER_MONTH
                for b, r in enumerate(use.replicas)
            )
            for gpu, gpus in use.candidate.gpus_by_type():  # both roles of a disaggregated unit
                share = gpus / use.candidate.gpu_equivalents if use.candidate.unit is not None else 1.0
                per_gpu[gpu] = per_gpu.get(gpu, 0.0) + gpu_hours * share
        usages.append(WorkloadUsage(assignment.workload, per_gpu))
    for alloc in solution.training:
        usages.append(WorkloadUsage(alloc.workload, {alloc.gpu: alloc.gpu_hours_per_month}))
    return usages


def uncertainty_of(solution: FleetSolution) -> UncertaintyBand:
    """The widest performance band among the deployments the plan uses."""
    lows: list[float] = []
    highs: list[float] = []
    for assignment in solution.assignments:
        for use in assignment.uses:
            if any(use.replicas):
                lows.append(use.candidate.band_low)
                highs.append(use.candidate.band_high)
    if not lows:
        return UncertaintyBand(1.0, 1.0, "no inference deployments in the plan")
    return UncertaintyBand(
        min(lows),
        max(highs),
        "the performance model's calibrated band for the deployments in this plan: their "
        "throughput may be this factor of the estimate; replica counts were sized on the estimate",
    )
