"""The optimizer's instance: everything the MIP needs, already priced and measured.

``solver.optimizer.candidates.build_instance`` turns a ``PlanRequest`` and a pricebook into a
``FleetInstance`` (performance model → ``Candidate``; economics → ``AcquisitionOption``); the MIP
(``solver.optimizer.model``) only ever sees this object, which keeps it testable with hand-built
instances and keeps physics out of the model builder.

Demand is grouped into *buckets*: sets of hours of the day in which every workload's request
rate is the same (``buckets_from_rates``). Without any 24-hour profile there is one bucket of 24
hours; with profiles there are at most 24.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pricebook.schema import GpuId
from solver.domain import AcquisitionMode, Precision
from solver.optimizer.caps import Cap
from solver.perf import Bottleneck
from solver.pricing import discounting
from solver.pricing.options import AcquisitionOption
from solver.units import HOURS_PER_DAY


@dataclass(frozen=True, slots=True)
class Bucket:
    """Hours of the day that share one demand pattern across all workloads."""

    index: int
    hours: tuple[int, ...]

    @property
    def hours_per_day(self) -> int:
        return len(self.hours)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One way to serve one inference workload: a deployment and its capacity at the SLA."""

    id: str
    """Readable and unique within the instance, e.g. ``chat/h200-sxm/tp2/fp8``."""
    workload: str
    gpu: GpuId
    tp: int
    precision: Precision
    kv_precision: Precision
    mig_slice: int = 0
    """0 = whole GPUs; n = the replica runs on 1/n of one GPU."""
    capacity_req_s: float = 0.0
    """Largest request rate one replica sustains at the workload's SLA."""
    max_output_tok_s: float = 0.0
    ttft_p95_ms: float = 0.0
    tpot_ms: float = 0.0
    per_user_tok_s: float = 0.0
    concurrency: float = 0.0
    bottleneck: Bottleneck | None = None
    """What limits the replica at the SLA (None on hand-built instances)."""
    band_low: float = 1.0
    band_high: float = 1.0
    load: int = 0
    """Which request size of the workload's length mix this candidate serves (0 without a mix)."""
    pool: str = ""
    """Replica pool whose replicas this candidate shares with the pool's other candidates (other
    workloads on the same model and deployment, other sizes of its mix); "" = its own replicas."""
    rated_req_s: float = 0.0
    """Capacity at the SLA before headroom and the capacity quantile (0 = ``capacity_req_s``)."""
    input_tokens: int = 0
    """Prompt tokens of the request size served (0 on hand-built instances)."""
    output_tokens: int = 0
    pool_shapes: tuple[tuple[int, int, float], ...] = ()
    """(input, output tokens, prefix-cache hit rate) of every load sharing the candidate's
    replicas, its own among them: what its capacity was sized for (``solver.perf.mixed``)."""
    measured_by: tuple[str, ...] = ()
    """The user's measured points that corrected its capacity (``solver.perf.measured``)."""
    measured_note: str = ""
    card_share: float = 1.0
    """< 1: co-located (``solver.optimizer.colocation``): a guest (share ≤ 1/2) gets this share of
    one card beside a host; a host (share > 1/2) gets it of each of its cards, beside a guest."""
    unit: DisaggUnit | None = None
    """A disaggregated deployment (``solver.optimizer.disaggregation``): each "replica" is one unit
    of prefill and decode engines; ``gpu``/``tp`` then describe one decode engine."""

    @property
    def guest(self) -> bool:
        """A co-located replica on a share of a host's card."""
        return self.card_share <= GUEST_SHARE_MAX

    @property
    def host(self) -> bool:
        """Whole cards, each giving a co-located guest its share."""
        return GUEST_SHARE_MAX < self.card_share < 1

    @property
    def gpus_per_replica(self) -> float:
        """GPUs one replica occupies (a fraction for a MIG slice; none for a guest, which sits on a
        host's card; a disaggregated unit's on its decode GPU type, ``gpus_by_type`` for both)."""
        if self.unit is not None:
            return float(self.unit.decode_gpus)
        if self.guest:
            return 0.0
        return 1.0 / self.mig_slice if self.mig_slice else float(self.tp)

    @property
    def gpu_equivalents(self) -> float:
        """GPUs' worth one replica uses (costs, bounds, GPU-hours): its GPUs times its share of
        them — a guest's share of one card, a host's share of each of its cards."""
        if self.unit is not None:
            return float(self.unit.gpus)
        whole = 1.0 / self.mig_slice if self.mig_slice else float(self.tp)
        return whole * self.card_share

    def gpus_by_type(self) -> tuple[tuple[GpuId, float], ...]:
        """(GPU type, GPUs) one replica occupies: one type, or a disaggregated unit's two roles."""
        if self.unit is None:
            return ((self.gpu, self.gpus_per_replica),)
        u = self.unit
        if u.prefill_gpu == u.decode_gpu:
            return ((u.decode_gpu, float(u.gpus)),)
        return ((u.prefill_gpu, float(u.prefill_gpus)), (u.decode_gpu, float(u.decode_gpus)))

    def tp_groups(self) -> tuple[tuple[GpuId, int, int], ...]:
        """(GPU type, group size, groups) of one replica that must each sit in one NVLink/P2P domain
        (none for a MIG slice or a guest)."""
        if self.unit is not None:
            return self.unit.groups()
        if self.mig_slice or self.guest:
            return ()
        return ((self.gpu, self.tp, 1),)

    @property
    def label(self) -> str:
        if self.unit is not None:
            return self.unit.label(self.precision)
        return deployment_label(self.gpu, self.tp, self.precision, self.mig_slice, self.card_share)


