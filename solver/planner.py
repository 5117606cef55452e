"""The planner: what the service calls for PlanFleet, EvaluateFleet, AnalyzeBreakEven, SweepPlans.

``plan(request, book, *, time_limit_s, cancel)``:

1. apply the request's pricebook overrides (``pricebook.overrides.apply_overrides``);
2. build the optimizer instance once (performance model → candidates, economics → options);
3. solve it (``solver.optimizer.solve``: verified plan, runner-ups, or an infeasibility diagnosis);
4. economics on the plan: TCO breakdown, unit costs, buy-vs-rent and self-host-vs-API break-even;
5. baselines (GPUs already owned + the best fleet of each allowed GPU type alone, or why none
   exists) and the plan's saving over the best of them;
6. sensitivity: how far each planned GPU type's price (and the strongest alternative's), and total
   demand, must move before the mix changes (``solver.analysis.whatif``).

Steps 5–6 re-solve the same instance with small changes, within the caller's time limit: the main
solve gets up to ``MAIN_SOLVE_SHARE`` of it, the rest is shared by baselines then sensitivity; what
does not fit says so in the result. Every result is a frozen dataclass; money is Decimal ``Money``.

Also here: ``evaluate`` (a given fleet vs the optimum), ``analyze_break_even`` (one GPU type, a
fleet, or the optimal plan) and ``sweep`` (one plan per value of a capex budget, demand multiplier
or SLA target, ≤ 2 solved at once, streamed with progress, then the Pareto frontier).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from enum import StrEnum

import structlog
from pydantic import ValidationError

from pricebook.catalog import gpu as catalogue_gpu
from pricebook.overrides import apply_overrides
from pricebook.schema import Currency, GpuId, Money, Pricebook, PriceLabel
from solver.analysis.breakeven import (
    ApiBreakEven,
    BuyVsRent,
    api_break_even,
    buy_vs_rent,
    resolve_params,
)
from solver.analysis.tco import (
    CostComponent,
    FleetLine,
    FleetTco,
    UnitCost,
    WorkloadUsage,
    cost_components,
    fleet_tco,
    to_money,
    to_unit_price,
    unit_costs,
)
from solver.analysis.whatif import (
    DEMAND_DOWN_MIN,
    DEMAND_UP_MAX,
    PRICE_DOWN_MIN,
    PRICE_UP_MAX,
    BaselineRun,
    SearchOutcome,
    describe_fleet,
    find_threshold,
    mix_of,
    run_baselines,
    scale_demand,
    scale_gpu_price,
    with_capex_budget,
)
from solver.domain import (
    AcquisitionMode,
    Fleet,
    InferenceWorkload,
    PlanRequest,
)
from solver.errors import FieldViolation, InvalidRequest, SolveCancelled
from solver.optimizer.cancel import CancelToken
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetEvaluation, FleetSolution, LimitFired, SolveStatus, WorkloadFit
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH, HOURS_PER_MONTH, SECONDS_PER_DAY

log = structlog.get_logger(__name__)

MAIN_SOLVE_SHARE = 0.7
"""Share of the caller's time limit the main solve may use; the rest goes to baselines/sensitivity."""
BASELINE_SHARE = 0.4
"""Share of the time left after the main solve that baselines may use (sensitivity gets the rest)."""
TCO_CHECK_TOLERANCE = 1e-6
"""Relative gap between the TCO breakdown and the MIP objective above which we warn (a bug)."""
MAX_SWEEP_THREADS = 2
"""Sweep points solved at once (the machine has 2 cores; OR-Tools releases the GIL)."""


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlanFleetLine:
    """GPUs of one type acquired one way, with everything a bid line shows."""

    option_id: str
    gpu: GpuId
    mode: AcquisitionMode
    owned: bool
    server_id: str | None
    offer_id: str
    gpus: int
    """Held every hour (buy, reserved, owned); on-demand: the peak hour's count."""
    servers: int
    on_demand_gpus_by_hour: tuple[int, ...]
    """24 values for on-demand lines (empty otherwise)."""
    price_per_gpu: Money | None
    """Purchases: price of one GPU."""
    price_per_gpu_hour: Money | None
    """Rentals: price per GPU-hour (reserved: the effective rate over whole terms)."""
    horizon_cost: Money
    power_kw: float
    """Wall power at full load incl. PUE (on-site lines)."""
    rack_units: float
    busy_gpu_hours_per_month: float
    utilisation: float


@dataclass(frozen=True, slots=True)
class UncertaintyBand:
    low_factor: float
    high_factor: float
    note: str


