"""Which loads share replicas, and how each is sized: SLA, target utilization, quantile.

A *load* is one request size of one inference workload (a workload without ``length_mix`` has
one). Every load gets candidates of two families:

- ``own:<workload>`` — the workload's own replicas, at its own SLA and target utilization. Its
  sizes share them (one pool per deployment); a workload of one size has one candidate per pool,
  which is today's dedicated replica.
- ``shared:<model>`` — for ``isolation: shared`` workloads (the default) running the same model
  (catalogue id or identical inline spec) with the same engine and KV precision, when there are
  at least two: one pool per deployment for all of them, every member sized at the group's
  *strictest* SLA (smallest TTFT and TPOT targets, highest per-user speed) and its *lowest* target
  utilization. Every member keeps its own family too, so pooling never makes a plan dearer (and
  ``solver.optimizer.driver`` keeps the plan without shared pools when a time limit fires first).

The sharing rule (model constraint 13): a replica of the pool carries loads x_l (req/s) with
Σ_l x_l / cap_l ≤ 1 (Mélange's linear rule), cap_l = load l's single-stream capacity at the pool's
SLA × the pool's target utilization × the capacity-quantile factor; the plan's pools are then
checked by the mixed batch's own timing and derated where it misses
(``solver.optimizer.pool_timing``, the one place the planner and the evaluator share).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from solver.domain import CapacityQuantile, InferenceWorkload, Isolation, PlanRequest, Sla
from solver.optimizer.instance import card_fraction
from solver.perf import Deployment

SHARED = "shared:"
MAX_SHARING_WORKLOADS = 12
"""Workloads share replicas across workloads only in requests of at most this many inference
workloads (sizes of one workload's mix always pool). Measured (load ~8 on 2 cores): the 20- and
50-workload benchmark portfolios with sharing had 2-6× the candidates, built in 3.3 s and 29 s
instead of 0.3 s and ~2 s, and the 20-workload model found no plan in 6 s; without it they are
what they were. A known gap (issue 20's note)."""
OWN = "own:"


@dataclass(frozen=True, slots=True)
class Sizing:
    """How one family of a workload's candidates is sized."""

    family: str
    """``own:<workload>`` or ``shared:<model>`` (see the module docstring)."""
    sla: Sla
    utilization: float
    quantile: CapacityQuantile

    @property
    def shared(self) -> bool:
        return self.family.startswith(SHARED)


def strictest_sla(slas: Iterable[Sla]) -> Sla:
    """The SLA every one of ``slas`` is at least as loose as (component by component)."""
    slas = tuple(slas)
    ttft = [s.ttft_p95_ms for s in slas if s.ttft_p95_ms is not None]
    tpot = [s.tpot_p95_ms for s in slas if s.tpot_p95_ms is not None]
    speed = [s.min_per_user_tok_s for s in slas if s.min_per_user_tok_s is not None]
    return Sla(
        ttft_p95_ms=min(ttft) if ttft else None,
        tpot_p95_ms=min(tpot) if tpot else None,
        min_per_user_tok_s=max(speed) if speed else None,
    )


def _sharing_key(w: InferenceWorkload) -> tuple[object, ...]:
    """Workloads with equal keys may share one model server."""
    return (w.model, w.engine, w.kv_precision)


def _group_label(members: list[InferenceWorkload]) -> str:
    first = members[0]
    model = first.model.model_id or f"spec-of-{first.name}"
    kv = f"/kv-{first.kv_precision.value}" if first.kv_precision is not None else ""
    return f"{SHARED}{model}/{first.engine.value}{kv}"


@dataclass(frozen=True, slots=True)
class Family:
    """Workloads whose loads may share replicas, and how they are sized."""

    sizing: Sizing
    members: tuple[InferenceWorkload, ...]


def families(request: PlanRequest) -> tuple[Family, ...]:
    """Every workload's own family, then one shared family per group of at least two
    ``isolation: shared`` workloads on the same model, engine and KV precision (requests of at
    most ``MAX_SHARING_WORKLOADS`` inference workloads)."""
    quantile = request.constraints.capacity_quantile
    out = [
        Family(Sizing(f"{OWN}{w.name}", w.sla, w.utilization_target, quantile), (w,))
        for w in request.inference
    ]
    groups: dict[tuple[object, ...], list[InferenceWorkload]] = defaultdict(list)
    for w in request.inference:
        if w.isolation is Isolation.SHARED:
            groups[_sharing_key(w)].append(w)
    if len(request.inference) > MAX_SHARING_WORKLOADS:
        return tuple(out)
    for members in groups.values():
        if len(members) >= 2:
            sizing = Sizing(
                _group_label(members),
                strictest_sla(m.sla for m in members),
                min(m.utilization_target for m in members),
                quantile,
            )
            out.append(Family(sizing, tuple(members)))
    return tuple(out)


def sizing_of(request: PlanRequest | tuple[Family, ...], workload: str, pool: str) -> Sizing:
    """The sizing a candidate of ``workload`` in ``pool`` ("" = its own replicas) was computed with
    (``request`` or its ``families``)."""
    shared = pool.startswith(SHARED)
    for family in request if isinstance(request, tuple) else families(request):
        if family.sizing.shared == shared and any(m.name == workload for m in family.members):
            return family.sizing
    msg = f"no family of {workload!r} for pool {pool!r}"
    raise KeyError(msg)


def deployment_key(dep: Deployment) -> str:
    """A deployment in an id: ``<gpu>/tp2/fp8``, ``<gpu>/mig7/bf16``, or co-located
    ``<gpu>/tp1/bf16/card1of16`` (a guest) and ``<gpu>/tp2/fp8/card15of16`` (a host)."""
    where = f"mig{dep.mig_slice}" if dep.mig_slice else f"tp{dep.tp}"
    shared = "/card" + card_fraction(dep.card_share).replace("/", "of") if dep.card_share < 1 else ""
    return f"{dep.gpu.id}/{where}/{dep.precision.value}{shared}"


def candidate_id(
    workload: str, dep: Deployment, load: int | None, sizing: Sizing, *, alone: bool = False
) -> str:
    """Unique within an instance; a one-size workload's own candidate keeps its historic id
    (``load`` None = the workload has one size)."""
    size = "" if load is None else f"/len{load}"
    family = "/shared" if sizing.shared else "/alone" if alone else ""
    return f"{workload}/{deployment_key(dep)}{size}{family}"


def pool_id(dep: Deployment, sizing: Sizing) -> str:
    """The pool of a family's loads on one deployment."""
    return f"{sizing.family}/{deployment_key(dep)}"
