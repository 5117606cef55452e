"""Independent evaluator: re-check a plan against every constraint, without the MIP's code.

Nothing here reuses the model builder: capacities are recomputed through ``capacity_of`` (in
production a fresh ``solver.perf.capacity_at_sla`` call per deployment), TP groups are packed
into concrete servers and NVLink/P2P domains (best-fit decreasing), caps are recomputed from the
option prices and the counts. ``solve`` never returns a plan with a violation.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from solver.domain import AcquisitionMode
from solver.optimizer.instance import Candidate, FleetInstance
from solver.optimizer.results import FleetSolution, Violation
from solver.units import DAYS_PER_MONTH

CapacityOf = Callable[[Candidate], float]
"""Request rate one replica of this deployment sustains at its workload's SLA (0 = infeasible)."""

REL_TOL = 1e-6


def _stated_capacity(candidate: Candidate) -> float:
    return candidate.capacity_req_s


def _domains(gpus: int, per_server: int, domain: int) -> list[float]:
    """Sizes of the scale-up domains ``gpus`` GPUs fill, servers filled one after another."""
    sizes: list[float] = []
    left = gpus
    while left > 0:
        in_server = min(per_server, left)
        left -= in_server
        while in_server > 0:
            part = min(domain, in_server)
            sizes.append(float(part))
            in_server -= part
    return sizes


def _pack(items: list[float], bins: list[float]) -> bool:
    """Can every item (GPUs of one replica) go inside one bin (a scale-up domain)?

    Largest items first, each into the fullest bins that still hold it (best fit), counted by
    size so that 10^5 replicas stay fast. Exact for power-of-two groups in power-of-two domains.
    """
    rooms: Counter[float] = Counter(bins)
    for size, count in sorted(Counter(items).items(), reverse=True):
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


