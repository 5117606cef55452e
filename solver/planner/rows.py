"""The plan's rows, computed once: one ``DeploymentLine`` per deployment group (a shared pool or a
workload's own replicas of one deployment) and one ``WorkloadLine`` per inference workload, each
with its part of every group it uses; and which workloads every GPU type of the fleet serves.

The proto, the CLI tables and the quotes copy these; none of them recomputes replicas or tok/s.
A workload's load on a group in one hour is its replica-equivalents there: its own replicas, or
its part of a shared pool (demand served ÷ capacity per replica, the optimizer's ``shared_load``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pricebook.schema import GpuId
from solver.domain import PlanRequest
from solver.optimizer.instance import Bucket, Candidate, FleetInstance
from solver.optimizer.results import Assignment, DeploymentUse, FleetSolution
from solver.planner.disagg_roles import with_roles
from solver.planner.results import (
    DeploymentLine,
    GroupShare,
    PlanFleetLine,
    WorkloadGroupUse,
    WorkloadLine,
)
from solver.units import HOURS_PER_DAY

LOAD_TOLERANCE = 1e-6
"""Replica-equivalents below this are solver noise, not load."""


@dataclass(frozen=True, slots=True)
class _Part:
    """One candidate's load on one group, per bucket."""

    workload: str
    candidate: Candidate
    serving: tuple[float, ...]
    """Replica-equivalents per bucket."""
    carried: tuple[float, ...]
    """Of which carrying demand (serving × the workload's demand ÷ capacity of that request size)."""


def hourly(buckets: Sequence[Bucket], per_bucket: Sequence[float]) -> tuple[float, ...]:
    """Per-bucket values spread over the 24 hours of the day."""
    hours = [0.0] * HOURS_PER_DAY
    for bucket in buckets:
        for hour in bucket.hours:
            hours[hour] = per_bucket[bucket.index] if bucket.index < len(per_bucket) else 0.0
    return tuple(hours)


def group_id(use: DeploymentUse) -> str:
    """The group a use's replicas belong to: its shared pool, or its candidate's own replicas."""
    return use.candidate.pool if use.pooled else use.candidate.id


def _parts(solution: FleetSolution, instance: FleetInstance) -> dict[str, list[_Part]]:
    """Every use of every assignment, by group, in the order they first appear."""
    loads = {w.name: w.loads for w in instance.inference}
    by_group: dict[str, list[_Part]] = {}
    nb = len(solution.buckets)
    for a in solution.assignments:
        shares = loads.get(a.workload, (1.0,))
        size_capacity = [
            [
                sum(u.serving(b) * u.candidate.capacity_req_s for u in a.uses if u.candidate.load == k)
                for b in range(nb)
            ]
            for k in range(len(shares))
        ]
        for u in a.uses:
            k = u.candidate.load if u.candidate.load < len(shares) else 0
            carried = tuple(
                u.serving(b) * min(1.0, a.demand_req_s[b] * shares[k] / size_capacity[k][b])
                if size_capacity[k][b] > 0
                else 0.0
                for b in range(nb)
            )
            serving = tuple(u.serving(b) for b in range(nb))
            by_group.setdefault(group_id(u), []).append(_Part(a.workload, u.candidate, serving, carried))
    return by_group


def _group_replicas(
    solution: FleetSolution, gid: str, parts: list[_Part]
) -> tuple[tuple[int, ...], int, bool]:
    """Replicas per bucket, spares, and whether the group is a shared pool."""
    pool = next((p for p in solution.pools if p.id == gid), None)
    if pool is not None:
        return pool.replicas, pool.spares, True
    nb = len(solution.buckets)
    replicas = tuple(math.ceil(sum(p.serving[b] for p in parts) - LOAD_TOLERANCE) for b in range(nb))
    return replicas, 0, False


def _peak_hour(replicas: Sequence[float], load: Sequence[float]) -> int:
    return max(range(HOURS_PER_DAY), key=lambda h: (replicas[h], load[h], -h))


def _replica_hours(parts: Sequence[_Part], buckets: Sequence[Bucket]) -> float:
    """Replica-equivalent hours a day of ``parts``."""
    return sum(
        p.serving[b.index] * b.hours_per_day for p in parts for b in buckets if b.index < len(p.serving)
    )


