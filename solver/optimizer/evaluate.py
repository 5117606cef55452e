"""Independent evaluator: re-check a plan against every constraint, without the MIP's code.

Nothing here reuses the model builder. Capacities are recomputed through ``capacity_of``: in
production ``perf_capacity_checker``, which runs the performance model afresh for each deployment
(not through the cache the candidate builder filled, so a wrong capacity in a candidate is caught).
TP groups are packed into concrete servers and NVLink/P2P domains (best-fit decreasing), and caps
are recomputed from the option prices and the counts. One function checks one family of
constraints (numbered as in ``solver.optimizer.model``); ``check_solution`` lists every violation
in that order. ``solve`` never returns a plan with a violation.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from pricebook.schema import Pricebook
from solver.domain import AcquisitionMode, PlanRequest
from solver.optimizer.batch_window import hour_buckets, hourly_arrivals, window_misses
from solver.optimizer.cancel import checkpoint
from solver.optimizer.caps import Cap
from solver.optimizer.colocation import check_shared_cards
from solver.optimizer.disaggregation import check_disaggregation
from solver.optimizer.instance import Candidate, FleetInstance, InferenceDemand, owned_host_of
from solver.optimizer.pool_timing import PerfCapacity, pool_loads, pool_verdicts
from solver.optimizer.results import (
    Assignment,
    ChosenOption,
    DeploymentUse,
    FleetSolution,
    Violation,
    ViolationKind,
)
from solver.optimizer.static import is_static
from solver.pricing.options import AcquisitionOption
from solver.units import DAYS_PER_MONTH

CapacityOf = Callable[[Candidate], float]
"""Request rate one replica of this deployment sustains at its workload's SLA (0 = infeasible)."""

REL_TOL = 1e-6
IDLE_TOL_GPU_HOURS = 1e-6 * DAYS_PER_MONTH * 24
"""Training's idle hours are checked to a millionth of a GPU held all month (2.6 GPU-seconds): the
solver's feasibility tolerance on the MIP's row, which counts GPUs (model constraint 11)."""


def _stated_capacity(candidate: Candidate) -> float:
    return candidate.capacity_req_s


def perf_capacity_checker(request: PlanRequest, book: Pricebook) -> PerfCapacity:
    """The evaluator's capacity source: the performance model run afresh for each deployment of
    ``request``, for the candidate's request size at its family's SLA, scaled by the target
    utilization and quantile (``solver.optimizer.pooling`` defines how a pool is sized); with it,
    pools are checked by the sharing rule of ``solver.optimizer.pool_timing``."""
    return PerfCapacity(request, book)


@dataclass(frozen=True, slots=True)
class _Fleet:
    """What the plan holds and runs, computed once for the checks that need it."""

    options: dict[str, AcquisitionOption]
    """The instance's options by id."""
    replica_gpus: dict[str, list[Counter[float]]]
    """Per GPU type and bucket: replicas by the GPUs each occupies (GPUs per replica → replicas).
    Counted, not listed: an absurd plan of 10^9 replicas must not take 10^9 list entries."""
    held: dict[str, int]
    """Per GPU type: GPUs held every hour (bought, reserved, owned; options on offer only)."""


def _fleet(instance: FleetInstance, solution: FleetSolution) -> _Fleet:
    nb = len(instance.buckets)
    options = {o.id: o for o in instance.options}
    demands = {w.name for w in instance.inference}
    replica_gpus: dict[str, list[Counter[float]]] = defaultdict(lambda: [Counter() for _ in range(nb)])
    for a in solution.assignments:
        if a.workload not in demands:
            continue
        for use in a.uses:
            if use.candidate.guest:
                continue  # on a host's card (``colocation.check_shared_cards``)
            for b in range(nb):
                for g, size, count in _packed(use.candidate) if use.replicas[b] else ():
                    replica_gpus[g][b][size] += count * use.replicas[b]
    for pool in solution.pools:
        for b in range(nb):
            if pool.replicas[b]:
                replica_gpus[pool.deployment.gpu][b][pool.deployment.gpus_per_replica] += pool.replicas[b]
    held: dict[str, int] = defaultdict(int)
    for c in solution.options:
        o = options.get(c.option_id)
        if o is not None and o.mode is not AcquisitionMode.ON_DEMAND:
            held[o.gpu] += c.gpus
    return _Fleet(options=options, replica_gpus=dict(replica_gpus), held=dict(held))


