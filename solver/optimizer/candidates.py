"""Candidate deployments and the priced, measured ``FleetInstance`` of a request.

For every inference workload × allowed GPU × TP degree (1, 2, 4, 8 within the GPU's largest
scale-up domain on offer) × weight precision (the workload's, or each of bf16/fp8/int4/fp4 the
GPU runs when the workload leaves it open) × MIG slice (small models on MIG-capable GPUs), the
performance model (``solver.perf.capacity_at_sla``) gives the request rate one replica sustains
at the workload's SLA. Infeasible deployments are kept as ``CandidateRejection`` (the reason,
for explanations). On one GPU type, a deployment is dropped when another uses a divisor of its
GPUs and has at least its capacity per GPU: whole replicas of the smaller one replace it at no
extra cost (same GPU, same prices), so the optimum never needs it.

Training workloads get one ``TrainingChoice`` per allowed GPU type from
``solver.perf.estimate_training`` (GPU-hours a month, GPUs needed at once to fit and to finish by
the deadline).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pricebook import catalog
from pricebook.schema import GpuId, GpuSpec, ModelArch, Pricebook
from solver.domain import (
    MAX_PLAN_GPUS,
    AcquisitionMode,
    CapacityQuantile,
    Constraints,
    Fleet,
    InferenceWorkload,
    OwnedGpus,
    PlanRequest,
    Precision,
    TrainingWorkload,
)
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer.cancel import checkpoint
from solver.optimizer.colocation import GUEST_SHARES, guest_share, memory_fits, small_model
from solver.optimizer.disagg_candidates import disaggregated_candidates
from solver.optimizer.evaluate import perf_capacity_checker
from solver.optimizer.fleet_lines import fixed_fleet
from solver.optimizer.instance import (
    CLUSTERED_BUCKETS,
    EXACT_BUCKET_REPLICA_VARIABLES,
    Bucket,
    Candidate,
    CandidateRejection,
    Caps,
    CountLimit,
    FleetInstance,
    InferenceDemand,
    TrainingChoice,
    TrainingDemand,
    buckets_from_rates,
    tp_domain,
)
from solver.optimizer.pooling import Family, Sizing, candidate_id, families, pool_id
from solver.perf import Capacity, Deployment, WorkloadShape, resolve_model
from solver.perf.measured import NO_CORRECTIONS, MeasuredCorrections, corrected_capacity, fit_corrections
from solver.perf.risk import quantile_factor
from solver.perf.training import estimate_training, min_gpus_to_fit
from solver.pricing.costs import (
    acquisition_options,
    capex_budget_ex_vat,
    storage_capex,
    storage_monthly,
    to_currency,
)
from solver.units import HOURS_PER_DAY, SECONDS_PER_HOUR

__all__ = [
    "MIG_MAX_PARAMS_B",
    "TP_DEGREES",
    "TRAINING_GPU_COUNTS",
    "build_instance",
    "drop_dominated",
    "inference_candidates",
    "perf_capacity_checker",
    "precisions_to_try",
    "supported_precisions",
    "training_demand",
]
"""``perf_capacity_checker`` lives with the evaluator it feeds; re-exported for existing callers."""

TP_DEGREES = (1, 2, 4, 8)
MIG_MAX_PARAMS_B = 14.0
"""Models up to this size are also tried on MIG slices (larger ones never fit a slice)."""


def supported_precisions(gpu: GpuSpec) -> tuple[Precision, ...]:
    """Weight precisions the GPU runs natively (int4 is weight-only, so every GPU runs it)."""
    out = [Precision.BF16]
    if gpu.fp8_tflops > 0:
        out.append(Precision.FP8)
    out.append(Precision.INT4)
    if gpu.fp4_tflops > 0:
        out.append(Precision.FP4)
    return tuple(out)


def precisions_to_try(w: InferenceWorkload, model: ModelArch, gpu: GpuSpec) -> tuple[Precision, ...]:
    """The weight precisions a workload may run at on ``gpu``: the one it states; otherwise the
    weights' own precision as released (a 4-bit release runs as INT4 weight-only kernels where the
    GPU has no FP4) and FP8, plus what the workload allows. Never a quantization it does not list."""
    if w.precision is not None:
        return (w.precision,)
    supported = supported_precisions(gpu)
    released = Precision(model.released_weights)
    if released is Precision.FP4 and released not in supported:
        released = Precision.INT4
    wanted = {released, Precision.FP8, *w.allowed_precisions}
    # FP8 weights on a GPU without FP8 tensor cores run upcast to BF16.
    return tuple(p for p in supported if p in wanted) or (Precision.BF16,)


def _deployments(
    w: InferenceWorkload, model: ModelArch, gpu: GpuSpec, max_tp: int
) -> Iterable[tuple[Deployment, str]]:
    """(deployment, "" or why it is skipped without asking the performance model)."""
    precisions = precisions_to_try(w, model, gpu)
    for precision in precisions:
        for tp in TP_DEGREES:
            dep = Deployment(
                gpu=gpu, tp=tp, precision=precision, kv_precision=w.kv_precision, engine=w.engine
            )
            if tp > max_tp:
                # Only worth saying for the first TP beyond the domain.
                if tp == next(t for t in TP_DEGREES if t > max_tp):
                    yield dep, f"TP {tp} exceeds the largest NVLink/P2P domain on offer ({max_tp} GPUs)"
                continue
            if not w.allows_tp(tp):
                yield dep, f"TP {tp} is not allowed for this workload (allowed_tp / max_tp)"
                continue
            yield dep, ""
        if gpu.mig_max_instances > 1 and model.params_b <= MIG_MAX_PARAMS_B:
            for slices in sorted({2, gpu.mig_max_instances}):
                dep = Deployment(
                    gpu=gpu,
                    precision=precision,
                    kv_precision=w.kv_precision,
                    engine=w.engine,
                    mig_slice=slices,
                )
                yield dep, "" if w.allow_mig else "MIG is not allowed for this workload (allow_mig)"


def _training_rejection(workload: str, gpu: GpuId, gpus: int, reason: str) -> CandidateRejection:
    """A GPU type turned away for a training run (``gpus`` = GPUs of the run considered)."""
    return CandidateRejection(workload, gpu, gpus, Precision.BF16, reason, training=True)


def _rejection(w: str, dep: Deployment, reason: str) -> CandidateRejection:
    return CandidateRejection(w, dep.gpu.id, dep.tp, dep.precision, reason, mig_slice=dep.mig_slice)


def inference_candidates(
    w: InferenceWorkload, model: ModelArch, gpus: Iterable[GpuSpec], max_tp: dict[str, int]
) -> tuple[list[Candidate], list[CandidateRejection]]:
    """``w`` on its own replicas at its own SLA (no headroom, the p50 estimate), before dominance."""
    family = Family(Sizing(f"own:{w.name}", w.sla, 1.0, CapacityQuantile.P50), (w,))
    return family_candidates(family, model, gpus, max_tp)


def family_candidates(
    family: Family,
    model: ModelArch,
    gpus: Iterable[GpuSpec],
    max_tp: dict[str, int],
    measured: MeasuredCorrections = NO_CORRECTIONS,
) -> tuple[list[Candidate], list[CandidateRejection]]:
    """Candidates of every load (request size) of the family's workloads on every deployment they
    all may use, sized by ``solver.optimizer.pooling``: on each deployment the loads form one pool
    at their single-stream capacities (the linear rule, checked on the plan's mixes by
    ``solver.optimizer.pool_timing``); in a workload's own family each size of a length mix also
    gets replicas of its own. Rejections
    (why a deployment cannot serve a workload or one of its sizes alone) come from own families."""
    own = not family.sizing.shared
    deployments: dict[tuple[str, int, str, int], tuple[Deployment, list[InferenceWorkload]]] = {}
    rejected: list[CandidateRejection] = []
    for gpu in gpus:
        for w in family.members:
            for dep, skip in _deployments(w, model, gpu, max_tp.get(gpu.id, 1)):
                if skip:
                    if own:
                        rejected.append(_rejection(w.name, dep, skip))
                    continue
                key = (gpu.id, dep.tp, dep.precision.value, dep.mig_slice)
                deployments.setdefault(key, (dep, []))[1].append(w)
    found: list[Candidate] = []
    for dep, members in deployments.values():
        loads = [(w, k, size) for w in members for k, (size, _) in enumerate(w.length_shares())]
        shapes = tuple(
            WorkloadShape(s.input_tokens, s.output_tokens, w.prefix_cache_hit_rate) for w, _, s in loads
        )
        # Pools are sized by the linear rule on single-stream capacities; the plan's mixes are then
        # checked by their timing (``solver.optimizer.pool_timing``).
        alone = [corrected_capacity(model, dep, shape, family.sizing.sla, measured) for shape in shapes]
        for (w, k, size), shape, single in zip(loads, shapes, alone, strict=True):
            mixed = len(w.length_mix) > 1
            if not _serves(single):
                if own:
                    sized = f" ({size.input_tokens}+{size.output_tokens} tokens)" if mixed else ""
                    rejected.append(_rejection(w.name, dep, (single.reason or "no capacity") + sized))
                continue
            load = k if mixed else None
            if len(loads) > 1:
                cid = candidate_id(w.name, dep, load, family.sizing)
                found.append(
                    _candidate(
                        cid,
                        w.name,
                        dep,
                        single,
                        load=k,
                        sizing=family.sizing,
                        pool=(pool_id(dep, family.sizing), shapes),
                        size=shape,
                    )
                )
            if own and (len(loads) == 1 or mixed):
                cid = candidate_id(w.name, dep, load, family.sizing, alone=len(loads) > 1)
                found.append(
                    _candidate(
                        cid,
                        w.name,
                        dep,
                        single,
                        load=k,
                        sizing=family.sizing,
                        pool=("", (shape,)),
                        size=shape,
                    )
                )
    return found, rejected


def _serves(cap: Capacity) -> bool:
    return cap.feasible and cap.max_request_rate_per_s > 0


def _candidate(
    cid: str,
    w: str,
    dep: Deployment,
    cap: Capacity,
    *,
    load: int,
    sizing: Sizing,
    pool: tuple[str, tuple[WorkloadShape, ...]],
    size: WorkloadShape,
) -> Candidate:
    """One load on one deployment, its capacity scaled by the target utilization and quantile;
    ``pool`` = (pool id or "" for its own replicas, the request sizes that share them)."""
    factor = sizing.utilization * quantile_factor(cap.band_low, sizing.quantile)
    pool_name, shapes = pool
    return Candidate(
        id=cid,
        workload=w,
        gpu=dep.gpu.id,
        tp=dep.tp,
        precision=dep.precision,
        kv_precision=dep.effective_kv_precision,
        mig_slice=dep.mig_slice,
        card_share=dep.card_share,
        capacity_req_s=cap.max_request_rate_per_s * factor,
        max_output_tok_s=cap.max_output_tok_s * factor,
        ttft_p95_ms=cap.ttft_p95_ms,
        tpot_ms=cap.tpot_ms,
        per_user_tok_s=cap.per_user_tok_s,
        concurrency=cap.concurrency,
        bottleneck=cap.bottleneck,
        band_low=cap.band_low,
        band_high=cap.band_high,
        load=load,
        pool=pool_name,
        rated_req_s=cap.max_request_rate_per_s,
        pool_shapes=tuple((s.input_tokens, s.output_tokens, s.prefix_cache_hit_rate) for s in shapes),
        input_tokens=size.input_tokens,
        output_tokens=size.output_tokens,
        measured_by=cap.measured_by,
        measured_note=cap.measured_note,
    )


def colocated_candidates(
    request: PlanRequest,
    book: Pricebook,
    gpus: Iterable[GpuSpec],
    max_tp: dict[str, int],
    whole: Iterable[Candidate],
    *,
    measured: MeasuredCorrections = NO_CORRECTIONS,
) -> list[Candidate]:
    """Guests (small models on a share of a card) and hosts (workloads on the rest of whole cards)
    on every GPU type where a small model fits (``solver.optimizer.colocation``): each request size
    of a workload on its own replicas, sized at the workload's SLA on its part of the card, and kept
    only when it fits its share of the memory by the model's own figures. A host is tried only
    beside another workload's guest, and only for a deployment whose whole-card candidate
    (``whole``, after dominance) is kept."""
    own = [f for f in families(request) if not f.sizing.shared]
    if not request.constraints.allow_colocation or len(request.inference) < 2 or not own:
        return []
    models = {f.members[0].name: resolve_model(f.members[0].model, book) for f in own}
    guests = [f for f in own if small_model(models[f.members[0].name])]
    kept: dict[str, set[tuple[str, int, Precision]]] = defaultdict(set)
    for c in whole:
        if not c.pool and not c.mig_slice:
            kept[c.workload].add((c.gpu, c.tp, c.precision))
    found: list[Candidate] = []
    for gpu in gpus:
        placed = [(f, _guest_candidates(f, models[f.members[0].name], gpu, measured)) for f in guests]
        share = guest_share([s for _, cands in placed if (s := _every_size_fits(cands)) is not None])
        if share is None:
            continue
        placed_guests = {f.members[0].name: [c for s, c in cands if s == share] for f, cands in placed}
        for cands in placed_guests.values():
            found += cands
        for family in own:
            w, model = family.members[0], models[family.members[0].name]
            if not any(cands for name, cands in placed_guests.items() if name != w.name):
                continue
            hosts = [
                c
                for dep, skip in _deployments(w, model, gpu, max_tp.get(gpu.id, 1))
                if not skip and not dep.mig_slice and (gpu.id, dep.tp, dep.precision) in kept[w.name]
                for c in _fitting(family, model, gpu, replace(dep, card_share=1 - share), measured)
            ]
            for load in sorted({c.load for c in hosts}):
                found += _fewest_hosts([c for c in hosts if c.load == load])
    return found


def _every_size_fits(cands: list[tuple[float, Candidate]]) -> float | None:
    """The smallest share of a card at which each request size of a guest that fits at all fits."""
    sizes = {c.load for _, c in cands}
    return next(
        (s for s in sorted({s for s, _ in cands}) if {c.load for t, c in cands if t == s} == sizes), None
    )


def _fewest_hosts(hosts: list[Candidate]) -> list[Candidate]:
    """At most two host deployments per workload, request size and GPU type — the smallest TP
    group (a low load beside a guest) and the most requests per card (a high one) — so co-location
    adds a few options to the MIP, not one per TP degree and precision."""
    if not hosts:
        return []
    smallest = min(hosts, key=lambda c: (c.tp, -c.capacity_req_s, c.id))
    densest = min(hosts, key=lambda c: (-c.capacity_req_s / c.tp, c.tp, c.id))
    return [smallest] if densest is smallest else [smallest, densest]


def _guest_candidates(
    family: Family, model: ModelArch, gpu: GpuSpec, measured: MeasuredCorrections
) -> list[tuple[float, Candidate]]:
    """(share, candidate) of a small model on each share of a card it fits, at each precision."""
    w = family.members[0]
    out = []
    for share in GUEST_SHARES:
        for precision in precisions_to_try(w, model, gpu):
            dep = Deployment(
                gpu=gpu, precision=precision, kv_precision=w.kv_precision, engine=w.engine, card_share=share
            )
            out += [(share, c) for c in _fitting(family, model, gpu, dep, measured)]
    return out


def _fitting(
    family: Family, model: ModelArch, gpu: GpuSpec, dep: Deployment, measured: MeasuredCorrections
) -> list[Candidate]:
    """The own candidates of the family's workload on ``dep``, one per request size (ids as the
    whole-card ones: ``/len<k>/alone`` in a length mix), that serve and fit their memory share."""
    w = family.members[0]
    sizes = w.length_shares()
    mixed = len(sizes) > 1
    found = []
    for k, (size, _) in enumerate(sizes):
        shape = WorkloadShape(size.input_tokens, size.output_tokens, w.prefix_cache_hit_rate)
        cap = corrected_capacity(model, dep, shape, family.sizing.sla, measured)
        if not _serves(cap):
            continue
        cid = candidate_id(w.name, dep, k if mixed else None, family.sizing, alone=mixed)
        c = _candidate(cid, w.name, dep, cap, load=k, sizing=family.sizing, pool=("", (shape,)), size=shape)
        if memory_fits(model, c, gpu):
            found.append(c)
    return found


@dataclass(frozen=True, slots=True)
class _Unit:
    """The candidates that share one pool's replicas (one candidate when it has no pool)."""

    members: tuple[Candidate, ...]

    @property
    def family(self) -> tuple[str, str, float]:
        """Units comparable for dominance: the same GPU, the same family of loads, the same share
        of their cards (co-located guests and hosts compete only among themselves)."""
        first = self.members[0]
        family = first.pool.rsplit("/", 3)[0] if first.pool else first.workload
        return first.gpu, family, first.card_share

    @property
    def gpus(self) -> float:
        return self.members[0].gpu_equivalents

    def capacities(self) -> dict[tuple[str, int], float]:
        return {(c.workload, c.load): c.capacity_req_s for c in self.members}


