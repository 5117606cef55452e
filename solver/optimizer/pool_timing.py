"""Capacities and pools checked by the performance model's own physics.

``PerfCapacity`` is the evaluator's capacity source (``evaluate.CapacityOf``): the performance
model run afresh for each deployment. It also holds the *sharing rule* of a pool, the one place
both the planner and the evaluator ask whether a pool's replicas carry their loads at the SLA:

- A pool is feasible when one replica, carrying its share of every member's load (the pool's
  load spread evenly over its replicas less its spares, each rate divided by the member's target
  utilization × quantile factor), meets the pool's SLA by ``solver.perf.mixed.mix_miss`` — the
  mixed-stream timing of that batch, not a stricter proxy. Pools of one request size, and batch
  pools (no latency target, which time-share a replica exactly), keep Σ x_l / cap_l ≤ 1 on
  single-stream capacities.
- The MIP (model constraint 13) cannot state that rule; it states Mélange's linear rule
  Σ x_l / cap_l ≤ replicas on single-stream capacities. ``pool_verdicts`` checks a plan's pools;
  ``derated`` scales the capacities of a pool whose mix the timing rejects by the measured share
  that meets it (``solver.optimizer.api.solve`` re-solves with it), so a pool is never sized
  stricter than the linear rule without the model's timing of the planned mix saying so.
"""

from __future__ import annotations

import dataclasses
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import structlog

from pricebook import catalog
from pricebook.schema import GpuSpec, ModelArch, Pricebook
from solver.domain import PlanRequest
from solver.optimizer.disaggregation import recheck_unit, unit_factor
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.pooling import Sizing, families, sizing_of, strictest_sla
from solver.optimizer.results import FleetSolution
from solver.perf import Capacity, Deployment, WorkloadShape, resolve_model
from solver.perf.inference import Replica, build_replica
from solver.perf.measured import Correction, corrected_capacity, fit_corrections, modelled_targets
from solver.perf.mixed import mix_miss, mix_scale
from solver.perf.risk import quantile_factor

log = structlog.get_logger(__name__)
T = TypeVar("T")

REL_TOL = 1e-6


@dataclass(frozen=True, slots=True)
class _Deployed:
    """One candidate's physics: its replica, request size, single-stream capacity and sizing."""

    replica: Replica
    shape: WorkloadShape
    capacity: Capacity
    sizing: Sizing
    correction: Correction | None = None
    """The user's measured points on this deployment (``solver.perf.measured``), if any."""

    @property
    def factor(self) -> float:
        """Target utilization × capacity-quantile factor the candidate was sized with."""
        return self.sizing.utilization * quantile_factor(self.capacity.band_low, self.sizing.quantile)


