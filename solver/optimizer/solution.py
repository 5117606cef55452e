"""Turn raw MIP values into a ``FleetSolution`` (counts, assignments, cost split, cap usage)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass

from solver.optimizer.caps import Cap
from solver.optimizer.instance import (
    FleetInstance,
    billed_training_hours,
    is_on_site,
    is_rental_on_demand,
    rented_for_run,
    replica_pools,
)
from solver.optimizer.model import MipResult, MipValues, usable_candidates
from solver.optimizer.results import (
    Assignment,
    ChosenOption,
    CostSplit,
    DeploymentUse,
    FleetSolution,
    PoolUse,
    SolverStats,
    SolveStatus,
    TrainingAllocation,
)
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH


def _training_hours(instance: FleetInstance, workload: str, gpu: str) -> tuple[float, int, float]:
    for t in instance.training:
        if t.name == workload:
            for ch in t.choices:
                if ch.gpu == gpu:
                    return ch.gpu_hours_per_month, ch.min_gpus, ch.hours_per_run
    return 0.0, 0, 0.0


def build_solution(instance: FleetInstance, mip: MipResult) -> FleetSolution:
    """Counts, per-workload assignments and the cost split from ``mip`` (must have values)."""
    values = mip.values
    if values is None:
        return empty_solution(instance, mip.stats)
    months = instance.horizon_months
    totals = _Totals(capex=instance.extra_capex, fixed=instance.extra_monthly)
    chosen = _chosen_options(instance, values, totals)
    return FleetSolution(
        status=mip.stats.status,
        stats=mip.stats,
        currency=instance.currency,
        horizon_months=months,
        buckets=instance.buckets,
        options=tuple(chosen),
        assignments=_assignments(instance, values),
        pools=_pools(instance, values),
        static_replicas=_static(instance, values),
        training=_training_allocations(instance, values),
        cost=CostSplit(
            capex=totals.capex,
            residual=totals.residual,
            fixed_monthly=totals.fixed,
            busy_monthly=totals.busy,
            horizon_months=months,
            opex_weight=instance.opex_weight if instance.discount_rate else None,
            residual_weight=instance.residual_weight,
            lease=totals.lease,
            lease_objective=totals.lease_objective,
        ),
        usage={
            Cap.CAPEX_BUDGET.usage_key: totals.capex,
            Cap.MONTHLY_OPEX.usage_key: totals.fixed + totals.busy + totals.lease_monthly,
            Cap.POWER_KW.usage_key: totals.power,
            Cap.RACK_UNITS.usage_key: totals.racks,
        },
    )


@dataclass(slots=True)
class _Totals:
    """The plan's costs and site use, summed over its options."""

    capex: float = 0.0
    residual: float = 0.0
    fixed: float = 0.0
    busy: float = 0.0
    power: float = 0.0
    racks: float = 0.0
    lease: float = 0.0
    """Leases' payments over the horizon (undiscounted), net of nothing: the market value of leased
    hardware is in ``residual``."""
    lease_objective: float = 0.0
    """The same payments as the objective weighs them (``FleetInstance.discount_rate``)."""
    lease_monthly: float = 0.0


def option_costs(
    option: AcquisitionOption, gpus: int, servers: int, busy_gpu_hours_per_month: float
) -> tuple[float, float, float, float]:
    """(capex, residual value, fixed per month, busy per month) of some GPUs of one option."""
    capex = option.capex(gpus, servers)
    residual = option.residual_value(gpus, servers)
    fixed = option.fixed_monthly_per_gpu * gpus + option.fixed_monthly_per_server * servers
    busy = option.busy_hourly_per_gpu * busy_gpu_hours_per_month
    return capex, residual, fixed, busy


def horizon_cost(capex: float, residual: float, fixed: float, busy: float, months: int) -> float:
    """An option's TCO over the horizon from its parts (``option_costs``)."""
    return capex - residual + (fixed + busy) * months


