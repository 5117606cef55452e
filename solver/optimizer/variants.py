"""Variants of a fleet instance and plans in words, shared by the explanations (optimizer) and the
what-ifs (``solver.analysis.whatif``): one GPU type alone, and a plan's fleet as a phrase."""

from __future__ import annotations

from dataclasses import replace

from pricebook.schema import GpuId
from solver.optimizer.instance import FleetInstance, InferenceDemand, TrainingDemand
from solver.optimizer.results import ChosenOption, FleetSolution


def restrict_to_gpu(instance: FleetInstance, gpu: GpuId) -> tuple[FleetInstance | None, str]:
    """The instance where every new acquisition is of ``gpu``, or (None, why it cannot work).

    GPUs already owned stay (they are there whatever is bought, and the plan must keep them), so
    a baseline is "what is owned + the best fleet of one type", comparable with the plan."""
    owned_gpus = {o.gpu for o in instance.options if o.owned}
    kept_gpus = owned_gpus | {gpu}
    options = tuple(o for o in instance.options if o.gpu == gpu or o.owned)
    if not any(o.gpu == gpu and not o.owned for o in options) and gpu not in owned_gpus:
        return None, f"no offer to acquire {gpu} in the allowed modes"
    candidates = tuple(c for c in instance.candidates if c.gpu in kept_gpus)
    for demand in instance.inference:
        if not any(c.workload == demand.name for c in candidates):
            reasons = [
                r.reason for r in instance.rejections_of(demand.name) if r.gpu == gpu and not r.dominated_by
            ]
            why = f": {reasons[0]}" if reasons else ""
            return None, f"{demand.name} cannot be served on {gpu} at its SLA{why}"
    training: list[TrainingDemand] = []
    for t in instance.training:
        choices = tuple(ch for ch in t.choices if ch.gpu in kept_gpus)
        if not choices:
            reasons = [r.reason for r in t.rejections if r.gpu == gpu]
            why = f": {reasons[0]}" if reasons else ""
            return None, f"training {t.name} cannot run on {gpu}{why}"
        training.append(replace(t, choices=choices))
    return (
        replace(
            instance,
            options=options,
            candidates=candidates,
            training=tuple(training),
            count_limits=tuple(c for c in instance.count_limits if c.gpu in kept_gpus),
        ),
        "",
    )


def in_use(option: ChosenOption) -> bool:
    """Held or rented GPUs, or on-demand GPU-hours rented for training runs."""
    return option.peak_gpus > 0 or option.busy_gpu_hours_per_month > 0


def describe_fleet(solution: FleetSolution) -> str:
    """E.g. ``h200-sxm ×8 buy + rtx-pro-6000 ×16 buy``; or why there is no plan."""
    if not solution.has_plan:
        return f"no plan ({solution.status.value})"
    parts = []
    used = [o for o in solution.options if in_use(o)]
    shared = {(o.gpu, o.mode) for o in used if sum(1 for p in used if (p.gpu, p.mode) == (o.gpu, o.mode)) > 1}
    for o in sorted(used, key=lambda o: (o.gpu, o.mode.value, o.option_id)):
        owned = " owned" if o.owned else ""
        # A leased server is a BUY option without capex (``costs.lease_option``): say so.
        mode = "lease" if o.option_id.split("/")[1:2] == ["lease"] else o.mode.value
        # Two options of one GPU and mode (e.g. 4- and 8-slot servers): name the option.
        which = f" ({o.option_id.rsplit('/', 1)[-1]})" if (o.gpu, o.mode) in shared else ""
        if o.peak_gpus > 0:
            parts.append(f"{o.gpu} ×{o.peak_gpus} {mode}{owned}{which}")
        else:
            parts.append(f"{o.gpu} {o.mode.value} {o.busy_gpu_hours_per_month:,.0f} GPU-h/month")
    return " + ".join(parts) if parts else "no GPUs"


def scale_workload_demand(instance: FleetInstance, workload: str, factor: float) -> FleetInstance:
    """One inference workload's request rates × ``factor``; the others as they are."""
    return replace(
        instance,
        inference=tuple(scale_rates(d, factor) if d.name == workload else d for d in instance.inference),
    )


def scale_rates(demand: InferenceDemand, factor: float) -> InferenceDemand:
    """Every request-rate series of a demand × factor (bucket rates, and the 24 hourly rates the
    evaluator checks when the optimizer clusters hours into buckets)."""
    return replace(
        demand,
        rate_req_s=tuple(r * factor for r in demand.rate_req_s),
        hourly_rate_req_s=tuple(r * factor for r in demand.hourly_rate_req_s),
    )