@dataclass(frozen=True, slots=True)
class DisaggRole:
    """One role of a disaggregated unit: ``engines`` engines of ``tp × attention_dp`` GPUs each."""

    gpu: GpuId
    tp: int
    ep: int
    attention_dp: int
    engines: int

    @property
    def gpus_per_engine(self) -> int:
        return self.tp * self.attention_dp

    @property
    def gpus(self) -> int:
        return self.gpus_per_engine * self.engines

    def describe(self) -> str:
        return role_label(self.engines, self.gpu, self.tp, self.attention_dp, self.ep)


def role_label(engines: int, gpu: GpuId, tp: int, attention_dp: int, ep: int) -> str:
    """One role of a disaggregated unit in words, e.g. "3× h200-sxm TP4 EP4"."""
    extra = (f" DP{attention_dp}" if attention_dp > 1 else "") + (f" EP{ep}" if ep > 1 else "")
    return f"{engines}× {gpu} TP{tp}{extra}"


@dataclass(frozen=True, slots=True)
class DisaggUnit:
    """A disaggregated deployment's unit: prefill engines, decode engines and the KV link."""

    prefill: DisaggRole
    decode: DisaggRole
    kv_link: str
    """"nvlink" or "pcie" (the whole unit in one server's domain), or "network" (the NICs)."""
    kv_bytes_per_request: float
    nic_gbps: float = 0.0
    """Per-GPU scale-out NIC the KV crosses (0 over NVLink)."""

    @property
    def prefill_gpu(self) -> GpuId:
        return self.prefill.gpu

    @property
    def decode_gpu(self) -> GpuId:
        return self.decode.gpu

    @property
    def prefill_gpus(self) -> int:
        return self.prefill.gpus

    @property
    def decode_gpus(self) -> int:
        return self.decode.gpus

    @property
    def gpus(self) -> int:
        return self.prefill.gpus + self.decode.gpus

    @property
    def networked(self) -> bool:
        """The KV crosses the scale-out fabric between servers."""
        return self.kv_link == "network"

    def groups(self) -> tuple[tuple[GpuId, int, int], ...]:
        """(GPU type, group size, groups): the whole unit in one server's domain when the KV stays
        inside it (NVLink or PCIe), else each engine on its own."""
        if not self.networked:
            return ((self.decode.gpu, self.gpus, 1),)
        return (
            (self.prefill.gpu, self.prefill.gpus_per_engine, self.prefill.engines),
            (self.decode.gpu, self.decode.gpus_per_engine, self.decode.engines),
        )

    def label(self, precision: Precision) -> str:
        return f"prefill {self.prefill.describe()} + decode {self.decode.describe()} {precision.value}"