def _packed(c: Candidate) -> tuple[tuple[str, float, int], ...]:
    """(GPU type, GPUs of one item to pack into a domain, items) of one replica: itself, or a
    disaggregated unit's engines (or the whole unit when its KV stays in one server)."""
    if c.unit is not None:
        return tuple((g, float(size), count) for g, size, count in c.unit.groups())
    return ((c.gpu, c.gpus_per_replica, 1),)


def check_solution(
    instance: FleetInstance, solution: FleetSolution, capacity_of: CapacityOf | None = None
) -> list[Violation]:
    """Every violated constraint of ``solution`` (empty = the plan is valid)."""
    capacity = capacity_of or _stated_capacity
    fleet = _fleet(instance, solution)
    return [
        *check_demand(instance, solution, capacity),
        *check_pools(instance, solution, capacity),
        *check_gpus_and_domains(instance, solution, fleet),
        *check_servers(instance, solution, fleet),
        *check_caps(instance, solution, fleet),
        *check_counts(instance, solution, fleet),
        *check_training(instance, solution, fleet),
        *check_static(instance, solution, fleet),
        *check_shared_cards(
            instance, solution, capacity_of.specs if isinstance(capacity_of, PerfCapacity) else None
        ),
        *check_disaggregation(instance, solution),
    ]


# 1 and 10: demand at the SLA in every bucket (every hour), N+R spares, recomputed capacities
def check_demand(instance: FleetInstance, solution: FleetSolution, capacity: CapacityOf) -> list[Violation]:
    demands = {w.name: w for w in instance.inference}
    out: list[Violation] = []
    for a in solution.assignments:
        checkpoint()  # capacities are recomputed afresh: ~10 ms a workload
        w = demands.get(a.workload)
        if w is None:
            out.append(Violation(ViolationKind.DEMAND, a.workload, "assignment for an unknown workload"))
            continue
        caps = [_checked_capacity(a.workload, use.candidate, capacity, out) for use in a.uses]
        out += _demand_shortfalls(instance, w, a, caps)
    assigned = {a.workload for a in solution.assignments}
    out += [
        Violation(ViolationKind.DEMAND, w.name, "workload has no assignment")
        for w in instance.inference
        if w.name not in assigned and w.peak_req_s > 0
    ]
    return out


def _checked_capacity(workload: str, cand: Candidate, capacity: CapacityOf, out: list[Violation]) -> float:
    """The deployment's recomputed capacity; a violation in ``out`` when it belongs to another
    workload, cannot meet the SLA, or was stated higher than the model gives."""
    if cand.workload != workload:
        out.append(
            Violation(ViolationKind.DEMAND, workload, f"deployment {cand.id} belongs to {cand.workload}")
        )
    cap = capacity(cand)
    if cap <= 0:
        out.append(
            Violation(ViolationKind.CAPACITY, cand.id, "deployment cannot meet the SLA (performance model)")
        )
    elif cap < cand.capacity_req_s * (1 - 1e-4):
        out.append(
            Violation(
                ViolationKind.CAPACITY,
                cand.id,
                f"stated {cand.capacity_req_s:.6g} req/s, model gives {cap:.6g}",
            )
        )
    return cap