class PerfCapacity:
    """Request rate one replica of a candidate's deployment sustains at its family's SLA, computed
    afresh (``cached=False``: not the candidate builder's answers), and the pool sharing rule."""

    def __init__(self, request: PlanRequest, book: Pricebook) -> None:
        self._book = book
        self._workloads = {w.name: w for w in request.inference}
        self._families = families(request)
        self._models: dict[str, ModelArch] = {}
        self._known: dict[tuple[object, ...], _Deployed] = {}
        self._measured = fit_corrections(request.measurements, book)

    def specs(self, workload: str, gpu: str) -> tuple[ModelArch, GpuSpec]:
        """The model ``workload`` serves and the card ``gpu``, as the pricebook states them."""
        if workload not in self._models:
            self._models[workload] = resolve_model(self._workloads[workload].model, self._book)
        return self._models[workload], catalog.gpu(self._book, gpu)

    def __call__(self, candidate: Candidate) -> float:
        if candidate.unit is not None:
            return self._unit(candidate)
        deployed = self._deployed(candidate)
        if deployed is None or not deployed.capacity.feasible:
            return 0.0
        return deployed.capacity.max_request_rate_per_s * deployed.factor

    def _unit(self, c: Candidate) -> float:
        """A disaggregated unit's capacity by ``disaggregation.recheck_unit`` (the performance
        model afresh), at its workload's own SLA, utilization and the quantile's factor."""
        assert c.unit is not None
        w = self._workloads[c.workload]
        model, _ = self.specs(w.name, c.gpu)
        specs = {g: catalog.gpu(self._book, g) for g in (c.unit.prefill_gpu, c.unit.decode_gpu)}
        sizing = sizing_of(self._families, w.name, "")
        factor = unit_factor(sizing)
        return recheck_unit(
            model, specs, c, engine=w.engine, kv_precision=w.kv_precision, sla=sizing.sla, factor=factor
        )

    def _deployed(self, candidate: Candidate) -> _Deployed | None:
        w = self._workloads[candidate.workload]
        size, _ = w.length_shares()[candidate.load]
        own = (size.input_tokens, size.output_tokens, w.prefix_cache_hit_rate)
        if candidate.pool_shapes and own not in candidate.pool_shapes:
            return None
        gpu, tp, precision = candidate.gpu, candidate.tp, candidate.precision
        key = (
            gpu,
            tp,
            precision.value,
            candidate.mig_slice,
            candidate.card_share,
            candidate.pool,
            w.name,
            own,
        )
        if key not in self._known:
            if w.name not in self._models:
                self._models[w.name] = resolve_model(w.model, self._book)
            model = self._models[w.name]
            dep = Deployment(
                gpu=catalog.gpu(self._book, gpu),
                tp=tp,
                precision=precision,
                kv_precision=w.kv_precision,
                engine=w.engine,
                mig_slice=candidate.mig_slice,
                card_share=candidate.card_share,
            )
            sizing = sizing_of(self._families, w.name, candidate.pool)
            shape = WorkloadShape(*own)
            cap = corrected_capacity(model, dep, shape, sizing.sla, self._measured, cached=False)
            correction = self._measured.of(model, dep)
            self._known[key] = _Deployed(build_replica(model, dep, None), shape, cap, sizing, correction)
        return self._known[key]

    def pool_scale(self, loads: Sequence[tuple[Candidate, float]]) -> tuple[float, str]:
        """(largest share of ``loads`` — (member, req/s one replica carries) — meeting the pool's SLA,
        capped at 1; why the full loads miss it, "" when they meet it). The sharing rule."""
        deployed = [(self._deployed(c), rate) for c, rate in loads if rate > 0]
        if not deployed:
            return 1.0, ""
        if any(d is None or not d.capacity.feasible for d, _ in deployed):
            return 0.0, "a member cannot be served on this deployment at the SLA"
        # The MIP's tolerance: a load at the linear rule's limit within REL_TOL is at the limit.
        parts = [(d, rate * (1 - REL_TOL) / d.factor) for d, rate in deployed if d is not None]
        sla = strictest_sla(d.sizing.sla for d, _ in parts)
        if sla.is_batch or len({d.shape for d, _ in parts}) == 1:
            # One request size is its single-stream capacity exactly; batch work time-shares.
            used = sum(rate / d.capacity.max_request_rate_per_s for d, rate in parts)
            scale = min(1.0, 1.0 / used) if used > 0 else 1.0
            return scale, "" if used <= 1 else f"load {used:.4g} × one replica's capacity at the SLA"
        replica = parts[0][0].replica
        streams = [(d.shape, rate) for d, rate in parts]
        correction = parts[0][0].correction
        if correction is not None:  # a measured deployment: the mix on the model's clock
            streams = [(shape, rate / correction.throughput_factor) for shape, rate in streams]
            sla = modelled_targets(sla, correction)
        miss = mix_miss(replica, streams, sla)
        return (1.0, "") if not miss else (mix_scale(replica, streams, sla), miss)


@dataclass(frozen=True, slots=True)
class PoolVerdict:
    """One pool in one bucket by the sharing rule."""

    pool: str
    bucket: int
    replicas: int
    """Replicas carrying load (the pool's less its spares)."""
    scale: float
    """Largest share of the per-replica load that meets the SLA (1.0 = the pool meets it)."""
    miss: str
    """Why the pool's replicas miss the SLA ("" when they meet it)."""


def pool_loads(solution: FleetSolution) -> dict[str, list[list[tuple[Candidate, float]]]]:
    """Per shared pool and bucket: (member, req/s it carries on the pool's replicas)."""
    nb = max((len(p.replicas) for p in solution.pools), default=0)
    out: dict[str, list[list[tuple[Candidate, float]]]] = defaultdict(lambda: [[] for _ in range(nb)])
    for a in solution.assignments:
        for use in a.uses:
            if use.pooled:
                for b, share in enumerate(use.shared_load):
                    if share > 0:
                        carried = share * use.candidate.capacity_req_s
                        out[use.candidate.pool][b].append((use.candidate, carried))
    return out