def drop_dominated(cands: list[Candidate]) -> tuple[list[Candidate], list[CandidateRejection]]:
    """Drop a pool (a candidate without one) when, on the same GPU and for the same loads, another
    uses a divisor of its GPUs (or the same fraction) with at least its capacity per GPU for every
    load it serves (ties: the fewer GPUs, then the id, win): that many replicas of the other serve
    all it serves on the same GPUs."""
    units: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        units[c.pool or c.id].append(c)
    by_family: dict[tuple[str, str, float], list[_Unit]] = defaultdict(list)
    for members in units.values():
        unit = _Unit(tuple(members))
        by_family[unit.family].append(unit)
    kept: list[Candidate] = []
    dropped: list[CandidateRejection] = []
    for group in by_family.values():
        order = sorted(group, key=lambda u: (u.gpus, -sum(u.capacities().values()), u.members[0].id))
        for i, unit in enumerate(order):
            winner = next((a for a in order[:i] if _dominates(a, unit)), None)
            if winner is None:
                kept.extend(unit.members)
                continue
            for c in unit.members:
                by = next((m.id for m in winner.members if m.load == c.load and m.workload == c.workload), "")
                dropped.append(
                    CandidateRejection(
                        c.workload,
                        c.gpu,
                        c.tp,
                        c.precision,
                        f"dominated by {by}",
                        dominated_by=by,
                        mig_slice=c.mig_slice,
                    )
                )
    return sorted(kept, key=lambda c: c.id), dropped