def _demand_shortfalls(
    instance: FleetInstance, w: InferenceDemand, a: Assignment, caps: list[float]
) -> list[Violation]:
    """Each request size of ``w`` served in every bucket: own replicas at their recomputed
    capacity, pool shares at the rate the plan states they carry (``check_pools`` checks the pool
    holds that rate at recomputed capacities)."""
    if w.deadline_hours is not None:
        return _window_shortfalls(instance, w, a, caps)
    out = []
    mixed = len(w.loads) > 1
    for b, bucket in enumerate(instance.buckets):
        # Every hour of the bucket when the hourly rates are known (clustered buckets).
        hourly = w.hourly_rate_req_s
        rate = max(hourly[h] for h in bucket.hours) if hourly else w.rate_req_s[b]
        for k, share in enumerate(w.loads):
            lam = rate * share
            if lam <= 0:
                continue
            uses = [(cap, u) for cap, u in zip(caps, a.uses, strict=True) if u.candidate.load == k]
            total = sum(_served(cap, u, b) for cap, u in uses)
            spare = max((cap for cap, u in uses if any(u.replicas)), default=0.0)
            need = lam + w.redundancy * spare
            if total < need * (1 - REL_TOL):
                size = f" size {k}" if mixed else ""
                out.append(
                    Violation(
                        ViolationKind.DEMAND,
                        a.workload,
                        f"bucket {b}{size}: capacity {total:.6g} req/s < needed {need:.6g} "
                        f"(demand {lam:.6g}, N+{w.redundancy})",
                    )
                )
    return out


def _window_shortfalls(
    instance: FleetInstance, w: InferenceDemand, a: Assignment, caps: list[float]
) -> list[Violation]:
    """Batch work with a window: each request size's queue, served by its hourly capacity, done
    within the window (``batch_window.window_misses``, a simulation, not the MIP's rows)."""
    out = []
    hours = hour_buckets(instance.buckets)
    arrivals = hourly_arrivals(w, instance.buckets)
    for k, share in enumerate(w.loads):
        uses = [(cap, u) for cap, u in zip(caps, a.uses, strict=True) if u.candidate.load == k]
        served = [sum(_served(cap, u, b) for cap, u in uses) for b in range(len(instance.buckets))]
        miss = window_misses(
            w.deadline_hours or 1, [served[b] for b in hours], [rate * share for rate in arrivals]
        )
        if miss:
            size = f" size {k}" if len(w.loads) > 1 else ""
            out.append(Violation(ViolationKind.DEMAND, a.workload, f"{size.strip() or 'batch'}: {miss}"))
    return out


def _served(capacity: float, use: DeploymentUse, b: int) -> float:
    """Request rate a use serves in bucket ``b``: own replicas × capacity, plus its pool share
    (replica-equivalents × the capacity the plan states)."""
    pooled = use.shared_load[b] * use.candidate.capacity_req_s if use.shared_load else 0.0
    return capacity * use.replicas[b] + pooled


# 13: shared pools hold what their members carry at the SLA (the sharing rule), and their spares
def check_pools(instance: FleetInstance, solution: FleetSolution, capacity: CapacityOf) -> list[Violation]:
    """With the performance model (``PerfCapacity``) a pool is checked by the sharing rule of
    ``solver.optimizer.pool_timing`` (the mixed batch's timing); without it (hand-built
    instances) by the linear rule at the capacities ``capacity`` gives."""
    pools = {p.id: p for p in solution.pools}
    out = [
        Violation(ViolationKind.GPUS, use.candidate.id, "pool share without a pool")
        for a in solution.assignments
        for use in a.uses
        if use.pooled and use.candidate.pool not in pools
    ]
    if isinstance(capacity, PerfCapacity):
        return out + [
            Violation(
                ViolationKind.GPUS,
                v.pool,
                f"bucket {v.bucket}: {v.replicas} serving replica(s) miss the SLA ({v.miss}); "
                f"the mix meets it at {v.scale:.1%} of its load",
            )
            for v in pool_verdicts(solution, capacity)
            if v.miss
        ]
    load: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(instance.buckets))
    for pool_id, carried in pool_loads(solution).items():
        for b, loads in enumerate(carried):
            for candidate, rate in loads:
                cap = capacity(candidate)
                load[pool_id][b] += rate / cap if cap > 0 else math.inf
    for pool_id, per_b in load.items():
        pool = pools.get(pool_id)
        if pool is None:
            continue
        for b, used in enumerate(per_b):
            held = pool.replicas[b]
            need = used + (pool.spares if held > 0 else 0)
            if need > held * (1 + REL_TOL) + 1e-6:
                out.append(
                    Violation(
                        ViolationKind.GPUS,
                        pool_id,
                        f"bucket {b}: members need {used:.6g} replicas + {pool.spares} spare, "
                        f"pool has {held}",
                    )
                )
    return out