def pool_verdicts(solution: FleetSolution, physics: PerfCapacity) -> list[PoolVerdict]:
    """Every shared pool with load, in every bucket, by the sharing rule (``PerfCapacity.pool_scale``)."""
    pools = {p.id: p for p in solution.pools}
    out = []
    for pool_id, per_b in pool_loads(solution).items():
        pool = pools.get(pool_id)
        if pool is None:
            continue
        for b, loads in enumerate(per_b):
            if not loads:
                continue
            serving = pool.replicas[b] - (pool.spares if pool.replicas[b] > 0 else 0)
            if serving <= 0:
                out.append(PoolVerdict(pool_id, b, serving, 0.0, "load on a pool without serving replicas"))
                continue
            scale, miss = physics.pool_scale([(c, rate / serving) for c, rate in loads])
            out.append(PoolVerdict(pool_id, b, serving, scale, miss))
    return out


DERATE_MARGIN = 1e-3
"""Derated pools keep this much less than the share measured to meet the SLA (the MIP may move
load between sizes within the new capacities)."""


def derated(instance: FleetInstance, verdicts: Sequence[PoolVerdict]) -> FleetInstance:
    """``instance`` with every pool that misses its SLA (by ``pool_verdicts``) at the smallest
    measured share of its capacities: the same pool is sized stricter only by what its planned
    mix was measured to need."""
    scale: dict[str, float] = {}
    for v in verdicts:
        if v.miss:
            scale[v.pool] = min(scale.get(v.pool, 1.0), max(0.0, v.scale * (1 - DERATE_MARGIN)))
    if not scale:
        return instance
    candidates = tuple(
        dataclasses.replace(
            c,
            capacity_req_s=c.capacity_req_s * scale[c.pool],
            max_output_tok_s=c.max_output_tok_s * scale[c.pool],
        )
        if c.pool in scale
        else c
        for c in instance.candidates
    )
    return dataclasses.replace(instance, candidates=tuple(c for c in candidates if c.capacity_req_s > 0))


POOL_ROUNDS = 3
"""Re-solves with derated pools before the pools that still miss are dropped."""
FIRST_SOLVE_SHARE = 0.7
"""Share of the time limit for the first solve when pools may need re-solving (mixed sizes)."""


def solve_pools_by_timing(
    instance: FleetInstance,
    plan: Callable[[FleetInstance, float], T],
    time_limit_s: float,
    capacity_of: object,
    solution_of: Callable[[FleetInstance, T], FleetSolution | None],
    *,
    carry: Callable[[T, T], T] = lambda _, later: later,
) -> tuple[FleetInstance, T]:
    """``plan(instance, limit)`` until every pool of its solution (``solution_of``; None = no plan)
    meets the sharing rule: a pool whose planned mix misses the SLA by its timing is derated
    (``derated``) and the instance re-solved, at most ``POOL_ROUNDS`` times; then every pool that
    mixes request sizes is dropped (each load keeps replicas of its own, which the single-stream
    capacity sizes exactly). A re-solve without a plan is returned as it is: derating keeps every
    load's own replicas, so it is no plan in time, or none at all. Returns the instance the last
    plan was solved on, and that plan. Without the performance model (``capacity_of`` not a
    ``PerfCapacity``) pools are the linear rule's, solved once. ``carry(earlier, later)`` hands an
    earlier round's result to the next one's: derating and dropping pools only remove plans, so an
    earlier round's proven bound still bounds the later rounds (``api.with_earlier_bound``)."""
    if not isinstance(capacity_of, PerfCapacity) or not _mixing_pools(instance):
        return instance, plan(instance, time_limit_s)
    started = time.perf_counter()
    result = plan(instance, time_limit_s * FIRST_SOLVE_SHARE)
    for attempt in range(POOL_ROUNDS + 1):
        solution = solution_of(instance, result)
        if solution is None or not solution.has_plan:
            return instance, result
        misses = [v for v in pool_verdicts(solution, capacity_of) if v.miss]
        if not misses:
            return instance, result
        log.info("pool_misses_sla", round=attempt, pools=[f"{v.pool}@{v.bucket}: {v.miss}" for v in misses])
        if attempt == POOL_ROUNDS:
            break
        instance = derated(instance, misses)
        left = time_limit_s - (time.perf_counter() - started)
        result = carry(result, plan(instance, max(MIN_RESOLVE_S, left / (POOL_ROUNDS - attempt + 1))))
    mixing = _mixing_pools(instance)
    instance = dataclasses.replace(
        instance, candidates=tuple(c for c in instance.candidates if c.pool not in mixing)
    )
    left = time_limit_s - (time.perf_counter() - started)
    return instance, carry(result, plan(instance, max(MIN_RESOLVE_S, left)))


MIN_RESOLVE_S = 0.5


def _mixing_pools(instance: FleetInstance) -> set[str]:
    """Pools holding more than one request size (their timing may differ from the linear rule)."""
    return {c.pool for c in instance.candidates if c.pool and len(set(c.pool_shapes)) > 1}