@dataclass(frozen=True, slots=True)
class CandidateRejection:
    """A deployment that cannot serve a workload, and why (for explanations)."""

    workload: str
    gpu: GpuId
    tp: int
    precision: Precision
    reason: str
    dominated_by: str = ""
    """Set when the deployment works but another on the same GPU is at least as good."""
    mig_slice: int = 0
    """1/m MIG slice of one GPU (0 = whole GPUs, ``tp`` of them)."""
    training: bool = False
    """A training run on ``tp`` GPUs (not a TP group serving a model)."""

    @property
    def label(self) -> str:
        if self.training:
            return f"{self.gpu} ×{self.tp} {self.precision.value}"
        return deployment_label(self.gpu, self.tp, self.precision, self.mig_slice)


GUEST_SHARE_MAX = 0.5
"""A co-located replica with at most this share of a card is the guest; above it, the host."""


def deployment_label(
    gpu: GpuId, tp: int, precision: Precision, mig_slice: int = 0, card_share: float = 1.0
) -> str:
    """A deployment in words, e.g. "h200-sxm TP2 fp8", "h200-sxm MIG 1/7 bf16", or co-located:
    "l40s 1/16 of a card bf16" (a guest) and "l40s TP2 fp8 15/16 of each card" (its host)."""
    if card_share <= GUEST_SHARE_MAX:
        return f"{gpu} {card_fraction(card_share)} of a card {precision.value}"
    where = f"MIG 1/{mig_slice}" if mig_slice else f"TP{tp}"
    shared = f" {card_fraction(card_share)} of each card" if card_share < 1 else ""
    return f"{gpu} {where} {precision.value}{shared}"


def card_fraction(share: float) -> str:
    """A share of a card as a fraction with a power-of-two denominator ("1/16", "15/16")."""
    denominator = 1
    while abs(share * denominator - round(share * denominator)) > 1e-9 and denominator < 1024:
        denominator *= 2
    return f"{round(share * denominator)}/{denominator}"


@dataclass(frozen=True, slots=True)
class InferenceDemand:
    name: str
    rate_req_s: tuple[float, ...]
    """Request rate to serve in each bucket (index = ``Bucket.index``)."""
    redundancy: int = 0
    """Spare replicas: demand stays covered after losing this many of the largest replicas."""
    tokens_per_request: float = 1
    hourly_rate_req_s: tuple[float, ...] = ()
    """Request rate in each of the 24 hours (the evaluator checks every hour); empty = the
    bucket rates are exact."""
    quietest_rate_req_s: tuple[float, ...] = ()
    """The smallest hourly rate in each bucket (empty = the same as ``rate_req_s``: hours grouped
    exactly). Serving only these is a relaxation of the request: a bound, never a plan."""
    mix: tuple[float, ...] = ()
    """Share of the requests of each size of the length mix (``Candidate.load`` indexes it;
    empty = one size, share 1)."""
    deadline_hours: int | None = None
    """Batch work that may wait: every request done within this many hours of arriving (model
    constraint 1'); None = served in every bucket as it arrives."""

    @property
    def peak_req_s(self) -> float:
        return max(self.rate_req_s)

    @property
    def peak_served_req_s(self) -> float:
        """The most one hour may serve: the peak arrival rate, or with a batch window the day's
        arrivals (a repeating day serves what arrives, so no hour serves more)."""
        if self.deadline_hours is None:
            return self.peak_req_s
        return sum(self.hourly_rate_req_s) if self.hourly_rate_req_s else self.peak_req_s * HOURS_PER_DAY

    @property
    def loads(self) -> tuple[float, ...]:
        """The share of each request size (``(1.0,)`` without a length mix)."""
        return self.mix or (1.0,)


MIN_TRAINING_GPU_HOURS = 0.01
"""GPU-hours a month a training workload reserves in idle hours at least (36 GPU-seconds): a need
below the solver's feasibility tolerance (a 1-token run: 1.7e-6 GPU-hours) would otherwise fit
into zero idle hours and fail the evaluator's check (the model's constraint 11)."""