# 2 and 3: every replica's GPUs packed into concrete domains, per GPU type and bucket
def check_gpus_and_domains(
    instance: FleetInstance, solution: FleetSolution, fleet: _Fleet
) -> list[Violation]:
    out = []
    for g in sorted({o.gpu for o in instance.options} | set(fleet.replica_gpus)):
        for b in range(len(instance.buckets)):
            bins = _domains_of(g, b, solution, fleet)
            items = fleet.replica_gpus[g][b] if g in fleet.replica_gpus else Counter()
            if items and not _pack(items, _with_tolerance(bins, items)):
                out.append(
                    Violation(
                        ViolationKind.GPUS,
                        f"{g}/bucket {b}",
                        f"replicas need {_gpus(items):g} GPUs in groups {_sizes(items)}; "
                        f"domains available {_sizes(bins)}",
                    )
                )
    return out


def _with_tolerance(bins: Counter[float], items: Counter[float]) -> Counter[float]:
    """``bins`` plus the relative tolerance every other check allows (``REL_TOL`` of the GPUs
    needed), as domains of the largest replica: none below 10^6 GPUs, where packing stays exact;
    above, the MIP's own feasibility tolerance is worth a GPU or more (a 10^9 req/s workload)."""
    slack = math.floor(REL_TOL * _gpus(items))
    if slack < 1:
        return bins
    largest = max(items)
    return bins + Counter({largest: math.ceil(slack / largest)})


def _gpus(counted: Counter[float]) -> float:
    """GPUs of counted replicas or domains (size → how many)."""
    return sum(size * n for size, n in counted.items())


def _sizes(counted: Counter[float]) -> str:
    """``counted`` (size → how many) for a message, largest first: "3 × 8, 1 × 2"."""
    return ", ".join(f"{n:,} × {size:g}" for size, n in sorted(counted.items(), reverse=True)) or "none"


def _domains_of(gpu: str, b: int, solution: FleetSolution, fleet: _Fleet) -> Counter[float]:
    """The scale-up domains the plan's ``gpu`` GPUs form in bucket ``b`` (size → how many)."""
    return _option_domains(gpu, solution, fleet, None) + _option_domains(gpu, solution, fleet, b)


# 4 and 9: options on offer, whole servers
def check_servers(instance: FleetInstance, solution: FleetSolution, fleet: _Fleet) -> list[Violation]:
    out = []
    chosen = {c.option_id: c for c in solution.options}
    for c in solution.options:
        o = fleet.options.get(c.option_id)
        if o is None:
            out.append(Violation(ViolationKind.COUNT, c.option_id, "option not offered"))
            continue
        if o.mode is AcquisitionMode.BUY or o.owned:
            problem = _server_problem(o, c, fleet, chosen)
            if problem:
                out.append(Violation(ViolationKind.SERVERS, c.option_id, problem))
        counts = (*c.on_demand_gpus, c.training_gpus) if o.mode is AcquisitionMode.ON_DEMAND else (c.gpus,)
        k = o.rental_instance_gpus
        if not (o.mode is AcquisitionMode.BUY or o.owned) and any(n % k for n in counts):
            out.append(
                Violation(
                    ViolationKind.SERVERS,
                    c.option_id,
                    f"rents {list(counts)} GPUs, not whole instances of {k}",
                )
            )
    return out