@dataclass(frozen=True, slots=True)
class BreakEvenResult:
    buy_vs_rent: tuple[BuyVsRent, ...]
    api: tuple[ApiBreakEven, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Baseline:
    gpu: GpuId
    feasible: bool
    fleet: tuple[PlanFleetLine, ...]
    horizon_tco: Money | None
    extra_cost: Money | None
    """Baseline TCO − chosen plan TCO."""
    reason: str
    fleet_summary: str


@dataclass(frozen=True, slots=True)
class BaselineSaving:
    best_baseline_gpu: GpuId
    saving: Money
    saving_fraction: float
    """Saving ÷ the best baseline's TCO."""


@dataclass(frozen=True, slots=True)
class Sensitivity:
    subject: str
    """A GPU id (its price) or ``demand``."""
    parameter: str
    change_down_fraction: float | None
    """E.g. −0.25: 25 % lower changes the mix; None = not within the searched range."""
    change_up_fraction: float | None
    last_same_down_fraction: float | None
    """The largest decrease checked that keeps the mix (just before the threshold)."""
    last_same_up_fraction: float | None
    plan_below: str
    plan_above: str
    explanation: str
    solves: int


@dataclass(frozen=True, slots=True)
class PlanResult:
    """Everything PlanFleet answers (see proto ``fleetplan.v1.Plan``)."""

    status: SolveStatus
    summary: str
    currency: Currency
    horizon_months: int
    solution: FleetSolution
    """The optimizer's plan: assignments, training, statistics, diagnosis, cap usage."""
    fleet: tuple[PlanFleetLine, ...]
    tco: FleetTco | None
    cost_components: tuple[CostComponent, ...]
    includes_vat: bool
    fx_rate_note: str
    unit_costs: tuple[UnitCost, ...]
    break_even: BreakEvenResult
    baselines: tuple[Baseline, ...]
    baseline_saving: BaselineSaving | None
    sensitivity: tuple[Sensitivity, ...]
    uncertainty: UncertaintyBand
    warnings: tuple[str, ...]
    pricebook_version: str
    pricebook_hash: str
    overrides_applied: tuple[str, ...]
    candidates_considered: int
    seconds: float
    rejected: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per workload name: the deployments (or, for training, GPU types) turned away and why."""
    complete: bool = False
    """Every part finished within its limits (main solve proven optimal, baselines and sensitivity
    not cut short, not cancelled): the same request and pricebook always give this same answer,
    so it may be reused (the service caches only complete results)."""

    @property
    def horizon_tco(self) -> Money | None:
        return self.tco.total.horizon_total if self.tco is not None else None


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    feasible: bool
    plan: PlanResult
    """The given fleet, with the best assignment of the workloads onto it."""
    fits: tuple[WorkloadFit, ...]
    fleet_horizon_tco: Money | None
    optimal_horizon_tco: Money | None
    saving_of_optimal: Money | None
    """How much cheaper the optimal plan is than the given fleet."""
    messages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BreakEvenAnalysis:
    break_even: BreakEvenResult
    unit_costs: tuple[UnitCost, ...]
    plan: PlanResult


class SweepAxis(StrEnum):
    CAPEX_BUDGET = "capex_budget"
    DEMAND_MULTIPLIER = "demand_multiplier"
    TPOT_P95_MS = "tpot_p95_ms"
    TTFT_P95_MS = "ttft_p95_ms"
    MIN_PER_USER_TOK_S = "min_per_user_tok_s"


@dataclass(frozen=True, slots=True)
class SweepPoint:
    index: int
    value: float
    plan: PlanResult
    points_done: int
    points_total: int


@dataclass(frozen=True, slots=True)
class FrontierPoint:
    value: float
    status: SolveStatus
    horizon_tco: Money | None
    fleet_summary: str
    """The fleet in words; without a plan, the plan's summary (why there is none)."""
    pareto_optimal: bool


@dataclass(frozen=True, slots=True)
class SweepFrontier:
    axis: SweepAxis
    points: tuple[FrontierPoint, ...]
    """Every point, sorted by value; ``pareto_optimal`` marks the cost-vs-value frontier."""

    @property
    def pareto(self) -> tuple[FrontierPoint, ...]:
        return tuple(p for p in self.points if p.pareto_optimal)


# --------------------------------------------------------------------------------------------
# Plan
# --------------------------------------------------------------------------------------------


def plan(
    request: PlanRequest,
    book: Pricebook,
    *,
    time_limit_s: float,
    cancel: CancelToken | None = None,
) -> PlanResult:
    """The cheapest verified fleet for ``request``, with its economics, baselines and sensitivity."""
    started = time.monotonic()
    book, applied = _apply_overrides(request, book)
    instance = _build_instance(request, book)
    result = _plan_instance(
        request,
        book,
        instance,
        time_limit_s=time_limit_s,
        cancel=cancel,
        overrides_applied=applied,
        started=started,
        with_extras=True,
    )
    log.info(
        "plan_done",
        status=result.status.value,
        seconds=round(result.seconds, 3),
        time_limit_s=time_limit_s,
        candidates=result.candidates_considered,
        baselines=len(result.baselines),
        sensitivity_solves=sum(s.solves for s in result.sensitivity),
        horizon_tco=str(result.horizon_tco.amount) if result.horizon_tco else None,
    )
    return result


def _apply_overrides(request: PlanRequest, book: Pricebook) -> tuple[Pricebook, tuple[str, ...]]:
    """The book with the request's overrides (a new content hash) and what was applied, in words."""
    new_book, applied = apply_overrides(book, request.overrides)
    return new_book, tuple(applied)


def _build_instance(request: PlanRequest, book: Pricebook) -> FleetInstance:
    from solver.optimizer.candidates import build_instance  # noqa: PLC0415 - heavy (perf model)

    return build_instance(request, book)


class _Solver:
    """Solves instances of one request with its backend, gap and cancel token."""

    def __init__(self, request: PlanRequest, book: Pricebook, cancel: CancelToken | None) -> None:
        self.request = request
        self.book = book
        self.cancel = cancel

    def __call__(
        self, instance: FleetInstance, time_limit_s: float, *, explain: bool = False
    ) -> FleetSolution:
        from solver.optimizer.api import solve  # noqa: PLC0415

        opts = self.request.options
        return solve(
            instance,
            time_limit_s=max(0.05, time_limit_s),
            cancel=self.cancel,
            backend=opts.backend,
            relative_gap=opts.relative_gap,
            explain=explain,
        )


def _plan_instance(
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    *,
    time_limit_s: float,
    cancel: CancelToken | None,
    overrides_applied: tuple[str, ...],
    started: float,
    with_extras: bool,
    utilisation_override: float | None = None,
) -> PlanResult:
    solver = _Solver(request, book, cancel)
    # The budget counts from `started`: building the candidates already used part of it.
    remaining_s = max(0.05, time_limit_s - (time.monotonic() - started))
    main_limit = min(request.options.time_limit_s, remaining_s * (MAIN_SOLVE_SHARE if with_extras else 1.0))
    solution = _solve_main(solver, instance, main_limit)
    warnings: list[str] = []
    baselines: tuple[Baseline, ...] = ()
    saving: BaselineSaving | None = None
    sensitivity: tuple[Sensitivity, ...] = ()
    deadline = started + time_limit_s * 0.95
    runs: tuple[BaselineRun, ...] = ()
    if with_extras and solution.has_plan and cancel is not None and cancel.expired:
        warnings.append("baselines and sensitivity skipped: the deadline or a shutdown ended the solve early")
    elif with_extras and solution.has_plan and not _cancelled(cancel):
        if request.options.compute_baselines:
            extras_left = deadline - time.monotonic()
            share = BASELINE_SHARE if request.options.compute_sensitivity else 1.0
            gpus = allowed_gpu_ids(request, book)
            runs = _safe_baselines(instance, gpus, solver, time.monotonic() + extras_left * share, warnings)
            baselines, saving = _baselines(runs, solution, request, instance)
        if request.options.compute_sensitivity and not _cancelled(cancel):
            sensitivity = _sensitivity(instance, solution, runs, solver, deadline)
            if any("time budget" in s.explanation for s in sensitivity):
                warnings.append("sensitivity search was cut short by the time limit (see each explanation)")
    complete = (
        solution.stats.status is SolveStatus.OPTIMAL
        and solution.stats.limit_fired is LimitFired.NONE
        and not warnings  # extras cut short or cancelled
        and not _cancelled(cancel)
        and all(r.solution is None or r.solution.stats.limit_fired is LimitFired.NONE for r in runs)
    )
    return _assemble(
        request,
        book,
        instance,
        solution,
        baselines=baselines,
        saving=saving,
        sensitivity=sensitivity,
        warnings=warnings,
        overrides_applied=overrides_applied,
        started=started,
        utilisation_override=utilisation_override,
        complete=complete,
    )


def _solve_main(solver: _Solver, instance: FleetInstance, time_limit_s: float) -> FleetSolution:
    from solver.optimizer.api import solve  # noqa: PLC0415
    from solver.optimizer.candidates import perf_capacity_checker  # noqa: PLC0415

    opts = solver.request.options
    return solve(
        instance,
        time_limit_s=time_limit_s,
        cancel=solver.cancel,
        backend=opts.backend,
        relative_gap=opts.relative_gap,
        capacity_of=perf_capacity_checker(solver.request, solver.book),
        request_summary=solver.request.model_dump_json(exclude_defaults=True)[:2000],
    )


def _cancelled(cancel: CancelToken | None) -> bool:
    return cancel is not None and cancel.cancelled


def allowed_gpu_ids(request: PlanRequest, book: Pricebook) -> tuple[GpuId, ...]:
    """The request's allowed GPU types as catalogue ids (every catalogue GPU when none is given)."""
    keys = request.constraints.allowed_gpus
    if not keys:
        return tuple(sorted(g.id for g in book.gpus))
    return tuple(dict.fromkeys(catalogue_gpu(book, key).id for key in keys))


def _safe_baselines(
    instance: FleetInstance,
    gpus: tuple[GpuId, ...],
    solver: _Solver,
    deadline: float,
    warnings: list[str],
) -> tuple[BaselineRun, ...]:
    try:
        return run_baselines(instance, gpus, solver, deadline=deadline)
    except SolveCancelled:
        warnings.append("baselines not computed: the call was cancelled")
        return ()


# --------------------------------------------------------------------------------------------
# Assembling a result
# --------------------------------------------------------------------------------------------


def _assemble(
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    baselines: tuple[Baseline, ...],
    saving: BaselineSaving | None,
    sensitivity: tuple[Sensitivity, ...],
    warnings: list[str],
    overrides_applied: tuple[str, ...],
    started: float,
    utilisation_override: float | None = None,
    complete: bool = False,
) -> PlanResult:
    currency = request.constraints.currency
    months = instance.horizon_months
    tco = None
    components: tuple[CostComponent, ...] = ()
    costs: tuple[UnitCost, ...] = ()
    lines: list[FleetLine] = []
    fleet: tuple[PlanFleetLine, ...] = ()
    if solution.has_plan:
        lines = fleet_lines(solution, instance)
        tco = fleet_tco(lines, months, currency)
        components = cost_components(tco.total)
        fleet = plan_fleet_lines(solution, instance, tco, currency)
        costs = unit_costs(
            lines,
            workload_usages(solution, instance),
            inference=request.inference,
            training=request.training,
            horizon_months=months,
            currency=currency,
        )
        objective = solution.cost.total if solution.cost is not None else None
        if objective is not None and abs(tco.total_float - objective) > TCO_CHECK_TOLERANCE * max(
            1.0, objective
        ):
            log.error("tco_mismatch", breakdown=tco.total_float, objective=objective)
            warnings.append(
                f"internal: TCO breakdown {tco.total_float:.2f} differs from the solver's {objective:.2f}"
            )
        if solution.status is SolveStatus.FEASIBLE and solution.stats.gap is not None:
            warnings.append(f"time limit reached: the plan is within {solution.stats.gap:.2%} of optimal")
    warnings.extend(_price_warnings(book, instance, solution))
    warnings.extend(_model_warnings(request, book))
    break_even = analyse_break_even(
        request, book, instance, solution, lines, costs, utilisation_override=utilisation_override
    )
    return PlanResult(
        status=solution.status,
        summary=_summary(solution, tco, saving),
        currency=currency,
        horizon_months=months,
        solution=solution,
        fleet=fleet,
        tco=tco,
        cost_components=components,
        includes_vat=request.constraints.include_vat,
        fx_rate_note=fx_note(book),
        unit_costs=costs,
        break_even=break_even,
        baselines=baselines,
        baseline_saving=saving,
        sensitivity=sensitivity,
        uncertainty=uncertainty_of(solution),
        warnings=tuple(dict.fromkeys(warnings)),
        pricebook_version=book.version,
        pricebook_hash=book.content_hash,
        overrides_applied=overrides_applied,
        candidates_considered=len(instance.candidates),
        seconds=time.monotonic() - started,
        rejected=_rejected(instance),
        complete=complete,
    )


def _rejected(instance: FleetInstance) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from solver.optimizer.explain import rejection_reasons  # noqa: PLC0415

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


def plan_fleet_lines(
    solution: FleetSolution, instance: FleetInstance, tco: FleetTco, currency: Currency
) -> tuple[PlanFleetLine, ...]:
    by_option = {o.option_id: o for o in tco.by_option}
    result: list[PlanFleetLine] = []
    for chosen in solution.options:
        opt = instance.option(chosen.option_id)
        option_tco = by_option[chosen.option_id]
        on_demand_by_hour: tuple[int, ...] = ()
        if chosen.on_demand_gpus:
            hourly = [0] * 24
            for bucket in solution.buckets:
                for hour in bucket.hours:
                    hourly[hour] = chosen.on_demand_gpus[bucket.index]
            on_demand_by_hour = tuple(hourly)
        price_hour = None
        if opt.mode is AcquisitionMode.ON_DEMAND:
            price_hour = to_unit_price(opt.busy_hourly_per_gpu, currency)
        elif opt.mode is AcquisitionMode.RESERVED:
            price_hour = to_unit_price(opt.fixed_monthly_per_gpu / HOURS_PER_MONTH, currency)
        on_site = opt.mode is AcquisitionMode.BUY
        result.append(
            PlanFleetLine(
                option_id=opt.id,
                gpu=opt.gpu,
                mode=opt.mode,
                owned=opt.owned,
                server_id=opt.server_id,
                offer_id=opt.offer_id,
                gpus=chosen.peak_gpus,
                servers=chosen.servers,
                on_demand_gpus_by_hour=on_demand_by_hour,
                price_per_gpu=to_money(opt.capex_per_gpu, currency) if on_site else None,
                price_per_gpu_hour=price_hour,
                horizon_cost=option_tco.tco.horizon_total,
                power_kw=(opt.power_kw_per_gpu * chosen.gpus + opt.power_kw_per_server * chosen.servers)
                if on_site
                else 0.0,
                rack_units=opt.rack_units_per_server * chosen.servers if on_site else 0.0,
                busy_gpu_hours_per_month=chosen.busy_gpu_hours_per_month,
                utilisation=option_tco.utilisation,
            )
        )
    return tuple(result)


def workload_usages(solution: FleetSolution, instance: FleetInstance) -> list[WorkloadUsage]:
    """GPU-hours per month each workload occupies per GPU type (replicas × GPUs × hours)."""
    hours = {b.index: b.hours_per_day for b in instance.buckets}
    usages: list[WorkloadUsage] = []
    for assignment in solution.assignments:
        per_gpu: dict[GpuId, float] = {}
        for use in assignment.uses:
            gpu_hours = sum(
                r * use.candidate.gpus_per_replica * hours[b] * DAYS_PER_MONTH
                for b, r in enumerate(use.replicas)
            )
            per_gpu[use.candidate.gpu] = per_gpu.get(use.candidate.gpu, 0.0) + gpu_hours
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


def fx_note(book: Pricebook) -> str:
    for rate in book.site.fx_rates:
        return f"1 {rate.base} = {rate.rate:,.2f} {rate.quote} ({rate.as_of.isoformat()}, {rate.source})"
    return "no FX rate in the pricebook"


def _price_warnings(book: Pricebook, instance: FleetInstance, solution: FleetSolution) -> list[str]:
    offers = {o.id: o for o in book.offers}
    warnings: list[str] = []
    for chosen in solution.options:
        offer = offers.get(instance.option(chosen.option_id).offer_id)
        if offer is not None and offer.label in (PriceLabel.ESTIMATE, PriceLabel.DERIVED):
            warnings.append(
                f"price of {offer.id} ({offer.gpu}) is {offer.label.value}, not a quote: "
                f"{offer.source} ({offer.as_of})"
            )
    return warnings


def _model_warnings(request: PlanRequest, book: Pricebook) -> list[str]:
    from solver.perf import resolve_model  # noqa: PLC0415 - perf is heavy; only needed here

    warnings: list[str] = []
    refs = [(w.name, w.model) for w in request.inference] + [(t.name, t.model) for t in request.training]
    for name, ref in refs:
        try:
            arch = resolve_model(ref, book)
        except (LookupError, ValueError):  # an unknown model was already reported by the instance
            continue
        if arch.assumed:
            warnings.append(
                f"{name}: architecture assumed from its size ({arch.params_b:g}B parameters); "
                "the uncertainty band is wider"
            )
    return warnings


def _summary(solution: FleetSolution, tco: FleetTco | None, saving: BaselineSaving | None) -> str:
    if not solution.has_plan or tco is None:
        messages = solution.diagnosis.messages if solution.diagnosis is not None else ()
        return f"No plan ({solution.status.value}). " + " ".join(messages)
    total = tco.total
    text = (
        f"{describe_fleet(solution)}: {_fmt(total.horizon_total)} over {tco.horizon_months} months "
        f"(capex {_fmt(total.capex)}, opex {_fmt(total.opex_monthly)}/month)."
    )
    if saving is None:
        return text
    best = saving.best_baseline_gpu
    if saving.saving.amount > 0:
        text += (
            f" Saves {_fmt(saving.saving)} ({saving.saving_fraction:.1%}) over the best single-GPU fleet "
            f"({best})."
        )
    elif saving.saving.amount < 0:  # only a plan stopped by its time limit can cost more
        cheaper = Money(amount=-saving.saving.amount, currency=saving.saving.currency)
        text += f" The best single-GPU fleet ({best}) costs {_fmt(cheaper)} less."
    elif set(solution.gpu_counts()) == {best}:
        text += " It is also the best single-GPU fleet."
    else:
        text += f" It costs the same as the best single-GPU fleet ({best})."
    return text


def _fmt(amount: Money) -> str:
    return f"{amount.amount:,} {amount.currency}"


# --------------------------------------------------------------------------------------------
# Break-even on a plan
# --------------------------------------------------------------------------------------------


def analyse_break_even(  # noqa: PLR0917 - the pieces of one assembled plan
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    solution: FleetSolution,
    lines: Sequence[FleetLine],
    costs: Sequence[UnitCost],
    *,
    utilisation_override: float | None = None,
) -> BreakEvenResult:
    """Buy vs rent for each GPU type in the plan (or allowed, without a plan), self-host vs API
    for each inference workload."""
    constraints = request.constraints
    all_modes = constraints.model_copy(update={"allowed_modes": tuple(AcquisitionMode), "owned": ()})
    comparison = acquisition_options(book, all_modes)
    notes: list[str] = []
    gpus = sorted({line.option.gpu for line in lines}) or sorted(instance.gpu_types())
    rent_rows = []
    for gpu in gpus:
        utilisation = (
            utilisation_override if utilisation_override is not None else plan_utilisation(lines, gpu)
        )
        rent_rows.append(
            buy_vs_rent(
                gpu,
                comparison,
                horizon_months=constraints.horizon_months,
                currency=constraints.currency,
                plan_utilisation=utilisation,
            )
        )
    by_workload = {c.workload: c for c in costs}
    api_rows = []
    for w in request.inference:
        model_id, params_b = resolve_params(book, w)
        cost = by_workload.get(w.name)
        own_per_token = None
        if cost is not None and cost.total_tokens_per_month > 0:
            own_per_token = float(cost.monthly_cost.amount) / cost.total_tokens_per_month
        replica_cost, replica_tokens = _replica_day(solution, instance, w, comparison)
        api_rows.append(
            api_break_even(
                w,
                model_id=model_id,
                params_b=params_b,
                self_hosted_per_token=own_per_token,
                replica_day_cost=replica_cost,
                replica_day_tokens=replica_tokens,
                book=book,
                constraints=constraints,
            )
        )
    if not request.inference:
        notes.append("no inference workloads: no API comparison")
    return BreakEvenResult(tuple(rent_rows), tuple(api_rows), tuple(notes))


def plan_utilisation(lines: Sequence[FleetLine], gpu: GpuId) -> float | None:
    """Busy GPU-hours ÷ GPU-hours held for a GPU type (on-demand: as if its peak count were held)."""
    held = busy = 0.0
    for line in lines:
        if line.option.gpu != gpu:
            continue
        held += line.gpus * HOURS_PER_MONTH
        busy += line.busy_gpu_hours_per_month
    if held <= 0:
        return None
    return min(1.0, busy / held)


def gpu_day_cost(option: AcquisitionOption, horizon_months: int) -> float:
    """One GPU of ``option`` held and busy for a whole day (a full server's share of the host)."""
    if option.mode is AcquisitionMode.ON_DEMAND:
        return option.busy_hourly_per_gpu * 24
    per_server = option.gpus_per_server
    capex = (option.capex_per_gpu + option.capex_per_server / per_server) * (1 - option.residual_fraction)
    monthly = (
        capex / horizon_months + option.fixed_monthly_per_gpu + option.fixed_monthly_per_server / per_server
    )
    return monthly / DAYS_PER_MONTH + option.busy_hourly_per_gpu * 24


def _replica_day(
    solution: FleetSolution,
    instance: FleetInstance,
    workload: InferenceWorkload,
    comparison: Sequence[AcquisitionOption],
) -> tuple[float | None, float | None]:
    """(cost per day, tokens per day at the SLA) of one replica of the workload's main deployment."""
    assignment = next((a for a in solution.assignments if a.workload == workload.name), None)
    if assignment is None or not assignment.uses:
        return None, None
    candidate = assignment.primary.candidate
    used = [instance.option(c.option_id) for c in solution.options if c.gpu == candidate.gpu]
    pool = [o for o in used if not o.owned] or [o for o in comparison if o.gpu == candidate.gpu]
    if not pool:
        return None, None
    option = min(pool, key=lambda o: gpu_day_cost(o, instance.horizon_months))
    full_day_tokens = candidate.capacity_req_s * workload.tokens_per_request * SECONDS_PER_DAY
    if option.mode is AcquisitionMode.ON_DEMAND:
        # Rented by the hour to follow demand: no idle hours to pay for.
        return gpu_day_cost(option, instance.horizon_months) * candidate.gpus_per_replica, full_day_tokens
    # Held all day but sized for the peak: it serves the average share of its peak capacity.
    rates = workload.hourly_request_rates()
    peak_to_average = max(rates) / (sum(rates) / len(rates)) if sum(rates) > 0 else 1.0
    tokens = full_day_tokens / peak_to_average
    return gpu_day_cost(option, instance.horizon_months) * candidate.gpus_per_replica, tokens


# --------------------------------------------------------------------------------------------
# Baselines and sensitivity on a plan
# --------------------------------------------------------------------------------------------


def _baselines(
    runs: Sequence[BaselineRun], solution: FleetSolution, request: PlanRequest, instance: FleetInstance
) -> tuple[tuple[Baseline, ...], BaselineSaving | None]:
    """Baselines priced exactly like the plan (the same rounded TCO report), and the saving."""
    currency = request.constraints.currency
    months = instance.horizon_months
    plan_total = fleet_tco(fleet_lines(solution, instance), months, currency).total.horizon_total
    result: list[Baseline] = []
    for run in runs:
        fleet: tuple[PlanFleetLine, ...] = ()
        total: Money | None = None
        if run.feasible and run.solution is not None and run.instance is not None:
            tco = fleet_tco(fleet_lines(run.solution, run.instance), months, currency)
            fleet = plan_fleet_lines(run.solution, run.instance, tco, currency)
            total = tco.total.horizon_total
        result.append(
            Baseline(
                gpu=run.gpu,
                feasible=run.feasible,
                fleet=fleet,
                horizon_tco=total,
                extra_cost=Money(amount=total.amount - plan_total.amount, currency=currency)
                if total
                else None,
                reason=run.reason,
                fleet_summary=describe_fleet(run.solution) if run.solution is not None else "",
            )
        )
    priced = [(b.horizon_tco.amount, b.gpu) for b in result if b.horizon_tco is not None]
    if not priced:
        return tuple(result), None
    best_total, best_gpu = min(priced)
    saving = best_total - plan_total.amount
    return tuple(result), BaselineSaving(
        best_baseline_gpu=best_gpu,
        saving=Money(amount=saving, currency=currency),
        saving_fraction=float(saving / best_total) if best_total > 0 else 0.0,
    )


def _sensitivity(
    instance: FleetInstance,
    solution: FleetSolution,
    runs: Sequence[BaselineRun],
    solve: _Solver,
    deadline: float,
) -> tuple[Sensitivity, ...]:
    base_mix = mix_of(solution)
    planned = sorted({g for g, _ in base_mix})
    alternative = _strongest_alternative(runs, solution, planned)
    subjects: list[tuple[str, bool]] = [(g, True) for g in planned]
    if alternative is not None:
        subjects.append((alternative, False))
    results: list[Sensitivity] = []
    n_searches = len(subjects) + 1
    for i, (gpu, in_plan) in enumerate(subjects):
        share_deadline = time.monotonic() + (deadline - time.monotonic()) / (n_searches - i)

        def priced(m: float, gpu: GpuId = gpu) -> FleetInstance:
            return scale_gpu_price(instance, gpu, m)

        try:
            down = find_threshold(
                priced, base_mix, PRICE_DOWN_MIN, solve, deadline=_mid(share_deadline, in_plan)
            )
            up = (
                find_threshold(priced, base_mix, PRICE_UP_MAX, solve, deadline=share_deadline)
                if in_plan
                else None
            )
        except SolveCancelled:
            return (*results, _cancelled_row())
        role = "in the plan" if in_plan else "strongest alternative not in the plan"
        results.append(_sensitivity_row(gpu, f"price ({role})", down, up, solution))
    try:
        down = find_threshold(
            lambda m: scale_demand(instance, m),
            base_mix,
            DEMAND_DOWN_MIN,
            solve,
            deadline=_mid(deadline, True),
        )
        up = find_threshold(
            lambda m: scale_demand(instance, m), base_mix, DEMAND_UP_MAX, solve, deadline=deadline
        )
        results.append(_sensitivity_row("demand", "total demand (all workloads)", down, up, solution))
    except SolveCancelled:
        results.append(_cancelled_row())
    return tuple(results)


def _cancelled_row() -> Sensitivity:
    return Sensitivity(
        subject="(cancelled)",
        parameter="(not computed)",
        change_down_fraction=None,
        change_up_fraction=None,
        last_same_down_fraction=None,
        last_same_up_fraction=None,
        plan_below="",
        plan_above="",
        explanation="sensitivity search stopped: the call was cancelled",
        solves=0,
    )


def _mid(deadline: float, split: bool) -> float:
    """Half of the time to ``deadline`` when two directions share it."""
    if not split:
        return deadline
    now = time.monotonic()
    return now + (deadline - now) / 2


def _strongest_alternative(
    runs: Sequence[BaselineRun], solution: FleetSolution, planned: list[GpuId]
) -> GpuId | None:
    """The GPU type not in the plan whose own best fleet is cheapest (else the cheapest runner-up)."""
    outside = [r for r in runs if r.gpu not in planned and r.horizon_tco is not None]
    if outside:
        return min(outside, key=lambda r: (r.horizon_tco or 0.0, r.gpu)).gpu
    runner_ups = [
        a.runner_up
        for a in solution.assignments
        if a.runner_up is not None and a.runner_up.gpu not in planned
    ]
    if runner_ups:
        return min(runner_ups, key=lambda r: (r.total_cost, r.gpu)).gpu
    return None


def _sensitivity_row(
    subject: str,
    parameter: str,
    down: SearchOutcome,
    up: SearchOutcome | None,
    solution: FleetSolution,
) -> Sensitivity:
    notes: list[str] = []

    def side(outcome: SearchOutcome | None, word: str) -> tuple[float | None, float | None, str]:
        if outcome is None:
            notes.append(
                f"{word}: not searched (a GPU type the plan does not use only matters when it gets cheaper)"
            )
            return None, None, ""
        t = outcome.threshold
        if t is None:
            if outcome.complete:
                notes.append(f"{word}: mix unchanged up to ×{outcome.searched_to:g}")
            else:
                notes.append(f"{word}: not searched to the end (time budget)")
            return None, None, ""
        if not outcome.complete:
            notes.append(
                f"{word}: the mix changes somewhere between {t.last_same_multiplier - 1:+.1%} and "
                f"{t.multiplier - 1:+.1%} (search stopped by the time budget before narrowing it)"
            )
        return t.multiplier - 1.0, t.last_same_multiplier - 1.0, describe_fleet(t.plan_past)

    down_at, down_same, below = side(down, "down")
    up_at, up_same, above = side(up, "up")
    return Sensitivity(
        subject=subject,
        parameter=parameter,
        change_down_fraction=down_at,
        change_up_fraction=up_at,
        last_same_down_fraction=down_same,
        last_same_up_fraction=up_same,
        plan_below=below,
        plan_above=above,
        explanation=f"today: {describe_fleet(solution)}; " + "; ".join(notes)
        if notes
        else f"today: {describe_fleet(solution)}",
        solves=down.solves + (up.solves if up is not None else 0),
    )


# --------------------------------------------------------------------------------------------
# EvaluateFleet and AnalyzeBreakEven
# --------------------------------------------------------------------------------------------


def evaluate(
    fleet: Fleet,
    request: PlanRequest,
    book: Pricebook,
    *,
    time_limit_s: float | None = None,
    cancel: CancelToken | None = None,
    compare_with_optimal: bool = True,
) -> EvaluationResult:
    """How a given fleet serves the workloads, what it costs, and how much cheaper the optimum is."""
    from solver.optimizer.api import evaluate_fleet  # noqa: PLC0415
    from solver.optimizer.candidates import build_instance  # noqa: PLC0415

    started = time.monotonic()
    book, applied = _apply_overrides(request, book)
    limit = time_limit_s if time_limit_s is not None else request.options.time_limit_s
    evaluation: FleetEvaluation = evaluate_fleet(
        fleet, request, book, time_limit_s=limit, cancel=cancel, compare_optimal=compare_with_optimal
    )
    instance = build_instance(request, book, fleet=fleet)
    result = _assemble(
        request,
        book,
        instance,
        evaluation.solution,
        baselines=(),
        saving=None,
        sensitivity=(),
        warnings=list(evaluation.messages),
        overrides_applied=applied,
        started=started,
    )
    currency = request.constraints.currency
    tco = result.horizon_tco
    optimal = None
    if evaluation.optimal is not None and evaluation.optimal_instance is not None:
        # Priced by the same rounded TCO report as the fleet (and as a plan of the same request).
        lines = fleet_lines(evaluation.optimal, evaluation.optimal_instance)
        optimal = fleet_tco(lines, instance.horizon_months, currency).total.horizon_total
    saving = None
    messages = list(evaluation.messages)
    if tco is not None and optimal is not None:
        saving = Money(amount=tco.amount - optimal.amount, currency=currency)
        if saving.amount > 0:
            messages.append(f"the optimal plan costs {saving.amount:,} {currency} less over the horizon")
    return EvaluationResult(
        feasible=evaluation.feasible,
        plan=result,
        fits=evaluation.fits,
        fleet_horizon_tco=tco,
        optimal_horizon_tco=optimal,
        saving_of_optimal=saving,
        messages=tuple(messages),
    )


def analyze_break_even(
    request: PlanRequest,
    book: Pricebook,
    *,
    gpu: GpuId | None = None,
    fleet: Fleet | None = None,
    utilisation: float | None = None,
    time_limit_s: float,
    cancel: CancelToken | None = None,
) -> BreakEvenAnalysis:
    """Break-even for a single GPU type (what-if), a given fleet, or (neither) the optimal plan."""
    started = time.monotonic()
    if fleet is not None:
        evaluation = evaluate(
            fleet, request, book, time_limit_s=time_limit_s, cancel=cancel, compare_with_optimal=False
        )
        result = evaluation.plan
        if utilisation is not None:
            result = _with_utilisation(result, request, book, utilisation)
        return BreakEvenAnalysis(result.break_even, result.unit_costs, result)
    if gpu is not None:
        constraints = request.constraints.model_copy(update={"allowed_gpus": (catalogue_gpu(book, gpu).id,)})
        request = request.model_copy(update={"constraints": constraints})
    book, applied = _apply_overrides(request, book)
    instance = _build_instance(request, book)
    result = _plan_instance(
        request,
        book,
        instance,
        time_limit_s=time_limit_s,
        cancel=cancel,
        overrides_applied=applied,
        started=started,
        with_extras=False,
        utilisation_override=utilisation,
    )
    return BreakEvenAnalysis(result.break_even, result.unit_costs, result)


def _with_utilisation(
    result: PlanResult, request: PlanRequest, book: Pricebook, utilisation: float
) -> PlanResult:
    constraints = request.constraints
    all_modes = constraints.model_copy(update={"allowed_modes": tuple(AcquisitionMode), "owned": ()})
    comparison = acquisition_options(book, all_modes)
    rows = tuple(
        buy_vs_rent(
            row.gpu,
            comparison,
            horizon_months=constraints.horizon_months,
            currency=constraints.currency,
            plan_utilisation=utilisation,
        )
        for row in result.break_even.buy_vs_rent
    )
    return replace(result, break_even=replace(result.break_even, buy_vs_rent=rows))


# --------------------------------------------------------------------------------------------
# Sweeps
# --------------------------------------------------------------------------------------------


def sweep(
    request: PlanRequest,
    book: Pricebook,
    axis: SweepAxis,
    values: Sequence[float],
    *,
    cancel: CancelToken | None = None,
    workload: str | None = None,
    time_limit_s_per_point: float | None = None,
) -> Iterator[SweepPoint | SweepFrontier]:
    """Solve one plan per value (≤ 2 at once), yield each as it completes with progress, then the
    Pareto frontier. Cancelling ``cancel`` stops the running solves and skips the rest
    (raises ``SolveCancelled``)."""
    _check_sweep(request, axis, values, workload)
    if not values:
        return
    book, applied = _apply_overrides(request, book)
    cancel = cancel if cancel is not None else CancelToken()
    per_point = time_limit_s_per_point if time_limit_s_per_point is not None else request.options.time_limit_s
    base_instance = _build_instance(request, book) if axis in _INSTANCE_AXES else None
    lock = threading.Lock()

    def solve_point(value: float) -> PlanResult:
        if cancel.cancelled:
            raise SolveCancelled("sweep cancelled")
        started = time.monotonic()
        point_request = sweep_request(request, axis, value, workload)
        if base_instance is not None:
            instance = _instance_at(base_instance, axis, value)
        else:
            with lock:  # the perf model's caches are shared; build one instance at a time
                instance = _build_instance(point_request, book)
        return _plan_instance(
            point_request,
            book,
            instance,
            time_limit_s=per_point,
            cancel=cancel,
            overrides_applied=applied,
            started=started,
            with_extras=False,
        )

    total = len(values)
    plans: dict[int, PlanResult] = {}
    executor = ThreadPoolExecutor(max_workers=MAX_SWEEP_THREADS, thread_name_prefix="sweep")
    try:
        futures: dict[Future[PlanResult], int] = {
            executor.submit(solve_point, v): i for i, v in enumerate(values)
        }
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            if cancel.cancelled:
                raise SolveCancelled("sweep cancelled")
            for future in sorted(done, key=lambda f: futures[f]):
                index = futures[future]
                plans[index] = future.result()
                yield SweepPoint(index, float(values[index]), plans[index], len(plans), total)
    except BaseException:
        cancel.cancel()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    yield frontier(axis, [(float(values[i]), plans[i]) for i in range(total)])


def _check_sweep(
    request: PlanRequest, axis: SweepAxis, values: Sequence[float], workload: str | None
) -> None:
    """Refuse a sweep that cannot mean anything, naming the field (before any solve starts)."""
    problems: list[FieldViolation] = []
    for i, value in enumerate(values):
        if not math.isfinite(value) or value < 0 or (value == 0 and axis is not SweepAxis.CAPEX_BUDGET):
            problems.append(
                FieldViolation(f"values[{i}]", f"{axis.value} must be a positive number, got {value}")
            )
    for i, value in enumerate(values):
        if any(v.field == f"values[{i}]" for v in problems):
            continue
        try:
            sweep_request(request, axis, value, workload)
        except ValidationError as error:
            for detail in error.errors():
                where = ".".join(str(part) for part in detail["loc"])
                problems.append(
                    FieldViolation(
                        f"values[{i}]", f"{axis.value}={value:g} makes {where} invalid: {detail['msg']}"
                    )
                )
    if workload is not None and workload not in {w.name for w in request.inference}:
        problems.append(FieldViolation("workload_name", f"no inference workload named {workload!r}"))
    if axis in _SLA_AXES and not request.inference:
        problems.append(FieldViolation("dimension", f"{axis.value} needs at least one inference workload"))
    if problems:
        raise InvalidRequest(problems)


def sweep_values(start: float, stop: float, points: int) -> tuple[float, ...]:
    """``points`` evenly spaced values from ``start`` to ``stop`` inclusive (a SweepRange)."""
    if points < 1:
        msg = "a sweep needs at least one point"
        raise ValueError(msg)
    if points == 1:
        return (float(start),)
    step = (stop - start) / (points - 1)
    return tuple(start + i * step for i in range(points))


_INSTANCE_AXES = (SweepAxis.CAPEX_BUDGET, SweepAxis.DEMAND_MULTIPLIER)
_SLA_AXES = (SweepAxis.TPOT_P95_MS, SweepAxis.TTFT_P95_MS, SweepAxis.MIN_PER_USER_TOK_S)
"""Axes that change only caps or demand: the base instance is reused (no performance re-run)."""


def _instance_at(instance: FleetInstance, axis: SweepAxis, value: float) -> FleetInstance:
    if axis is SweepAxis.CAPEX_BUDGET:
        return with_capex_budget(instance, value)
    return scale_demand(instance, value)


def sweep_request(
    request: PlanRequest, axis: SweepAxis, value: float, workload: str | None = None
) -> PlanRequest:
    """The request at one sweep point (the SLA axes change ``workload`` only, or every inference
    workload), validated like any request: a point beyond the request limits raises
    ``pydantic.ValidationError`` naming the field."""
    data = request.model_dump()
    if axis is SweepAxis.CAPEX_BUDGET:
        data["constraints"]["capex_budget"] = {
            "amount": repr(value),
            "currency": request.constraints.currency,
        }
    elif axis is SweepAxis.DEMAND_MULTIPLIER:
        for w in data["inference"]:
            if w["daily_tokens"] is not None:
                w["daily_tokens"] = _scaled_count(w["daily_tokens"], value)
            else:
                w["peak_request_rate_per_s"] *= value
        for t in data["training"]:
            if t["reference"] is not None:
                t["reference"]["gpu_hours_per_month"] *= value
            else:
                t["runs_per_month"] *= value
    else:
        for w in data["inference"]:
            if workload in (None, w["name"]):
                w["sla"][axis.value] = value
    return PlanRequest.model_validate(data)


def _scaled_count(count: int, factor: float) -> int | float:
    scaled = count * factor
    # Out-of-range values are left for validation to refuse with the field's own message.
    return max(1, round(scaled)) if math.isfinite(scaled) and scaled < 2**62 else scaled


_MINIMISE = {
    SweepAxis.CAPEX_BUDGET: True,
    SweepAxis.DEMAND_MULTIPLIER: False,
    SweepAxis.TPOT_P95_MS: True,
    SweepAxis.TTFT_P95_MS: True,
    SweepAxis.MIN_PER_USER_TOK_S: False,
}
"""Whether a smaller swept value is better (less capital, stricter latency) or a larger one (more
demand served, faster per-user speed)."""


def frontier(axis: SweepAxis, points: Sequence[tuple[float, PlanResult]]) -> SweepFrontier:
    """All points sorted by value, Pareto-optimal ones marked: no other point is at least as good
    on the swept quantity and strictly cheaper, or strictly better and no dearer."""
    minimise = _MINIMISE[axis]

    def better_or_equal(a: float, b: float) -> bool:
        return a <= b if minimise else a >= b

    rows = []
    for value, result in sorted(points, key=lambda p: p[0]):
        cost = result.horizon_tco
        rows.append((value, result, cost))
    marked = []
    for value, result, cost in rows:
        pareto = False
        if cost is not None:
            pareto = not any(
                other_cost is not None
                and better_or_equal(other_value, value)
                and other_cost.amount <= cost.amount
                and (other_value != value or other_cost.amount < cost.amount)
                for other_value, _, other_cost in rows
            )
        marked.append(
            FrontierPoint(
                value=value,
                status=result.status,
                horizon_tco=cost,
                # Without a plan, the summary says why (e.g. which cap is short, by how much).
                fleet_summary=describe_fleet(result.solution) if result.solution.has_plan else result.summary,
                pareto_optimal=pareto,
            )
        )
    return SweepFrontier(axis, tuple(marked))