def check_solution(
    instance: FleetInstance, solution: FleetSolution, capacity_of: CapacityOf | None = None
) -> list[Violation]:
    """Every violated constraint of ``solution`` (empty = the plan is valid)."""
    capacity = capacity_of or _stated_capacity
    out: list[Violation] = []
    nb = len(instance.buckets)
    hours = [b.hours_per_day for b in instance.buckets]
    options = {o.id: o for o in instance.options}
    demands = {w.name: w for w in instance.inference}

    # Demand at the SLA in every bucket, with N+R spares (capacities recomputed).
    used_by_gpu: dict[str, list[list[float]]] = defaultdict(lambda: [[] for _ in range(nb)])
    seen = set()
    for a in solution.assignments:
        w = demands.get(a.workload)
        if w is None:
            out.append(Violation("demand", a.workload, "assignment for an unknown workload"))
            continue
        seen.add(a.workload)
        caps = []
        for use in a.uses:
            cand = use.candidate
            if cand.workload != a.workload:
                out.append(
                    Violation("demand", a.workload, f"deployment {cand.id} belongs to {cand.workload}")
                )
            cap = capacity(cand)
            if cap <= 0:
                out.append(
                    Violation("capacity", cand.id, "deployment cannot meet the SLA (performance model)")
                )
            elif cap < cand.capacity_req_s * (1 - 1e-4):
                out.append(
                    Violation(
                        "capacity", cand.id, f"stated {cand.capacity_req_s:.6g} req/s, model gives {cap:.6g}"
                    )
                )
            caps.append(cap)
            for b in range(nb):
                used_by_gpu[cand.gpu][b].extend([cand.gpus_per_replica] * use.replicas[b])
        for b in range(nb):
            # Every hour of the bucket when the hourly rates are known (clustered buckets).
            hourly = w.hourly_rate_req_s
            lam = max(hourly[h] for h in instance.buckets[b].hours) if hourly else w.rate_req_s[b]
            if lam <= 0:
                continue
            total = sum(cap * use.replicas[b] for cap, use in zip(caps, a.uses, strict=True))
            spare = max(
                (cap for cap, use in zip(caps, a.uses, strict=True) if any(use.replicas)), default=0.0
            )
            need = lam + w.redundancy * spare
            if total < need * (1 - REL_TOL):
                out.append(
                    Violation(
                        "demand",
                        a.workload,
                        f"bucket {b}: capacity {total:.6g} req/s < needed {need:.6g} "
                        f"(demand {lam:.6g}, N+{w.redundancy})",
                    )
                )
    for w in instance.inference:
        if w.name not in seen and w.peak_req_s > 0:
            out.append(Violation("demand", w.name, "workload has no assignment"))

    # GPUs and TP domains: pack every replica's GPUs into concrete domains, per GPU type and bucket.
    held_by_gpu: dict[str, int] = defaultdict(int)
    for g in {o.gpu for o in instance.options} | set(used_by_gpu):
        for b in range(nb):
            bins: list[float] = []
            for c in solution.options:
                if c.gpu != g:
                    continue
                o = options[c.option_id]
                per_server = max(1, o.gpus_per_server)
                domain = max(1, min(o.scale_up_domain_size, per_server))
                count = c.on_demand_gpus[b] if o.mode is AcquisitionMode.ON_DEMAND else c.gpus
                bins.extend(_domains(count, per_server, domain))
            items = used_by_gpu[g][b] if g in used_by_gpu else []
            if items and not _pack(list(items), bins):
                out.append(
                    Violation(
                        "gpus",
                        f"{g}/bucket {b}",
                        f"replicas need {sum(items):g} GPUs in groups {sorted(set(items), reverse=True)}; "
                        f"domains available {sorted(bins, reverse=True)}",
                    )
                )
    for c in solution.options:
        if c.option_id not in options:
            out.append(Violation("count", c.option_id, "option not offered"))
            continue
        o = options[c.option_id]
        if o.mode is not AcquisitionMode.ON_DEMAND:
            held_by_gpu[o.gpu] += c.gpus
        if o.mode is AcquisitionMode.BUY or o.owned:
            k = max(1, o.gpus_per_server)
            if (o.server_must_be_full and c.gpus != k * c.servers) or c.gpus > k * c.servers:
                out.append(Violation("servers", c.option_id, f"{c.gpus} GPUs in {c.servers} servers of {k}"))

    # Caps, recomputed from option prices.
    capex = power = racks = monthly = 0.0
    for c in solution.options:
        priced = options.get(c.option_id)
        if priced is None:
            continue
        o = priced
        capex += o.capex_per_gpu * c.gpus + o.capex_per_server * c.servers
        monthly += o.fixed_monthly_per_gpu * c.gpus + o.fixed_monthly_per_server * c.servers
        monthly += o.busy_hourly_per_gpu * c.busy_gpu_hours_per_month
        if o.mode is AcquisitionMode.BUY or o.owned:
            power += o.power_kw_per_gpu * c.gpus + o.power_kw_per_server * c.servers
            racks += o.rack_units_per_server * c.servers
    lim = instance.caps
    for name, used, cap_value in (
        ("capex budget", capex, lim.capex_budget),
        ("monthly opex cap", monthly, lim.monthly_opex_cap),
        ("power cap kW", power, lim.power_cap_kw),
        ("rack units cap", racks, lim.rack_units_cap),
    ):
        if cap_value is not None and used > cap_value * (1 + REL_TOL) + 1e-9:
            out.append(Violation("cap", name, f"uses {used:.6g} > cap {cap_value:.6g}"))

    # Owned GPUs, count bounds, fixed fleets.
    for g, owned in instance.owned_counts.items():
        have = sum(c.gpus for c in solution.options if c.gpu == g and c.owned)
        if have != owned:
            out.append(Violation("count", g, f"{have} owned GPUs in the plan, {owned} owned"))
    for cl in instance.count_limits:
        held = held_by_gpu.get(cl.gpu, 0)
        if held < cl.min_count:
            out.append(Violation("count", cl.gpu, f"{held} GPUs < minimum {cl.min_count}"))
        if cl.max_count is not None:
            peak = max(
                (
                    held
                    + sum(
                        c.on_demand_gpus[b] for c in solution.options if c.gpu == cl.gpu and c.on_demand_gpus
                    )
                )
                for b in range(nb)
            )
            if peak > cl.max_count:
                out.append(Violation("count", cl.gpu, f"{peak} GPUs > maximum {cl.max_count}"))
    if instance.fixed_counts is not None:
        for c in solution.options:
            fixed = instance.fixed_counts.get(c.option_id, 0)
            if c.gpus > fixed or any(d > fixed for d in c.on_demand_gpus):
                out.append(Violation("count", c.option_id, f"plan uses more than the fleet's {fixed} GPUs"))

    # Training: a GPU type it fits on, enough GPUs for the deadline, GPU-hours in idle time.
    # Serving GPUs on held hardware in each bucket: what on-demand rentals do not carry.
    serving_hours: dict[str, float] = defaultdict(float)
    for g, per_b in used_by_gpu.items():
        for b in range(nb):
            rented = sum(c.on_demand_gpus[b] for c in solution.options if c.gpu == g and c.on_demand_gpus)
            serving_hours[g] += DAYS_PER_MONTH * hours[b] * max(0.0, sum(per_b[b]) - rented)
    train_need: dict[str, float] = defaultdict(float)
    allocs = {t.workload: t for t in solution.training}
    for t in instance.training:
        alloc = allocs.get(t.name)
        if alloc is None:
            out.append(Violation("training", t.name, "training workload has no allocation"))
            continue
        choice = next((ch for ch in t.choices if ch.gpu == alloc.gpu), None)
        if choice is None:
            out.append(Violation("training", t.name, f"{alloc.gpu} is not a GPU this training fits on"))
            continue
        has_od = any(o.gpu == alloc.gpu and o.mode is AcquisitionMode.ON_DEMAND for o in instance.options)
        if not has_od and held_by_gpu.get(alloc.gpu, 0) < choice.min_gpus:
            out.append(
                Violation(
                    "training",
                    t.name,
                    f"needs {choice.min_gpus} {alloc.gpu} at once for its deadline, fleet holds "
                    f"{held_by_gpu.get(alloc.gpu, 0)}",
                )
            )
        held_part = choice.gpu_hours_per_month - alloc.on_demand_gpu_hours_per_month
        if held_part > 1e-6:
            train_need[alloc.gpu] += held_part
    for g, need in train_need.items():
        idle = DAYS_PER_MONTH * 24 * held_by_gpu.get(g, 0) - serving_hours.get(g, 0.0)
        if need > idle * (1 + REL_TOL) + 1e-6:
            out.append(
                Violation("training", g, f"training needs {need:.6g} GPU-hours/month, idle {idle:.6g}")
            )
    return out