@dataclass(frozen=True, slots=True)
class TrainingChoice:
    """Running one training workload on one GPU type."""

    gpu: GpuId
    gpu_hours_per_month: float
    """GPU-hours of this GPU type the workload needs every month (all its runs)."""
    min_gpus: int
    """GPUs of this type needed at once: to fit the model, and to finish a run by its deadline."""
    hours_per_run: float = 0.0
    """Wall-clock hours of one run on ``min_gpus`` GPUs (for the explanation)."""


@dataclass(frozen=True, slots=True)
class TrainingDemand:
    name: str
    choices: tuple[TrainingChoice, ...]
    rejections: tuple[CandidateRejection, ...] = ()


@dataclass(frozen=True, slots=True)
class Caps:
    capex_budget: float | None = None
    monthly_opex_cap: float | None = None
    power_cap_kw: float | None = None
    rack_units_cap: float | None = None

    def limit(self, cap: Cap) -> float | None:
        """The value set for ``cap`` (None = no such cap)."""
        return {
            Cap.CAPEX_BUDGET: self.capex_budget,
            Cap.MONTHLY_OPEX: self.monthly_opex_cap,
            Cap.POWER_KW: self.power_cap_kw,
            Cap.RACK_UNITS: self.rack_units_cap,
        }[cap]

    def present(self) -> tuple[Cap, ...]:
        """The caps set, in ``Cap`` order."""
        return tuple(cap for cap in Cap if self.limit(cap) is not None)


@dataclass(frozen=True, slots=True)
class CountLimit:
    gpu: GpuId
    min_count: int = 0
    max_count: int | None = None


@dataclass(frozen=True, slots=True)
class FixedGroup:
    """GPUs of a given fleet (EvaluateFleet) that the MIP places among some options: one line of
    the fleet, or all its lines of one GPU type and mode when they name no server model (the
    cheapest valid packing is then the MIP's to choose)."""

    option_ids: tuple[str, ...]
    count: int
    """Held GPUs (bought, reserved, owned) exactly; on-demand GPUs at most, in every hour."""
    at_least: bool = False
    """Held GPUs at least ``count`` and on-demand GPUs freely: a fleet that may only grow (the
    cheapest addition to a plan's fleet, ``solver.analysis.headroom``)."""


@dataclass(frozen=True, slots=True)
class FleetInstance:
    """A priced, measured planning problem (see the module docstring)."""

    currency: str
    horizon_months: int
    buckets: tuple[Bucket, ...]
    options: tuple[AcquisitionOption, ...]
    inference: tuple[InferenceDemand, ...]
    candidates: tuple[Candidate, ...]
    training: tuple[TrainingDemand, ...] = ()
    rejections: tuple[CandidateRejection, ...] = ()
    caps: Caps = Caps()
    count_limits: tuple[CountLimit, ...] = ()
    owned_counts: Mapping[GpuId, int] = field(default_factory=dict)
    """GPUs already owned per type; options with ``owned=True`` must hold exactly these."""
    fixed_fleet: tuple[FixedGroup, ...] | None = None
    """EvaluateFleet: the caller's fleet (options in no group = 0 GPUs); None = plan freely."""
    extra_capex: float = 0.0
    """Up-front cost that does not depend on the fleet (the request's storage bought per TB)."""
    extra_monthly: float = 0.0
    """Monthly cost that does not depend on the fleet (the request's storage per TB-month)."""
    static_deployment: bool = False
    """Replicas on held GPUs stay the same all day (``solver.optimizer.static``)."""
    discount_rate: float = 0.0
    """Annual rate the objective discounts cash at (``objective: npv``; 0 = the nominal TCO)."""

    @property
    def opex_weight(self) -> float:
        """What 1 a month over the horizon weighs in the objective (the horizon's months at rate 0;
        ``solver.pricing.discounting.opex_month_weight``)."""
        return discounting.opex_month_weight(self.discount_rate, self.horizon_months)

    @property
    def residual_weight(self) -> float:
        """What 1 of market value credited at the horizon weighs in the objective (1 at rate 0)."""
        return discounting.residual_weight(self.discount_rate, self.horizon_months)

    def fixed_count_of(self, option_id: str) -> int | None:
        """The fixed fleet's GPUs among the options of ``option_id``'s group (None = not fixed, or
        a group that may grow)."""
        if self.fixed_fleet is None:
            return None
        group = next((g for g in self.fixed_fleet if option_id in g.option_ids), None)
        if group is None:
            return 0
        return None if group.at_least else group.count

    def fixed_gpu_bound(self, gpu: GpuId, free_bound: int) -> int:
        """GPUs of ``gpu`` a plan on the fixed fleet may hold: the fleet's own, plus ``free_bound``
        (what the demand could need) when one of its groups may grow."""
        groups = [g for g in self.fixed_fleet or () if any(self.option(o).gpu == gpu for o in g.option_ids)]
        return sum(g.count for g in groups) + (free_bound if any(g.at_least for g in groups) else 0)

    def candidates_of(self, workload: str) -> tuple[Candidate, ...]:
        return tuple(c for c in self.candidates if c.workload == workload)

    def rejections_of(self, workload: str) -> tuple[CandidateRejection, ...]:
        return tuple(r for r in self.rejections if r.workload == workload)

    def option(self, option_id: str) -> AcquisitionOption:
        for opt in self.options:
            if opt.id == option_id:
                return opt
        raise KeyError(option_id)

    def gpu_types(self) -> tuple[GpuId, ...]:
        return tuple(sorted({o.gpu for o in self.options}))

    @property
    def hours_clustered(self) -> bool:
        """Hours with different demand share a bucket (served at its busiest hour)."""
        return any(w.quietest_rate_req_s and w.quietest_rate_req_s != w.rate_req_s for w in self.inference)

    def at_quietest_hours(self) -> FleetInstance:
        """The relaxation that serves each bucket's quietest hour only (its optimum is a lower
        bound of the request's; for clustered hours)."""
        inference = tuple(
            dataclasses.replace(w, rate_req_s=w.quietest_rate_req_s or w.rate_req_s, quietest_rate_req_s=())
            for w in self.inference
        )
        return dataclasses.replace(self, inference=inference)