def plan_cost(instance: FleetInstance, solution: FleetSolution) -> float:
    """What ``solution``'s GPUs and their use cost at ``instance``'s prices (the same counts and
    busy hours priced anew: e.g. a plan at a changed GPU price), as the objective weighs cost (the
    TCO, or its NPV under objective npv)."""
    # At rate 0 the weights are H and 1.0: exactly the nominal horizon cost.
    months, credit = instance.opex_weight, instance.residual_weight
    total = instance.extra_capex + instance.extra_monthly * months
    for c in solution.options:
        capex, residual, fixed, busy = option_costs(
            instance.option(c.option_id), c.gpus, c.servers, c.busy_gpu_hours_per_month
        )
        total += capex - residual * credit + (fixed + busy) * months
        total += instance.option(c.option_id).lease_cost(c.servers, instance.discount_rate)
    return total


def _chosen_options(instance: FleetInstance, values: MipValues, totals: _Totals) -> list[ChosenOption]:
    """Every option the plan uses, with its horizon cost; adds their costs to ``totals``."""
    hours = [b.hours_per_day for b in instance.buckets]
    months = instance.horizon_months
    busy_hours_train: dict[str, float] = defaultdict(float)
    rented_for_training: dict[str, int] = defaultdict(int)
    for (t_name, o_id), share in values.train_share.items():
        if share <= 1e-9:
            continue
        option = instance.option(o_id)
        gpu_hours, run_gpus, _ = _training_hours(instance, t_name, option.gpu)
        busy_hours_train[o_id] += share * billed_training_hours(option, gpu_hours, run_gpus)
        if is_rental_on_demand(option):
            rented_for_training[o_id] += rented_for_run(option, run_gpus)
    chosen: list[ChosenOption] = []
    for o in instance.options:
        gpus = values.n.get(o.id, 0)
        servers = values.s.get(o.id, 0)
        on_demand = values.d.get(o.id, ())
        in_use = on_demand if is_rental_on_demand(o) else values.u[o.id]
        busy_hours = sum(DAYS_PER_MONTH * hours[b] * in_use[b] for b in range(len(hours)))
        busy_hours += busy_hours_train.get(o.id, 0.0)
        if gpus == 0 and servers == 0 and not any(on_demand) and busy_hours <= 1e-9:
            continue
        o_capex, o_residual, o_fixed, o_busy = option_costs(o, gpus, servers, busy_hours)
        o_lease = o.lease_total(servers)
        totals.lease += o_lease
        totals.lease_objective += o.lease_cost(servers, instance.discount_rate)
        totals.lease_monthly += o.lease_monthly_per_server * servers
        totals.capex += o_capex
        totals.residual += o_residual
        totals.fixed += o_fixed
        totals.busy += o_busy
        if is_on_site(o):
            totals.power += o.power_kw_per_gpu * gpus + o.power_kw_per_server * servers
            totals.racks += o.rack_units_per_server * servers
        chosen.append(
            ChosenOption(
                option_id=o.id,
                gpu=o.gpu,
                mode=o.mode,
                owned=o.owned,
                gpus=gpus,
                servers=servers,
                server_id=o.server_id if is_on_site(o) else None,
                offer_id=None if o.owned else o.offer_id,
                on_demand_gpus=tuple(on_demand),
                training_gpus=rented_for_training.get(o.id, 0),
                busy_gpu_hours_per_month=busy_hours,
                horizon_cost=horizon_cost(o_capex, o_residual, o_fixed, o_busy, months) + o_lease,
            )
        )
    return chosen


def _training_allocations(instance: FleetInstance, values: MipValues) -> tuple[TrainingAllocation, ...]:
    training = []
    for t in instance.training:
        train_gpu = values.train_gpu.get(t.name)
        if train_gpu is None:
            continue
        gpu_hours, min_gpus, per_run = _training_hours(instance, t.name, train_gpu)
        od_share = sum(
            share
            for (t_name, o_id), share in values.train_share.items()
            if t_name == t.name and is_rental_on_demand(instance.option(o_id))
        )
        training.append(
            TrainingAllocation(
                workload=t.name,
                gpu=train_gpu,
                min_gpus=min_gpus,
                gpu_hours_per_month=gpu_hours,
                on_demand_gpu_hours_per_month=gpu_hours * od_share,
                hours_per_run=per_run,
            )
        )
    return tuple(training)