def _share(
    workload: str, parts: list[_Part], buckets: Sequence[Bucket], peak: int, total: float
) -> GroupShare:
    mine = [p for p in parts if p.workload == workload]
    by_hour = tuple(sum(values) for values in zip(*(hourly(buckets, p.serving) for p in mine), strict=True))
    tok_s = sum(hourly(buckets, p.serving)[peak] * p.candidate.max_output_tok_s for p in mine)
    weighted = _replica_hours(mine, buckets)
    return GroupShare(
        workload=workload,
        share=weighted / total if total > 0 else 1.0 / len({p.workload for p in parts}),
        replicas_by_hour=by_hour,
        output_tok_s=tok_s,
    )


def _line(solution: FleetSolution, gid: str, parts: list[_Part]) -> DeploymentLine:
    buckets = solution.buckets
    per_bucket, spares, shared = _group_replicas(solution, gid, parts)
    replicas = tuple(round(v) for v in hourly(buckets, per_bucket))
    carried = [sum(v) for v in zip(*(hourly(buckets, p.carried) for p in parts), strict=True)]
    peak = _peak_hour(replicas, carried)
    total = _replica_hours(parts, buckets)
    names = tuple(dict.fromkeys(p.workload for p in parts))
    shares = tuple(_share(w, parts, buckets, peak, total) for w in names)
    c = parts[0].candidate
    return DeploymentLine(
        id=gid,
        gpu=c.gpu,
        tp=c.tp,
        mig_slice=c.mig_slice,
        precision=c.precision,
        kv_precision=c.kv_precision,
        shared=shared,
        replicas_by_hour=replicas,
        spares=spares,
        peak_hour=peak,
        shares=shares,
        output_tok_s=sum(s.output_tok_s for s in shares),
        utilization=carried[peak] / replicas[peak] if replicas[peak] > 0 else 0.0,
        card_share=c.card_share,
    )


def deployment_lines(solution: FleetSolution, instance: FleetInstance) -> tuple[DeploymentLine, ...]:
    """One line per deployment group with replicas in some hour, in order of first use; co-located
    groups name the groups on the other side of their GPU type's shared cards."""
    groups = _parts(solution, instance)
    lines = [_line(solution, gid, parts) for gid, parts in groups.items()]
    lines = [dataclasses.replace(line, co_located_with=_partners(line, lines)) for line in lines]
    first = {gid: parts[0].candidate for gid, parts in groups.items()}
    return with_roles(lines, first, instance, solution, instance.currency)


def _partners(line: DeploymentLine, lines: Sequence[DeploymentLine]) -> tuple[str, ...]:
    """A guest's hosts, or a host's guests, on the same GPU type (the MIP pairs them by type)."""
    if line.card_share >= 1:
        return ()
    guest = line.gpus_per_replica == 0
    return tuple(
        other.id
        for other in lines
        if other.gpu == line.gpu and other.card_share < 1 and (other.gpus_per_replica == 0) != guest
    )


def _use(a: Assignment, line: DeploymentLine, uses: list[DeploymentUse], peak: int) -> WorkloadGroupUse:
    share = next(s for s in line.shares if s.workload == a.workload)
    candidates = [u.candidate for u in uses]
    return WorkloadGroupUse(
        group_id=line.id,
        gpu=line.gpu,
        tp=line.tp,
        mig_slice=line.mig_slice,
        precision=line.precision,
        shared=line.shared,
        replicas=sum(u.serving(peak) for u in uses),
        replicas_max=max(share.replicas_by_hour, default=0.0),
        share=share.share,
        output_tok_s=sum(u.serving(peak) * u.candidate.max_output_tok_s for u in uses),
        ttft_p95_ms=max(c.ttft_p95_ms for c in candidates),
        tpot_ms=max(c.tpot_ms for c in candidates),
        per_user_tok_s=min(c.per_user_tok_s for c in candidates),
        card_share=line.card_share,
        co_located_with=line.co_located_with,
        label=line.label,
    )


def _workload_line(
    a: Assignment, lines: dict[str, DeploymentLine], buckets: Sequence[Bucket]
) -> WorkloadLine:
    peak = a.peak_bucket
    grouped: dict[str, list[DeploymentUse]] = {}
    for u in a.uses:
        grouped.setdefault(group_id(u), []).append(u)
    uses = sorted(
        (_use(a, lines[gid], members, peak) for gid, members in grouped.items()),
        key=lambda x: (-x.replicas, -x.replicas_max),
    )
    at_peak = [x for x in uses if x.replicas > LOAD_TOLERANCE] or uses
    return WorkloadLine(
        workload=a.workload,
        peak_hour=min(buckets[peak].hours) if buckets and buckets[peak].hours else 0,
        demand_req_s=a.demand_req_s[peak],
        capacity_req_s=a.capacity_req_s[peak],
        utilization=a.utilization,
        uses=tuple(uses),
        replicas=sum(x.replicas for x in uses),
        output_tok_s=sum(x.output_tok_s for x in uses),
        ttft_p95_ms=max((x.ttft_p95_ms for x in at_peak), default=0.0),
        tpot_ms=max((x.tpot_ms for x in at_peak), default=0.0),
        per_user_tok_s=min((x.per_user_tok_s for x in at_peak), default=0.0),
    )