@dataclass(frozen=True, slots=True)
class ReplicaPool:
    """Candidates sharing integer replicas of one deployment (model constraint 13)."""

    id: str
    members: tuple[Candidate, ...]
    spares: int = 0
    """Spare replicas the pool keeps idle: its members' largest N+R (0 for a one-member pool,
    whose member's spares are constraint 10's)."""

    @property
    def shared(self) -> bool:
        """More than one load shares the replicas (else the member's replicas are the pool's)."""
        return len(self.members) > 1

    @property
    def deployment(self) -> Candidate:
        """A member standing for the pool's GPU, TP, precision and MIG slice."""
        return self.members[0]


def replica_pools(
    candidates: Sequence[Candidate], demands: Sequence[InferenceDemand]
) -> tuple[ReplicaPool, ...]:
    """``candidates`` grouped into pools by ``Candidate.pool`` (a candidate without one is a pool
    of its own), in candidate order; a pool's spares are its members' largest redundancy."""
    redundancy = {w.name: w.redundancy for w in demands}
    grouped: dict[str, list[Candidate]] = {}
    for c in candidates:
        grouped.setdefault(c.pool or f"~{c.id}", []).append(c)
    pools = []
    for pool_id, members in grouped.items():
        spares = max(redundancy.get(c.workload, 0) for c in members) if len(members) > 1 else 0
        pools.append(ReplicaPool(pool_id, tuple(members), spares))
    return tuple(pools)


def is_rental_on_demand(option: AcquisitionOption) -> bool:
    return option.mode is AcquisitionMode.ON_DEMAND


def is_on_site(option: AcquisitionOption) -> bool:
    """Bought or already-owned hardware draws site power and fills racks; rentals do not."""
    return option.mode is AcquisitionMode.BUY or option.owned


def owned_host_of(
    option: AcquisitionOption, options: Sequence[AcquisitionOption]
) -> AcquisitionOption | None:
    """The owned option whose servers a bought option's GPUs may share: the same GPU type and
    server model, the bought GPUs not sold as whole baseboards. Owned GPUs come with the hosts they
    sit in, so free slots of an owned host take bought cards without a new host."""
    if option.owned or option.mode is not AcquisitionMode.BUY or option.server_must_be_full:
        return None
    if option.server_id is None:
        return None
    return next(
        (o for o in options if o.owned and o.gpu == option.gpu and o.server_id == option.server_id), None
    )