def _dominates(a: _Unit, b: _Unit) -> bool:
    ga, gb = a.gpus, b.gpus
    if ga > gb:
        return False
    ratio = gb / ga
    if abs(ratio - round(ratio)) > 1e-9:
        return False
    have, need = a.capacities(), b.capacities()
    return all(have.get(key, 0.0) * round(ratio) >= cap for key, cap in need.items())


def _caps(constraints: Constraints, book: Pricebook) -> Caps:
    cur = constraints.currency
    return Caps(
        capex_budget=capex_budget_ex_vat(constraints, book),
        monthly_opex_cap=to_currency(constraints.monthly_opex_cap, cur, book)
        if constraints.monthly_opex_cap
        else None,
        power_cap_kw=constraints.power_cap_kw,
        rack_units_cap=float(constraints.rack_units_cap) if constraints.rack_units_cap is not None else None,
    )


def _fleet_constraints(constraints: Constraints, fleet: Fleet) -> Constraints:
    gpus = tuple(dict.fromkeys(i.gpu for i in fleet.items))
    modes = tuple(dict.fromkeys(i.mode for i in fleet.items if not i.owned)) or (AcquisitionMode.BUY,)
    owned: dict[str, int] = defaultdict(int)
    for item in fleet.items:
        if item.owned:
            owned[item.gpu] += item.count
    return constraints.model_copy(
        update={
            "allowed_gpus": gpus,
            "allowed_modes": modes,
            "owned": tuple(OwnedGpus(gpu=g, count=n) for g, n in owned.items()),
        }
    )


