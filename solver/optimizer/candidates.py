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

from pricebook import catalog
from pricebook.schema import GpuId, GpuSpec, ModelArch, Pricebook
from solver.domain import (
    AcquisitionMode,
    Constraints,
    Fleet,
    InferenceWorkload,
    OwnedGpus,
    PlanRequest,
    Precision,
    TrainingWorkload,
)
from solver.errors import FieldViolation, InvalidRequest
from solver.optimizer.evaluate import perf_capacity_checker
from solver.optimizer.instance import (
    CLUSTERED_BUCKETS,
    EXACT_BUCKET_REPLICA_VARIABLES,
    Bucket,
    Candidate,
    CandidateRejection,
    Caps,
    CountLimit,
    FixedGroup,
    FleetInstance,
    InferenceDemand,
    TrainingChoice,
    TrainingDemand,
    buckets_from_rates,
    tp_domain,
)
from solver.perf import Deployment, WorkloadShape, capacity_at_sla, resolve_model
from solver.perf.training import estimate_training, min_gpus_to_fit
from solver.pricing.costs import acquisition_options, capex_budget_ex_vat, to_currency
from solver.pricing.options import AcquisitionOption
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
            yield dep, ""
        if gpu.mig_max_instances > 1 and model.params_b <= MIG_MAX_PARAMS_B:
            for slices in sorted({2, gpu.mig_max_instances}):
                yield (
                    Deployment(
                        gpu=gpu,
                        precision=precision,
                        kv_precision=w.kv_precision,
                        engine=w.engine,
                        mig_slice=slices,
                    ),
                    "",
                )


def _candidate_id(w: str, dep: Deployment) -> str:
    where = f"mig{dep.mig_slice}" if dep.mig_slice else f"tp{dep.tp}"
    return f"{w}/{dep.gpu.id}/{where}/{dep.precision.value}"


def _training_rejection(workload: str, gpu: GpuId, gpus: int, reason: str) -> CandidateRejection:
    """A GPU type turned away for a training run (``gpus`` = GPUs of the run considered)."""
    return CandidateRejection(workload, gpu, gpus, Precision.BF16, reason, training=True)


def inference_candidates(
    w: InferenceWorkload, model: ModelArch, gpus: Iterable[GpuSpec], max_tp: dict[str, int]
) -> tuple[list[Candidate], list[CandidateRejection]]:
    shape = WorkloadShape(w.input_tokens, w.output_tokens, w.prefix_cache_hit_rate)
    found: list[Candidate] = []
    rejected: list[CandidateRejection] = []
    for gpu in gpus:
        for dep, skip in _deployments(w, model, gpu, max_tp.get(gpu.id, 1)):
            if skip:
                rejected.append(
                    CandidateRejection(w.name, gpu.id, dep.tp, dep.precision, skip, mig_slice=dep.mig_slice)
                )
                continue
            cap = capacity_at_sla(model, dep, shape, w.sla)
            if not cap.feasible or cap.max_request_rate_per_s <= 0:
                rejected.append(
                    CandidateRejection(
                        w.name,
                        gpu.id,
                        dep.tp,
                        dep.precision,
                        cap.reason or "no capacity",
                        mig_slice=dep.mig_slice,
                    )
                )
                continue
            found.append(
                Candidate(
                    id=_candidate_id(w.name, dep),
                    workload=w.name,
                    gpu=gpu.id,
                    tp=dep.tp,
                    precision=dep.precision,
                    kv_precision=dep.effective_kv_precision,
                    mig_slice=dep.mig_slice,
                    capacity_req_s=cap.max_request_rate_per_s,
                    max_output_tok_s=cap.max_output_tok_s,
                    ttft_p95_ms=cap.ttft_p95_ms,
                    tpot_ms=cap.tpot_ms,
                    per_user_tok_s=cap.per_user_tok_s,
                    concurrency=cap.concurrency,
                    bottleneck=cap.bottleneck,
                    band_low=cap.band_low,
                    band_high=cap.band_high,
                )
            )
    kept, dominated = drop_dominated(found)
    return kept, rejected + dominated