def _server_problem(
    o: AcquisitionOption, c: ChosenOption, fleet: _Fleet, chosen: dict[str, ChosenOption]
) -> str:
    """Why ``c``'s GPUs do not fit its servers ("" when they do)."""
    k = max(1, o.gpus_per_server)
    gpus, slots = c.gpus, k * c.servers
    host = owned_host_of(o, list(fleet.options.values()))
    if host is not None and host.id in chosen:
        gpus += chosen[host.id].gpus
        slots += k * chosen[host.id].servers
    if o.owned and c.gpus < k * c.servers - (k - 1):
        return f"{c.gpus} owned GPUs spread over {c.servers} owned servers of {k}"
    if (o.server_must_be_full and not o.owned and c.gpus != slots) or gpus > slots:
        return f"{gpus} GPUs in {slots // k} servers of {k}"
    return ""


# 5–8: caps, recomputed from the option prices and the counts
def check_caps(instance: FleetInstance, solution: FleetSolution, fleet: _Fleet) -> list[Violation]:
    used = dict.fromkeys(Cap, 0.0)
    used[Cap.CAPEX_BUDGET] = instance.extra_capex
    used[Cap.MONTHLY_OPEX] = instance.extra_monthly
    for c in solution.options:
        o = fleet.options.get(c.option_id)
        if o is None:
            continue
        used[Cap.CAPEX_BUDGET] += o.capex(c.gpus, c.servers)
        used[Cap.MONTHLY_OPEX] += o.fixed_monthly_per_gpu * c.gpus + o.monthly_per_server * c.servers
        used[Cap.MONTHLY_OPEX] += o.busy_hourly_per_gpu * c.busy_gpu_hours_per_month
        if o.mode is AcquisitionMode.BUY or o.owned:
            used[Cap.POWER_KW] += o.power_kw_per_gpu * c.gpus + o.power_kw_per_server * c.servers
            used[Cap.RACK_UNITS] += o.rack_units_per_server * c.servers
    out = []
    for cap in Cap:
        limit = instance.caps.limit(cap)
        if limit is not None and used[cap] > limit * (1 + REL_TOL) + 1e-9:
            out.append(Violation(ViolationKind.CAP, cap.words, f"uses {used[cap]:.6g} > cap {limit:.6g}"))
    return out


def caps_hold(instance: FleetInstance, solution: FleetSolution) -> bool:
    """Whether ``solution``'s fleet keeps the caps of ``instance`` (a plan of another instance of
    the same request, e.g. at other prices)."""
    return not check_caps(instance, solution, _fleet(instance, solution))


# 9: owned GPUs, count bounds, fixed fleets
def check_counts(instance: FleetInstance, solution: FleetSolution, fleet: _Fleet) -> list[Violation]:
    out = []
    nb = len(instance.buckets)
    for g, owned in instance.owned_counts.items():
        have = sum(c.gpus for c in solution.options if c.gpu == g and c.owned)
        if have > owned:
            out.append(Violation(ViolationKind.COUNT, g, f"{have} owned GPUs in the plan, {owned} owned"))
    for cl in instance.count_limits:
        held = fleet.held.get(cl.gpu, 0)
        peak = max((held + _rented(solution, cl.gpu, b) for b in range(nb)), default=held)
        if peak < cl.min_count:  # GPUs of every mode count, at the busiest hour
            out.append(Violation(ViolationKind.COUNT, cl.gpu, f"{peak} GPUs < minimum {cl.min_count}"))
        if cl.max_count is not None and peak > cl.max_count:
            out.append(Violation(ViolationKind.COUNT, cl.gpu, f"{peak} GPUs > maximum {cl.max_count}"))
    for i, group in enumerate(instance.fixed_fleet or ()):
        chosen = [c for c in solution.options if c.option_id in group.option_ids]
        held = sum(c.gpus for c in chosen)
        rented = [sum(c.on_demand_gpus[b] for c in chosen if c.on_demand_gpus) for b in range(nb)]
        is_held = any(fleet.options[o_id].mode is not AcquisitionMode.ON_DEMAND for o_id in group.option_ids)
        if group.at_least:
            if is_held and held < group.count:
                why = f"plan holds {held} of at least {group.count}"
                out.append(Violation(ViolationKind.COUNT, f"fleet line {i}", why))
            continue
        if (is_held and held != group.count) or max(rented, default=0) > group.count:
            used = held or max(rented)
            why = f"plan uses {used} of {group.count}"
            out.append(Violation(ViolationKind.COUNT, f"fleet line {i}", why))
    return out


