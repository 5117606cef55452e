"""Exact reductions of the fleet MIP (the GPU bounds and R2, R3 of ``solver.optimizer.model``'s docstring)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from solver.domain import AcquisitionMode
from solver.optimizer.instance import Candidate, FleetInstance, is_on_site, is_rental_on_demand, tp_domain
from solver.units import DAYS_PER_MONTH

if TYPE_CHECKING:
    from solver.optimizer.model import Relaxation


def reserved_dominated_by_on_demand(instance: FleetInstance, relax: Relaxation) -> frozenset[str]:
    """Reserved options an on-demand option of the same GPU makes useless (exact).

    If renting on demand around the clock costs no more per GPU than the reservation's monthly fee
    (``busy_od · 24 · DAYS ≤ fix_gpu_res``) and the on-demand instance holds TP groups at least as
    large in instances whose size divides the reservation's, any plan reserving ``n`` GPUs can rent
    ``⌈u_b⌉ ≤ n`` (rounded up to whole instances) on demand in each bucket instead at
    no higher TCO, opex, GPU count or tie-break. Not applied when that exchange could break
    something else: a minimum count of the GPU (held GPUs only), training that may use the
    reservation's idle hours, fixed counts (EvaluateFleet), or a non-cost objective.
    """
    if instance.fixed_fleet is not None or relax.minimize is not None or relax.maximize_demand_scale:
        return frozenset()
    min_counted = {lim.gpu for lim in instance.count_limits if lim.min_count > 0}
    trained = {ch.gpu for t in instance.training for ch in t.choices}
    dropped = set()
    for o in instance.options:
        if (
            o.mode is not AcquisitionMode.RESERVED
            or o.owned
            or is_on_site(o)
            or o.capex_per_gpu > 0
            or o.capex_per_server > 0
            or o.fixed_monthly_per_server > 0
            or o.gpu in min_counted
            or o.gpu in trained
        ):
            continue
        if any(
            is_rental_on_demand(od)
            and od.gpu == o.gpu
            and tp_domain(od) >= tp_domain(o)
            and o.rental_instance_gpus % max(1, od.rental_instance_gpus) == 0
            and od.busy_hourly_per_gpu * 24 * DAYS_PER_MONTH <= o.fixed_monthly_per_gpu
            for od in instance.options
        ):
            dropped.add(o.id)
    return frozenset(dropped)


def small_server_limits(instance: FleetInstance) -> dict[str, int]:
    """Most servers of a bought option any plan needs when a bigger server of the same GPU is as
    good as several small ones (exact).

    Option B (``k_B = m · k_A`` slots, m ≥ 2) replaces m servers of option A when B costs no more
    per GPU (capex, residual-adjusted capex, monthly, busy, power) and no more than m A-servers
    per server (capex, residual-adjusted capex, monthly, power, rack units), and hosts TP groups
    at least as large. Then some optimal plan has at most m − 1 A-servers (more would be swapped),
    which removes the 4-vs-8-GPU-chassis symmetry. Not applied with fixed counts (EvaluateFleet), nor
    when either option pays a multi-node fabric: the swap can make B multi-node (its second server
    then networks the first too), which m A-servers' fabric need not cover.
    """
    if instance.fixed_fleet is not None:
        return {}
    # Leases are left out: their payments are in none of the compared prices.
    bought = [o for o in instance.options if o.mode is AcquisitionMode.BUY and not o.owned and not o.leased]
    limits: dict[str, int] = {}
    for a in bought:
        for b in bought:
            if b is a or b.gpu != a.gpu or a.gpus_per_server <= 0:
                continue
            m, rest = divmod(b.gpus_per_server, a.gpus_per_server)
            if m < 2 or rest or (b.server_must_be_full and not a.server_must_be_full):
                continue
            if a.network_capex_per_server > 0 or b.network_capex_per_server > 0:
                continue
            keep_a, keep_b = 1.0 - a.residual_fraction, 1.0 - b.residual_fraction
            per_gpu_ok = (
                b.installation_capex_per_gpu <= a.installation_capex_per_gpu
                and b.capex_per_gpu <= a.capex_per_gpu
                and b.capex_per_gpu * keep_b <= a.capex_per_gpu * keep_a
                and b.fixed_monthly_per_gpu <= a.fixed_monthly_per_gpu
                and b.busy_hourly_per_gpu <= a.busy_hourly_per_gpu
                and b.power_kw_per_gpu <= a.power_kw_per_gpu
            )
            per_server_ok = (
                b.installation_capex_per_server <= m * a.installation_capex_per_server
                and b.capex_per_server <= m * a.capex_per_server
                and b.capex_per_server * keep_b <= m * a.capex_per_server * keep_a
                and b.fixed_monthly_per_server <= m * a.fixed_monthly_per_server
                and b.power_kw_per_server <= m * a.power_kw_per_server
                and b.rack_units_per_server <= m * a.rack_units_per_server
            )
            if per_gpu_ok and per_server_ok and tp_domain(b) >= tp_domain(a):
                limits[a.id] = min(limits.get(a.id, m - 1), m - 1)
    return limits


def gpu_upper_bounds(instance: FleetInstance, cands: Sequence[Candidate]) -> dict[str, int]:
    """A safe upper bound on GPUs of each type any optimal plan could need."""
    need: dict[str, float] = defaultdict(float)
    by_w: dict[str, list[Candidate]] = defaultdict(list)
    for c in cands:
        by_w[c.workload].append(c)
    for w in instance.inference:
        for c in by_w.get(w.name, []):
            peak = w.peak_served_req_s * w.loads[c.load]
            replicas = math.ceil(peak / c.capacity_req_s * (1 + 1e-9)) + w.redundancy
            for g, gpus in c.gpus_by_type():
                need[g] += replicas * gpus
            need[c.gpu] += replicas if c.guest else 0  # a host card each (hosts may run for guests)
    for t in instance.training:
        for ch in t.choices:
            need[ch.gpu] += ch.min_gpus + ch.gpu_hours_per_month / (DAYS_PER_MONTH * 24)
    bounds: dict[str, int] = {}
    for g in instance.gpu_types():
        extra = max((lim.min_count for lim in instance.count_limits if lim.gpu == g), default=0)
        extra = max(extra, instance.owned_counts.get(g, 0))
        servers = max(
            (max(o.gpus_per_server, o.rental_instance_gpus) for o in instance.options if o.gpu == g),
            default=1,
        )
        bound = math.ceil(need.get(g, 0.0)) + extra + servers + 1
        for lim in instance.count_limits:
            if lim.gpu == g and lim.max_count is not None:
                bound = min(bound, lim.max_count)
        bounds[g] = max(bound, extra)
    if instance.fixed_fleet is not None:
        bounds = {g: instance.fixed_gpu_bound(g, bound) for g, bound in bounds.items()}
    return bounds