def _demands(request: PlanRequest, candidates: int) -> tuple[tuple[Bucket, ...], list[InferenceDemand]]:
    """The demand buckets and each workload's rate in them: hours grouped exactly when the model
    stays small enough to solve (``EXACT_BUCKET_REPLICA_VARIABLES``), else clustered."""
    rates = [w.hourly_request_rates() for w in request.inference] or [(0.0,) * HOURS_PER_DAY]
    buckets, busiest, quietest = buckets_from_rates(rates)
    if candidates * len(buckets) > EXACT_BUCKET_REPLICA_VARIABLES:
        buckets, busiest, quietest = buckets_from_rates(rates, CLUSTERED_BUCKETS)
    demands = [
        InferenceDemand(
            name=w.name,
            rate_req_s=tuple(busy),
            redundancy=w.redundancy,
            tokens_per_request=w.tokens_per_request,
            hourly_rate_req_s=tuple(w.hourly_request_rates()),
            quietest_rate_req_s=tuple(quiet) if quiet != busy else (),
            mix=tuple(share for _, share in w.length_shares()) if w.length_mix else (),
            deadline_hours=w.batch_deadline_hours if not w.interactive else None,
        )
        for w, busy, quiet in zip(request.inference, busiest, quietest, strict=False)
    ]
    return buckets, demands