def _rented(solution: FleetSolution, gpu: str, b: int) -> int:
    """On-demand GPUs of type ``gpu`` the plan rents in bucket ``b``."""
    return sum(c.on_demand_gpus[b] for c in solution.options if c.gpu == gpu and c.on_demand_gpus)


# 11: training on a GPU type it fits on, enough GPUs for the deadline, GPU-hours in idle time
def check_training(instance: FleetInstance, solution: FleetSolution, fleet: _Fleet) -> list[Violation]:
    out = []
    need: dict[str, float] = defaultdict(float)
    allocs = {t.workload: t for t in solution.training}
    for t in instance.training:
        alloc = allocs.get(t.name)
        if alloc is None:
            out.append(Violation(ViolationKind.TRAINING, t.name, "training workload has no allocation"))
            continue
        choice = next((ch for ch in t.choices if ch.gpu == alloc.gpu), None)
        if choice is None:
            out.append(
                Violation(ViolationKind.TRAINING, t.name, f"{alloc.gpu} is not a GPU this training fits on")
            )
            continue
        held = fleet.held.get(alloc.gpu, 0)
        held_part = choice.gpu_hours_per_month - alloc.on_demand_gpu_hours_per_month
        # Runs on held GPUs need all of a run's GPUs at once; only fully rented runs need none.
        if held_part > 1e-6 and held < choice.min_gpus:
            out.append(
                Violation(
                    ViolationKind.TRAINING,
                    t.name,
                    f"needs {choice.min_gpus} {alloc.gpu} at once for its deadline, fleet holds {held}",
                )
            )
        if held_part > 1e-6:
            need[alloc.gpu] += held_part
    serving = _serving_hours_on_held(instance, solution, fleet)
    for g, hours in need.items():
        idle = DAYS_PER_MONTH * 24 * fleet.held.get(g, 0) - serving.get(g, 0.0)
        if hours > idle * (1 + REL_TOL) + IDLE_TOL_GPU_HOURS:
            out.append(
                Violation(
                    ViolationKind.TRAINING, g, f"training needs {hours:.6g} GPU-hours/month, idle {idle:.6g}"
                )
            )
    return out


def _serving_hours_on_held(
    instance: FleetInstance, solution: FleetSolution, fleet: _Fleet
) -> dict[str, float]:
    """GPU-hours a month that serving takes on held GPUs (what on-demand rentals do not carry)."""
    hours: dict[str, float] = defaultdict(float)
    for g, per_b in fleet.replica_gpus.items():
        for b, bucket in enumerate(instance.buckets):
            on_held = max(0.0, _gpus(per_b[b]) - _rented(solution, g, b))
            hours[g] += DAYS_PER_MONTH * bucket.hours_per_day * on_held
    return hours


def _domains(gpus: int, per_server: int, domain: int) -> Counter[float]:
    """The scale-up domains ``gpus`` GPUs fill, servers filled one after another (size → how
    many): each full server splits into domains of ``domain`` and one of what is left, and so does
    the last, partly filled server."""
    sizes: Counter[float] = Counter()

    def server(gpus_in_it: int, servers: int) -> None:
        whole, rest = divmod(gpus_in_it, domain)
        if whole:
            sizes[float(domain)] += whole * servers
        if rest:
            sizes[float(rest)] += servers

    full_servers, last = divmod(max(0, gpus), per_server)
    if full_servers:
        server(per_server, full_servers)
    if last:
        server(last, 1)
    return sizes