def _assignments(instance: FleetInstance, values: MipValues) -> tuple[Assignment, ...]:
    by_w: dict[str, list[DeploymentUse]] = defaultdict(list)
    nb = len(instance.buckets)
    for c in usable_candidates(instance):
        replicas = values.r.get(c.id)
        if replicas and any(replicas):
            by_w[c.workload].append(DeploymentUse(candidate=c, replicas=replicas))
        load = _clean(values.shared_load.get(c.id, ()))
        if any(load):
            by_w[c.workload].append(DeploymentUse(candidate=c, replicas=(0,) * nb, shared_load=load))
    out = []
    for w in instance.inference:
        uses = tuple(by_w.get(w.name, ()))
        # A length mix's capacity in requests of the mix: each size's share needs its own.
        capacity = tuple(_mix_capacity(w.loads, uses, b) for b in range(nb))
        out.append(
            Assignment(
                workload=w.name,
                uses=uses,
                demand_req_s=w.rate_req_s,
                capacity_req_s=capacity,
                redundancy=w.redundancy,
            )
        )
    return tuple(out)


def _mix_capacity(shares: tuple[float, ...], uses: tuple[DeploymentUse, ...], b: int) -> float:
    """Requests per second of the workload's mix the uses serve in bucket ``b``: the largest rate
    whose every size's share (``shares``) is covered."""
    per_size = [
        sum(u.candidate.capacity_req_s * u.serving(b) for u in uses if u.candidate.load == k)
        for k in range(len(shares))
    ]
    return min((cap / share for cap, share in zip(per_size, shares, strict=True) if share > 0), default=0.0)


SOLVER_ZERO = 1e-6
"""Replica-equivalents below this are the LP solver's tolerance, not load."""


def _clean(load: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(v if v > SOLVER_ZERO else 0.0 for v in load)


def _pools(instance: FleetInstance, values: MipValues) -> tuple[PoolUse, ...]:
    out = []
    redundancy = {w.name: w.redundancy for w in instance.inference}
    for pool in replica_pools(usable_candidates(instance), instance.inference):
        replicas = values.pools.get(pool.id)
        if not pool.shared or not replicas or not any(replicas):
            continue
        served = [c for c in pool.members if any(_clean(values.shared_load.get(c.id, ())))]
        members = tuple(dict.fromkeys(c.workload for c in served))
        spares = max((redundancy[c.workload] for c in served), default=0)
        out.append(PoolUse(pool.id, pool.deployment, replicas, spares, members))
    return tuple(out)


def _static(instance: FleetInstance, values: MipValues) -> dict[str, int]:
    """Static replicas by the key the solution shows their replicas under: a shared pool's id, or
    the candidate whose own replicas they are."""
    out = {}
    for pool in replica_pools(usable_candidates(instance), instance.inference):
        count = values.static.get(pool.id, 0)
        if count <= 0:
            continue
        if pool.id in values.pools:
            out[pool.id] = count
        else:
            out[next((c.id for c in pool.members if c.id in values.r), pool.deployment.id)] = count
    return out


def with_tco_objective(solution: FleetSolution) -> FleetSolution:
    """``solution`` with its statistics in the plan's own terms: the objective is the returned
    plan's TCO, and the bound moves by the same amount (so the gap stays the solver's).

    Why they differ: the MIP minimises TCO + ``TIE_BREAK_PER_GPU`` cost units per GPU, and the
    tie-break stage may trade up to ``TIE_BREAK_TCO_TOLERANCE`` of TCO for fewer GPUs — about
    1e-7 of the total (111 KRW on the 246 M KRW demo plan), but a visible mismatch between the
    reported objective and the plan's cost. Only for TCO-minimising solves (``api.solve``)."""
    stats = solution.stats
    if solution.cost is None or stats.objective is None:
        return solution
    tco = solution.cost.objective_total
    shift = stats.objective - tco
    bound = None if stats.best_bound is None else min(stats.best_bound - shift, tco)
    gap = stats.gap
    if gap is not None and bound is not None and stats.status is not SolveStatus.OPTIMAL:
        gap = abs(tco - bound) / abs(tco) if tco else 0.0  # (objective − bound) / objective, as reported
    return dataclasses.replace(
        solution, stats=dataclasses.replace(stats, objective=tco, best_bound=bound, gap=gap)
    )


def empty_solution(instance: FleetInstance, stats: SolverStats) -> FleetSolution:
    return FleetSolution(
        status=stats.status,
        stats=stats,
        currency=instance.currency,
        horizon_months=instance.horizon_months,
        buckets=instance.buckets,
    )