def drop_dominated(cands: list[Candidate]) -> tuple[list[Candidate], list[CandidateRejection]]:
    """Drop a candidate when, on the same GPU, another uses a divisor of its GPUs (or the same
    fraction) with at least its capacity per GPU (ties: the fewer GPUs, then the id, win)."""
    by_gpu: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        by_gpu[c.gpu].append(c)
    kept: list[Candidate] = []
    dropped: list[CandidateRejection] = []
    for group in by_gpu.values():
        order = sorted(group, key=lambda c: (c.gpus_per_replica, -c.capacity_req_s, c.id))
        for i, c in enumerate(order):
            winner = next((a for a in order[:i] if _dominates(a, c)), None)
            if winner is None:
                kept.append(c)
            else:
                dropped.append(
                    CandidateRejection(
                        c.workload,
                        c.gpu,
                        c.tp,
                        c.precision,
                        f"dominated by {winner.id}",
                        dominated_by=winner.id,
                        mig_slice=c.mig_slice,
                    )
                )
    return sorted(kept, key=lambda c: c.id), dropped


def _dominates(a: Candidate, b: Candidate) -> bool:
    ga, gb = a.gpus_per_replica, b.gpus_per_replica
    if ga > gb:
        return False
    ratio = gb / ga
    if abs(ratio - round(ratio)) > 1e-9:
        return False
    return a.capacity_req_s * round(ratio) >= b.capacity_req_s


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
            "count_bounds": (),
        }
    )


def _fixed_fleet(fleet: Fleet, options: list[AcquisitionOption]) -> tuple[FixedGroup, ...]:
    """Fleet lines → groups of options the MIP places them among: a line naming its server model
    pins that option; lines of one GPU type and mode without one share all its options, so the
    MIP finds the cheapest valid packing. A line no option matches is refused, naming it."""
    groups: dict[tuple[str, ...], int] = defaultdict(int)
    problems = []
    for i, item in enumerate(fleet.items):
        matching = tuple(
            sorted(
                o.id
                for o in options
                if o.gpu == item.gpu
                and o.owned == item.owned
                and (item.owned or o.mode is item.mode)
                and (item.server is None or o.server_id == item.server)
            )
        )
        if not matching:
            what = "owned" if item.owned else item.mode.value
            where = f" in {item.server}" if item.server else ""
            reason = f"the pricebook has no {what} offer for {item.gpu}{where}"
            problems.append(FieldViolation(f"fleet.items[{i}]", reason))
            continue
        instance = max(o.rental_instance_gpus for o in options if o.id in matching)
        if item.mode is not AcquisitionMode.BUY and not item.owned and item.count % instance:
            offer = next(o.offer_id for o in options if o.id in matching)
            reason = (
                f"{item.gpu} {item.mode.value} ({offer}) rents whole {instance}-GPU instances: "
                f"{item.count} is not a multiple of {instance}"
            )
            problems.append(FieldViolation(f"fleet.items[{i}].count", reason))
            continue
        groups[matching] += item.count
    if problems:
        raise InvalidRequest(problems)
    return tuple(FixedGroup(ids, count) for ids, count in groups.items())


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
        )
        for w, busy, quiet in zip(request.inference, busiest, quietest, strict=False)
    ]
    return buckets, demands


def build_instance(request: PlanRequest, book: Pricebook, *, fleet: Fleet | None = None) -> FleetInstance:
    """The MIP's input for ``request`` (on ``fleet`` when given: counts fixed). GPUs are named by
    catalogue id throughout (``solver.resolve`` resolved the request's and the fleet's aliases)."""
    constraints = request.constraints
    if fleet is not None:
        constraints = _fleet_constraints(constraints, fleet)
    options = acquisition_options(book, constraints)
    fixed = _fixed_fleet(fleet, options) if fleet is not None else None
    if fixed is not None:
        options = [o for o in options if any(o.id in g.option_ids for g in fixed)]
    max_tp: dict[str, int] = defaultdict(int)
    for o in options:
        max_tp[o.gpu] = max(max_tp[o.gpu], tp_domain(o))
    gpus = [catalog.gpu(book, g) for g in sorted(max_tp)]
    candidates: list[Candidate] = []
    rejections: list[CandidateRejection] = []
    for w in request.inference:
        found, rejected = inference_candidates(w, resolve_model(w.model, book), gpus, max_tp)
        candidates += found
        rejections += rejected
    buckets, demands = _demands(request, len(candidates))
    training = tuple(training_demand(t, book, gpus) for t in request.training)
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
