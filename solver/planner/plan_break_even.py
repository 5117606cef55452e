"""The break-even section of a plan (``PlanResult.break_even``): buy vs rent for each GPU type in
the plan, self-host vs API for each inference workload, priced on the plan's own fleet.

The AnalyzeBreakEven RPC (``solver.planner.break_even.analyze_break_even``) answers with this same
section, for a GPU type, a given fleet or the optimal plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from pricebook.schema import GpuId, Pricebook
from solver.analysis.breakeven import (
    ApiBreakEven,
    BuyVsRent,
    api_break_even,
    buy_vs_rent,
    gpu_day_cost,
    resolve_params,
)
from solver.analysis.tco import FleetLine, UnitCost
from solver.domain import AcquisitionMode, Constraints, InferenceWorkload, PlanRequest
from solver.optimizer.instance import FleetInstance
from solver.optimizer.results import FleetSolution
from solver.planner.results import BreakEvenResult
from solver.pricing.costs import acquisition_options
from solver.pricing.options import AcquisitionOption
from solver.units import HOURS_PER_MONTH, SECONDS_PER_DAY


def plan_break_even(
    request: PlanRequest,
    book: Pricebook,
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    lines: Sequence[FleetLine],
    costs: Sequence[UnitCost],
    utilization_override: float | None = None,
) -> BreakEvenResult:
    """Buy vs rent for each GPU type in the plan (or allowed, without a plan), self-host vs API
    for each inference workload."""
    comparison = comparison_options(request.constraints, book)
    gpus = sorted({line.option.gpu for line in lines}) or sorted(instance.gpu_types())

    def utilization_of(gpu: GpuId) -> float | None:
        return utilization_override if utilization_override is not None else plan_utilization(lines, gpu)

    rent_rows = buy_vs_rent_rows(gpus, comparison, request.constraints, utilization_of, plan_packings(lines))
    by_workload = {c.workload: c for c in costs}
    api_rows = tuple(
        _api_row(
            w,
            by_workload.get(w.name),
            solution=solution,
            instance=instance,
            comparison=comparison,
            constraints=request.constraints,
            book=book,
        )
        for w in request.inference
    )
    notes = () if request.inference else ("no inference workloads: no API comparison",)
    return BreakEvenResult(rent_rows, api_rows, notes)


def comparison_options(constraints: Constraints, book: Pricebook) -> list[AcquisitionOption]:
    """Every acquisition mode of the request's GPU types, owned GPUs left out: what buying is
    compared with, whatever modes the plan itself may use."""
    all_modes = constraints.model_copy(update={"allowed_modes": tuple(AcquisitionMode), "owned": ()})
    return acquisition_options(book, all_modes)


def buy_vs_rent_rows(
    gpus: Iterable[GpuId],
    comparison: Sequence[AcquisitionOption],
    constraints: Constraints,
    utilization_of: Callable[[GpuId], float | None],
    packings: Mapping[GpuId, tuple[str, float]] | None = None,
) -> tuple[BuyVsRent, ...]:
    """One buy-vs-rent row per GPU type, at the utilization ``utilization_of`` gives it and the
    plan's packing (``plan_packings``) where the plan buys that GPU."""
    return tuple(
        buy_vs_rent(
            gpu,
            comparison,
            horizon_months=constraints.horizon_months,
            currency=constraints.currency,
            plan_utilization=utilization_of(gpu),
            plan_packing=(packings or {}).get(gpu),
            discount_rate=constraints.discount_rate_annual or 0.0,
        )
        for gpu in gpus
    )


def plan_packings(lines: Sequence[FleetLine]) -> dict[GpuId, tuple[str, float]]:
    """Per GPU type the plan buys: (its largest BUY line's option id, GPUs per server on that line)."""
    packings: dict[GpuId, tuple[str, float, int]] = {}
    for line in lines:
        opt = line.option
        if opt.mode is not AcquisitionMode.BUY or opt.owned or line.gpus <= 0:
            continue
        per_server = line.gpus / line.servers if line.servers > 0 else float(opt.gpus_per_server)
        if opt.gpu not in packings or line.gpus > packings[opt.gpu][2]:
            packings[opt.gpu] = (opt.id, per_server, line.gpus)
    return {gpu: (option_id, k) for gpu, (option_id, k, _) in packings.items()}


def _api_row(
    workload: InferenceWorkload,
    cost: UnitCost | None,
    *,
    solution: FleetSolution,
    instance: FleetInstance,
    comparison: Sequence[AcquisitionOption],
    constraints: Constraints,
    book: Pricebook,
) -> ApiBreakEven:
    model_id, arch = resolve_params(book, workload)
    own_per_token = None
    if cost is not None and cost.total_tokens_per_month > 0:
        own_per_token = float(cost.monthly_cost.amount) / cost.total_tokens_per_month
    rate = constraints.discount_rate_annual or 0.0
    replica_cost, replica_tokens = _replica_day(solution, instance, workload, comparison, rate)
    return api_break_even(
        workload,
        model_id=model_id,
        arch=arch,
        self_hosted_per_token=own_per_token,
        replica_day_cost=replica_cost,
        replica_day_tokens=replica_tokens,
        book=book,
        constraints=constraints,
    )


def plan_utilization(lines: Sequence[FleetLine], gpu: GpuId) -> float | None:
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


def _replica_day(
    solution: FleetSolution,
    instance: FleetInstance,
    workload: InferenceWorkload,
    comparison: Sequence[AcquisitionOption],
    rate: float,
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
    months = instance.horizon_months
    option = min(pool, key=lambda o: gpu_day_cost(o, months, discount_rate=rate))
    replica_cost = gpu_day_cost(option, months, discount_rate=rate) * candidate.gpu_equivalents
    full_day_tokens = candidate.capacity_req_s * workload.tokens_per_request * SECONDS_PER_DAY
    if option.mode is AcquisitionMode.ON_DEMAND:
        # Rented by the hour to follow demand: no idle hours to pay for.
        return replica_cost, full_day_tokens
    # Held all day but sized for the peak: it serves the average share of its peak capacity.
    rates = workload.hourly_request_rates()
    peak_to_average = max(rates) / (sum(rates) / len(rates)) if sum(rates) > 0 else 1.0
    return replica_cost, full_day_tokens / peak_to_average
