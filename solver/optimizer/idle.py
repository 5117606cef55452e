"""Hardware serving nothing, removed from a plan before it is returned.

A plan found within a time limit (a pool-timing round that hit its share, a baseline stopped
early) may hold GPUs, servers or rental instances that no deployment, training run or co-located
guest uses. ``without_idle_hardware`` keeps the plan's deployments exactly — every candidate's own
replicas and every shared pool's replicas in every bucket, held fixed in the MIP
(``Relaxation.fixed_replicas``) — and re-solves only what they run on: GPU counts, servers, rental
instances, training's placement, and with them capex, fabric, power, racks and monthly costs. A
shared pool's members keep their loads on it too: the pool was timed with that mix.
Everything else of the request still binds (owned inventory, ``count_bounds``, pinned offers,
caps, static deployments, TP domains, shared cards), so hardware a constraint needs stays.

The trimmed plan replaces the plan only when it is cheaper and passes the independent check
(``evaluate.check_solution``). Its statistics are the plan's, restated at the lower objective
against the same proven bound (a bound of every plan of the request): the gap only shrinks.

A cheap test (``has_idle_hardware``) skips the re-solve when every held or rented GPU is busy in
some hour and no server is empty.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import defaultdict

import structlog

from pricebook.schema import GpuId
from solver.optimizer.cancel import CancelToken
from solver.optimizer.driver import solve_one
from solver.optimizer.evaluate import CapacityOf, check_solution
from solver.optimizer.instance import FleetInstance, replica_pools
from solver.optimizer.model import Relaxation, usable_candidates
from solver.optimizer.results import FleetSolution
from solver.optimizer.solution import build_solution, with_tco_objective

log = structlog.get_logger(__name__)

MIN_TRIM_S = 1.0
"""Seconds the re-solve gets at least, past the caller's limit if need be (its replicas are fixed:
0.05 s of SCIP on repro 10's bid at load 5; a loaded box stretches that many times)."""
MIN_SAVING = 1e-9
"""Relative saving below which the trimmed plan is the same plan (solver noise)."""
GPU_SLACK = 1 - 1e-6
"""A GPU is idle in a bucket when the replicas leave at least this much of one free."""


def has_idle_hardware(instance: FleetInstance, solution: FleetSolution) -> bool:
    """Some GPU type has a held GPU free in every bucket, a rental instance's worth of on-demand
    GPUs free in a bucket, or an option has an empty server."""
    if not solution.has_plan:
        return False
    nb = len(solution.buckets)
    occupied = _occupied(solution, nb)
    held: dict[GpuId, int] = defaultdict(int)
    rented: dict[GpuId, list[int]] = defaultdict(lambda: [0] * nb)
    for o in solution.options:
        per_server = max(1, instance.option(o.option_id).gpus_per_server)
        if o.servers > math.ceil(o.gpus / per_server):
            return True
        held[o.gpu] += o.gpus
        for b, count in enumerate(o.on_demand_gpus):
            rented[o.gpu][b] += count
    free = {
        gpu: [held[gpu] + rented[gpu][b] - occupied[gpu][b] for b in range(nb)]
        for gpu in set(held) | set(rented)
    }
    if any(held[gpu] > 0 and min(f, default=0.0) >= GPU_SLACK for gpu, f in free.items()):
        return True
    for o in solution.options:
        unit = max(1, instance.option(o.option_id).rental_instance_gpus)
        if any(count > 0 and free[o.gpu][b] >= unit * GPU_SLACK for b, count in enumerate(o.on_demand_gpus)):
            return True
    return False


def _occupied(solution: FleetSolution, nb: int) -> dict[GpuId, list[float]]:
    """GPUs of each type the plan's replicas occupy in each bucket (constraint 2's left side)."""
    occupied: dict[GpuId, list[float]] = defaultdict(lambda: [0.0] * nb)
    for a in solution.assignments:
        for use in a.uses:
            if use.pooled:
                continue
            for b, replicas in enumerate(use.replicas):
                occupied[use.candidate.gpu][b] += replicas * use.candidate.gpus_per_replica
    for pool in solution.pools:
        for b, replicas in enumerate(pool.replicas):
            occupied[pool.deployment.gpu][b] += replicas * pool.deployment.gpus_per_replica
    return occupied


Replicas = tuple[tuple[str, tuple[float, ...]], ...]


def planned_replicas(instance: FleetInstance, solution: FleetSolution) -> Replicas:
    """Every replica decision of ``instance``'s model at ``solution``'s value, 0 where the plan has
    none: each candidate's own replicas and each shared pool's (by pool id), and each pool
    member's load on it (replica-equivalents: the mix every pool was timed with)."""
    nb = len(instance.buckets)
    none = (0,) * nb
    own = {u.candidate.id: u.replicas for a in solution.assignments for u in a.uses if not u.pooled}
    load = {u.candidate.id: u.shared_load for a in solution.assignments for u in a.uses if u.pooled}
    pooled = {p.id: p.replicas for p in solution.pools}
    fixed: list[tuple[str, tuple[float, ...]]] = []
    for pool in replica_pools(usable_candidates(instance), instance.inference):
        if pool.shared:
            fixed.append((pool.id, pooled.get(pool.id, none)))
            fixed.extend((c.id, load.get(c.id, none)) for c in pool.members)
        else:
            c = pool.deployment
            fixed.append((c.id, own.get(c.id, none)))
    return tuple(fixed)


def without_idle_hardware(
    instance: FleetInstance,
    solution: FleetSolution,
    *,
    time_limit_s: float,
    backend: str,
    capacity_of: CapacityOf | None,
    cancel: CancelToken | None = None,
) -> FleetSolution:
    """``solution`` with the hardware its deployments leave idle removed (module docstring), or
    ``solution`` itself when nothing is idle, the re-solve finds nothing cheaper in
    ``time_limit_s`` (at least ``MIN_TRIM_S``), or its plan fails the independent check."""
    if solution.cost is None or not has_idle_hardware(instance, solution):
        return solution
    started = time.perf_counter()
    mip = solve_one(
        instance,
        time_limit_s=max(MIN_TRIM_S, time_limit_s),
        cancel=cancel,
        backend=backend,
        relax=Relaxation(fixed_replicas=planned_replicas(instance, solution)),
        lp_guided=False,
        objective_cutoff=solution.cost.objective_total,
    )
    trimmed = with_tco_objective(build_solution(instance, mip))
    before = solution.cost.objective_total
    if not trimmed.has_plan or trimmed.cost is None:
        return solution
    after = trimmed.cost.objective_total
    if after >= before - MIN_SAVING * abs(before) or check_solution(instance, trimmed, capacity_of):
        return solution
    stats = solution.stats.restated(after, solution.stats.best_bound)
    stats = dataclasses.replace(stats, seconds=stats.seconds + (time.perf_counter() - started))
    log.info("idle_hardware_removed", before=round(before, 2), after=round(after, 2))
    return dataclasses.replace(trimmed, status=stats.status, stats=stats)