def _refuse_oversized(
    request: PlanRequest, candidates: Iterable[Candidate], demands: Iterable[InferenceDemand]
) -> None:
    """``InvalidRequest`` when the workloads' peaks need more than ``MAX_PLAN_GPUS`` GPUs on their
    most efficient candidates for every request size (fewer is never possible): naming each
    workload that alone needs more, else the inference workloads together."""
    fewest: dict[tuple[str, int], float] = {}
    for c in candidates:
        key = (c.workload, c.load)
        per_request = c.gpu_equivalents / c.capacity_req_s if c.capacity_req_s > 0 else float("inf")
        fewest[key] = min(fewest.get(key, float("inf")), per_request)
    problems = []
    total = 0.0
    for i, (w, d) in enumerate(zip(request.inference, demands, strict=True)):
        need = sum(
            d.peak_req_s * share * fewest[(d.name, k)]
            for k, share in enumerate(d.loads)
            if (d.name, k) in fewest
        )
        total += need
        if need > MAX_PLAN_GPUS:
            field = "daily_tokens" if w.daily_tokens is not None else "peak_request_rate_per_s"
            reason = (
                f"its peak needs at least {need:,.0f} GPUs, more than the {MAX_PLAN_GPUS:,} a plan "
                "may hold; check the demand's units"
            )
            problems.append(FieldViolation(f"inference[{i}].{field}", reason))
    if not problems and total > MAX_PLAN_GPUS:
        reason = (
            f"the peaks together need at least {total:,.0f} GPUs, "
            f"more than the {MAX_PLAN_GPUS:,} a plan may hold"
        )
        problems.append(FieldViolation("inference", reason))
    if problems:
        raise InvalidRequest(problems)