def workload_lines(solution: FleetSolution, lines: Sequence[DeploymentLine]) -> tuple[WorkloadLine, ...]:
    """One line per inference workload of the plan (no uses: not served by the fleet)."""
    by_id = {line.id: line for line in lines}
    return tuple(_workload_line(a, by_id, solution.buckets) for a in solution.assignments)


def gpus_by_hour(lines: Sequence[DeploymentLine], gpu: GpuId) -> tuple[float, ...]:
    """GPUs of one type the groups occupy in each hour (MIG slices as fractions of a GPU; both
    roles of a disaggregated unit)."""
    per_replica = [(line, n) for line in lines for g, n in _gpus_of(line) if g == gpu]
    return tuple(sum(line.replicas_by_hour[h] * n for line, n in per_replica) for h in range(HOURS_PER_DAY))


def _gpus_of(line: DeploymentLine) -> tuple[tuple[GpuId, float], ...]:
    """(GPU type, GPUs) one replica of ``line`` occupies (a disaggregated unit: each role's)."""
    roles = line.disaggregation
    if roles is None:
        return ((line.gpu, line.gpus_per_replica),)
    return tuple((r.gpu, float(r.gpus_per_unit)) for r in (roles.prefill, roles.decode))


def with_workloads(
    fleet: Sequence[PlanFleetLine], lines: Sequence[DeploymentLine], solution: FleetSolution
) -> tuple[PlanFleetLine, ...]:
    """``fleet`` with each line naming the workloads its GPU type serves."""
    served: dict[GpuId, list[str]] = {}
    for line in lines:
        for gpu, _ in _gpus_of(line):
            served.setdefault(gpu, []).extend(line.workloads)
    for t in solution.training:
        served.setdefault(t.gpu, []).append(t.workload)
    return tuple(dataclasses.replace(f, workloads=tuple(dict.fromkeys(served.get(f.gpu, ())))) for f in fleet)


def mapping_problems(
    fleet: Sequence[PlanFleetLine],
    lines: Sequence[DeploymentLine],
    solution: FleetSolution,
    request: PlanRequest | None = None,
) -> tuple[str, ...]:
    """What breaks "every GPU of the fleet maps to the workloads it serves": a GPU type bought or
    rented that serves no workload (owned GPUs and ``count_bounds.min_count`` may stand idle), or
    groups occupying more GPUs of a type in some hour than the fleet has then. Empty when sound."""
    problems: list[str] = []
    minimum = {b.gpu: b.min_count for b in request.constraints.count_bounds} if request is not None else {}
    for gpu in dict.fromkeys(f.gpu for f in fleet):
        mine = [f for f in fleet if f.gpu == gpu and f.gpus > 0]
        if not mine or any(f.workloads for f in mine):
            continue
        if all(f.owned for f in mine) or minimum.get(gpu, 0) > 0:
            continue
        problems.append(f"{gpu} ×{sum(f.gpus for f in mine)} in the fleet serves no workload")
    for gpu in dict.fromkeys(g for line in lines for g, _ in _gpus_of(line)):
        held = _fleet_gpus_by_hour(fleet, gpu)
        used = gpus_by_hour(lines, gpu)
        over = [h for h in range(HOURS_PER_DAY) if math.ceil(used[h] - LOAD_TOLERANCE) > held[h]]
        if over:
            h = over[0]
            problems.append(
                f"{gpu}: deployment groups occupy {used[h]:g} GPUs at hour {h}, the fleet has {held[h]}"
            )
    return tuple(problems)


def _fleet_gpus_by_hour(fleet: Sequence[PlanFleetLine], gpu: GpuId) -> tuple[int, ...]:
    hours = [0] * HOURS_PER_DAY
    for f in fleet:
        if f.gpu != gpu:
            continue
        for h in range(HOURS_PER_DAY):
            hours[h] += f.on_demand_gpus_by_hour[h] if f.on_demand_gpus_by_hour else f.gpus
    return tuple(hours)