def rented_for_run(option: AcquisitionOption, run_gpus: int) -> int:
    """GPUs a training run on ``run_gpus`` GPUs holds on ``option``: on demand, whole instances
    (a 1-GPU run on an 8-GPU instance offer rents all 8 for the run); held GPUs as they are."""
    if not is_rental_on_demand(option):
        return run_gpus
    unit = max(1, option.rental_instance_gpus)
    return math.ceil(run_gpus / unit) * unit


def billed_training_hours(option: AcquisitionOption, gpu_hours: float, run_gpus: int) -> float:
    """GPU-hours paid for training that needs ``gpu_hours`` on ``run_gpus`` GPUs at once: on
    demand, every rented GPU of the run's instances for the run's hours."""
    if run_gpus <= 0:
        return gpu_hours
    return gpu_hours * rented_for_run(option, run_gpus) / run_gpus


def tp_domain(option: AcquisitionOption) -> int:
    """Largest TP group one option can host inside a single NVLink/P2P domain of one server."""
    return max(1, min(option.scale_up_domain_size, option.gpus_per_server))


EXACT_BUCKET_REPLICA_VARIABLES = 32_000
"""Largest model (candidates × buckets) for which hours are grouped exactly (only equal hours
merged). Measured at 20 s on the benchmark portfolios (docs/optimizer.md): 20 workloads × 24
exact buckets (13,536 variables) found a plan 7 % cheaper than six clustered buckets, within
0.8 % of the exact bound; at 50 workloads (30,888) the exact plan was 0.1 % dearer than the
clustered one but proven within 7.4 % of the request's optimum (the clustered plan's honest bound
is 21 % away); at 100 workloads (64,000) the exact model's plan was 25 % dearer."""
CLUSTERED_BUCKETS = 6
"""Buckets when hours must be clustered (larger portfolios)."""


def buckets_from_rates(
    hourly_rates: Sequence[Sequence[float]], max_buckets: int = HOURS_PER_DAY
) -> tuple[tuple[Bucket, ...], list[list[float]], list[list[float]]]:
    """Group the 24 hours into demand buckets.

    ``hourly_rates[w][h]`` is workload w's request rate in hour h. Hours with the same rate for
    every workload need the same fleet, so merging them is exact. When that leaves more than
    ``max_buckets`` groups, hours are sorted by their total demand relative to each workload's
    peak and cut into ``max_buckets`` runs of (nearly) equal length; each bucket is served at its
    *busiest* hour's rate (the plan covers every hour, a conservative upper bound) and also
    carries its *quietest* hour's rate, from which the optimizer proves how far the plan can be
    from the request's true optimum (``solver.optimizer.api``). Returns the buckets (first hour
    order) and, per workload, the busiest and the quietest rate in each bucket (equal when exact).
    """
    groups: dict[tuple[float, ...], list[int]] = {}
    for hour in range(HOURS_PER_DAY):
        key = tuple(rates[hour] for rates in hourly_rates)
        groups.setdefault(key, []).append(hour)
    if len(groups) <= max_buckets:
        hour_groups = list(groups.values())
    else:
        peaks = [max(rates) or 1.0 for rates in hourly_rates]

        def load(hour: int) -> float:
            return sum(rates[hour] / peak for rates, peak in zip(hourly_rates, peaks, strict=True))

        order = sorted(range(HOURS_PER_DAY), key=lambda h: (load(h), h))
        size = HOURS_PER_DAY
        hour_groups = [
            sorted(order[i * size // max_buckets : (i + 1) * size // max_buckets]) for i in range(max_buckets)
        ]
        hour_groups.sort(key=lambda hours: hours[0])
    buckets = tuple(Bucket(index=i, hours=tuple(hours)) for i, hours in enumerate(hour_groups))
    busiest = [[max(rates[h] for h in b.hours) for b in buckets] for rates in hourly_rates]
    quietest = [[min(rates[h] for h in b.hours) for b in buckets] for rates in hourly_rates]
    return buckets, busiest, quietest