def _pack(items: Counter[float], bins: Counter[float]) -> bool:
    """Can every item (GPUs of one replica) go inside one bin (a scale-up domain)?

    Largest items first, each into the fullest bins that still hold it (best fit), counted by
    size so that 10^5 replicas stay fast. Exact for power-of-two groups in power-of-two domains.
    """
    rooms: Counter[float] = Counter(bins)
    for size, count in sorted(items.items(), reverse=True):
        left = count
        for room in sorted(r for r in rooms if r + 1e-9 >= size):
            if left == 0:
                break
            per_bin = int((room + 1e-9) // size)
            n_bins = rooms[room]
            take = min(left, per_bin * n_bins)
            full, rest = divmod(take, per_bin)
            rooms[room] -= full + (1 if rest else 0)
            if rooms[room] == 0:
                del rooms[room]
            if full:
                rooms[round(room - per_bin * size, 9)] += full
            if rest:
                rooms[round(room - rest * size, 9)] += 1
            left -= take
        if left:
            return False
    return True


# 14: a static deployment keeps one set of replicas on held GPUs all day, the rest on demand
def check_static(instance: FleetInstance, solution: FleetSolution, fleet: _Fleet) -> list[Violation]:
    if not is_static(instance):
        return []
    nb = len(instance.buckets)
    shown: dict[str, tuple[Candidate, tuple[int, ...]]] = {
        p.id: (p.deployment, p.replicas) for p in solution.pools
    }
    for a in solution.assignments:
        shown.update((use.candidate.id, (use.candidate, use.replicas)) for use in a.uses if any(use.replicas))
    out = [
        Violation(ViolationKind.STATIC, key, "static replicas of a deployment the plan does not run")
        for key in solution.static_replicas
        if key not in shown
    ]
    static: dict[str, Counter[float]] = defaultdict(Counter)
    hourly: dict[str, list[Counter[float]]] = defaultdict(lambda: [Counter() for _ in range(nb)])
    for key, (c, replicas) in shown.items():
        fixed = solution.static_replicas.get(key, 0)
        if replicas and fixed > min(replicas):
            out.append(
                Violation(ViolationKind.STATIC, key, f"{fixed} static replicas, {min(replicas)} in some hour")
            )
        if c.guest or c.unit is not None:
            continue  # on a host's card (``check_shared_cards``); a unit: the same all day, packed by 2-3
        static[c.gpu][c.gpus_per_replica] += fixed
        for b, count in enumerate(replicas):
            hourly[c.gpu][b][c.gpus_per_replica] += max(0, count - fixed)
    for gpu in sorted(set(static) | set(hourly)):
        held = _option_domains(gpu, solution, fleet, None)
        if +static[gpu] and not _pack(+static[gpu], held):
            out.append(
                Violation(
                    ViolationKind.STATIC, gpu, f"static replicas {_sizes(static[gpu])} fit no held domains"
                )
            )
        for b in range(nb):
            items = +hourly[gpu][b]
            if items and not _pack(items, _option_domains(gpu, solution, fleet, b)):
                out.append(
                    Violation(
                        ViolationKind.STATIC,
                        f"{gpu}/bucket {b}",
                        f"replicas beyond the static ones {_sizes(items)} need GPUs rented on demand",
                    )
                )
    return out


def _option_domains(gpu: str, solution: FleetSolution, fleet: _Fleet, bucket: int | None) -> Counter[float]:
    """Scale-up domains of the plan's held ``gpu`` GPUs (``bucket`` None) or of its GPUs rented on
    demand in ``bucket``."""
    bins: Counter[float] = Counter()
    for c in solution.options:
        o = fleet.options.get(c.option_id)
        if c.gpu != gpu or o is None or (o.mode is AcquisitionMode.ON_DEMAND) is (bucket is None):
            continue
        count = c.gpus if bucket is None else c.on_demand_gpus[bucket]
        per_server = max(1, o.gpus_per_server)
        bins.update(_domains(count, per_server, max(1, min(o.scale_up_domain_size, per_server))))
    return bins