def build_instance(request: PlanRequest, book: Pricebook, *, fleet: Fleet | None = None) -> FleetInstance:
    """The MIP's input for ``request`` (on ``fleet`` when given: counts fixed). GPUs are named by
    catalogue id throughout (``solver.resolve`` resolved the request's and the fleet's aliases)."""
    constraints = request.constraints
    if fleet is not None:
        constraints = _fleet_constraints(constraints, fleet)
    options = acquisition_options(book, constraints)
    fixed = None
    if fleet is not None:
        options, fixed = fixed_fleet(fleet, options, book, constraints)
    max_tp: dict[str, int] = defaultdict(int)
    for o in options:
        max_tp[o.gpu] = max(max_tp[o.gpu], tp_domain(o))
    gpus = [catalog.gpu(book, g) for g in sorted(max_tp)]
    found: list[Candidate] = []
    rejections: list[CandidateRejection] = []
    measured = fit_corrections(request.measurements, book)
    for family in families(request):
        checkpoint()  # ~80 ms a workload on a cold cache (100 workloads: 8 s)
        model = resolve_model(family.members[0].model, book)
        cands, rejected = family_candidates(family, model, gpus, max_tp, measured)
        found += cands
        rejections += rejected
    candidates, dominated = drop_dominated(found)
    co_located = colocated_candidates(request, book, gpus, max_tp, candidates, measured=measured)
    shared_cards, _ = drop_dominated(co_located)
    units = disaggregated_candidates(request, book, gpus, max_tp, options, precisions=precisions_to_try)
    candidates = sorted([*candidates, *shared_cards, *units], key=lambda c: c.id)
    rejections += dominated
    buckets, demands = _demands(request, len(candidates))
    _refuse_oversized(request, candidates, demands)
    training = tuple(training_demand(t, book, gpus) for t in request.training)
    checkpoint()
    return FleetInstance(
        currency=constraints.currency,
        horizon_months=constraints.horizon_months,
        buckets=buckets,
        options=tuple(options),
        inference=tuple(demands),
        candidates=tuple(candidates),
        training=training,
        rejections=tuple(rejections),
        caps=_caps(constraints, book),
        count_limits=tuple(CountLimit(b.gpu, b.min_count, b.max_count) for b in constraints.count_bounds),
        owned_counts={o.gpu: o.count for o in constraints.owned},
        fixed_fleet=fixed,
        extra_capex=storage_capex(constraints, book),
        extra_monthly=storage_monthly(constraints, book),
        # The request's policy, not the fleet's modes: a plan's own buy-only fleet is evaluated as planned.
        static_deployment=request.constraints.static_deployment,
        discount_rate=constraints.objective_discount_rate,
    )


TRAINING_GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
"""GPU counts tried for a run (from the smallest that fits) until it meets its deadline."""


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def training_demand(t: TrainingWorkload, book: Pricebook, gpus: Iterable[GpuSpec]) -> TrainingDemand:
    """GPU-hours a month and GPUs at once for ``t`` on each GPU type (``solver.perf`` training).

    The run uses the fewest GPUs (1, 2, 4, … from the smallest count that fits) that finish it by
    its deadline; its GPU-hours come from that estimate (scaling losses included). Reference
    GPU-hours (e.g. 300 H100-hours a month) convert by training throughput per GPU.
    """
    model = resolve_model(t.model, book)
    choices: list[TrainingChoice] = []
    rejections: list[CandidateRejection] = []
    tokens = t.tokens_per_run
    if t.reference is not None:
        ref_gpu = catalog.gpu(book, t.reference.gpu)
        ref_fit = max(1, min_gpus_to_fit(model, ref_gpu, t.method, t.seq_len))
        ref = estimate_training(model, ref_gpu, ref_fit, t.method, t.seq_len, 1e9)
        if not ref.fits or ref.tokens_per_s <= 0:
            reason = f"cannot size the run: it does not fit the reference {ref_gpu.id} ({ref.reason})"
            return TrainingDemand(t.name, (), (_training_rejection(t.name, ref_gpu.id, ref_fit, reason),))
        # Tokens one run processes = reference GPU-hours × reference tokens per GPU-hour.
        run_hours = t.reference.gpu_hours_per_month / t.runs_per_month
        tokens = run_hours * SECONDS_PER_HOUR * ref.tokens_per_s / ref_fit
    assert tokens is not None
    for gpu in gpus:
        fit = min_gpus_to_fit(model, gpu, t.method, t.seq_len)
        if fit <= 0:
            est = estimate_training(model, gpu, 1, t.method, t.seq_len, tokens)
            rejections.append(_training_rejection(t.name, gpu.id, 1, est.reason or "does not fit"))
            continue
        limit = t.max_gpus_per_run
        if limit is not None and fit > limit:
            reason = f"a run needs {fit} × {gpu.id} to fit in memory; runs are limited to {_gpus(limit)}"
            rejections.append(_training_rejection(t.name, gpu.id, fit, reason))
            continue
        chosen = None
        counts = (fit, *(n for n in TRAINING_GPU_COUNTS if n > fit))
        for count in (n for n in counts if limit is None or n <= limit):
            est = estimate_training(model, gpu, count, t.method, t.seq_len, tokens)
            if not est.fits:
                continue
            chosen = est
            if t.deadline_hours is None or est.hours <= t.deadline_hours:
                break
        if chosen is None:
            rejections.append(_training_rejection(t.name, gpu.id, fit, "does not fit"))
            continue
        if t.deadline_hours is not None and chosen.hours > t.deadline_hours:
            reason = (
                f"a run takes {chosen.hours:.1f} h on {chosen.num_gpus} × {gpu.id}, "
                f"over the {t.deadline_hours:g} h deadline"
                + (f" (runs are limited to {_gpus(limit)})" if limit is not None else "")
            )
            rejections.append(_training_rejection(t.name, gpu.id, chosen.num_gpus, reason))
            continue
        choices.append(
            TrainingChoice(
                gpu=gpu.id,
                gpu_hours_per_month=chosen.gpu_hours * t.runs_per_month,
                min_gpus=chosen.num_gpus,
                hours_per_run=chosen.hours,
            )
        )
    return TrainingDemand(name=t.name, choices=tuple(choices), rejections=tuple(rejections))
